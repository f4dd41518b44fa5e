r"""Reproduction of flipped-huber-mechanism Sec. V (Fig. 3a-c, Table II) and App. E-A (Fig. 6).

``dpjax reproduce flipped-huber --out DIR`` writes PNG figures and
``flipped-huber.md``, which puts the paper's printed numbers beside dpjax's
certified values (every calibrated parameter re-checked against its privacy
profile) and explains each discrepancy.  Everything runs on CPU in a few
minutes; :func:`run` with ``quick=True`` uses reduced grids (the test suite).

What is computed:

* **Fig. 3a** (Delta = 1, delta = 1e-6): least variance of Gaussian (exact,
  Balle-Wang), flipped Huber (exact 1-D, Theorem 3), truncated Laplace (exact
  1-D profile, least variance over the family; GDGK's closed form beside it)
  and OSGT (exact 1-D profile, App. F(c)) both on the paper's search domain
  ``(vartheta, rho) in [0.02, 150] x [0.02, 50]`` and unconstrained.
* **Table II** (K = 20, Delta_inf = 1, Delta_2 = sqrt(20), Delta_1 = 20):
  Laplace (pure DP, ``b = Delta_1 / epsilon``), staircase (independent per
  coordinate, ``decay = epsilon / K``, ``width = Delta_inf``), flipped Huber via
  Theorem 8 at delta = 1e-8 and, to identify the printed row, at delta = 1e-6.
* **Fig. 3b, 3c**: 10 log10 of the FH variance over the Laplace (exact 1-D
  (epsilon, delta)) and staircase (epsilon-DP, gamma*) variances on an
  (epsilon, delta) grid.
* **Fig. 6**: privacy profiles at equal variance 16 (Gaussian sigma = 4;
  OSGT and FH with scale 7 and the other parameter set for variance 16).
"""

from __future__ import annotations

import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import dpjax
from dpjax.accounting.osgt import delta_osgt
from dpjax.accounting.truncated_laplace import truncated_laplace_gdgk
from dpjax.calibration.laplace import scale_laplace_pure
from dpjax.calibration.osgt import _objective as _osgt_objective
from dpjax.calibration.osgt import osgt_least_variance
from dpjax.certificate import log_target
from dpjax.noise.osgt import osgt_unit_variance
from dpjax.noise.staircase import staircase_optimal_gamma, staircase_unit_variance
from dpjax.noise.truncated_laplace import TruncatedLaplace
from dpjax.reproduce._report import markdown_table, matches, new_figure, save_figure

DELTA_1D = 1e-6
PAPER_FIG3A = {
    "gaussian": {0.3: 168.80, 3.0: 2.38},
    "flipped-huber": {0.3: 22.21},
    "truncated-laplace": {0.3: 22.21},
    "osgt": {0.3: 108.94, 3.0: 1.54},
}
PAPER_BOX = ((0.02, 150.0), (0.02, 50.0))
K, TABLE_EPS, TABLE_DELTA = 20, (0.2, 0.4, 1.0, 2.2, 5.0), 1e-8
PAPER_TABLE_II = {
    "flipped-huber (sufficient)": (7237.09, 1971.36, 359.57, 87.09, 19.49),
    "laplace": (2e4, 5000.0, 800.0, 165.29, 32.0),
    "staircase (independent)": (19999.92, 4999.92, 799.92, 165.21, 31.92),
}


def fig3a(epsilons: np.ndarray) -> dict:
    """Least variances at Delta = 1, delta = 1e-6 for every 1-D mechanism of Fig. 3a."""
    out = {"epsilon": epsilons}
    for name in ("gaussian", "flipped-huber", "truncated-laplace"):
        cal = dpjax.calibrate(name, epsilon=epsilons, delta=DELTA_1D, linf=1.0)
        out[name] = cal
    with jax.enable_x64(True):
        free = osgt_least_variance(epsilons, DELTA_1D, 1.0)
        box = osgt_least_variance(epsilons, DELTA_1D, 1.0, *PAPER_BOX)
        lam, bound = truncated_laplace_gdgk(epsilons, DELTA_1D, 1.0)
        out["gdgk"] = np.asarray(TruncatedLaplace(lam, bound).variance)
    # the box may hold no private parameter at small eps (rho <= 50): infeasible, not uncertified
    if not (np.all(free.certified) and np.all(box.certified | ~box.feasible)):
        raise dpjax.errors.CertificationError("osgt: a reproduction calibration was not certified")
    out["osgt"], out["osgt-box"] = free, box
    out["laplace"] = 2.0 / (epsilons - 2.0 * np.log1p(-DELTA_1D)) ** 2
    return out


def osgt_shape_curve(epsilon: float, log_k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least OSGT variance at each fixed shape ``k = vartheta / rho`` (and its rho)."""
    box = tuple(jnp.asarray(x) for x in (0.0, np.inf, 0.0, np.inf))
    with jax.enable_x64(True):
        fn = jax.jit(
            jax.vmap(lambda lk: _osgt_objective(lk, epsilon, log_target(DELTA_1D), 1.0, box, 80))
        )
        var, rho = fn(jnp.asarray(log_k))
    return np.asarray(var), np.asarray(rho)


def table_ii() -> dict:
    eps = np.asarray(TABLE_EPS)
    kw = dict(dim=K, linf=1.0, l2=float(np.sqrt(K)), l1=float(K))
    with jax.enable_x64(True):
        lap = 2.0 * np.asarray(scale_laplace_pure(eps, float(K))) ** 2
    stair = dpjax.calibrate("staircase", epsilon=eps, delta=TABLE_DELTA, **kw)
    fh8 = dpjax.calibrate(
        "flipped-huber", epsilon=eps, delta=TABLE_DELTA, condition="sufficient", **kw
    )
    fh6 = dpjax.calibrate("flipped-huber", epsilon=eps, delta=1e-6, condition="sufficient", **kw)
    gauss8 = dpjax.calibrate("gaussian", epsilon=eps, delta=TABLE_DELTA, **kw)
    # the per-coordinate eps-DP staircase of width Delta_1 (not private in 20 dims: K eps)
    with jax.enable_x64(True):
        wide = K**2 * np.asarray(staircase_unit_variance(eps, staircase_optimal_gamma(eps)))
    return {
        "epsilon": eps,
        "laplace": lap,
        "staircase": stair,
        "fh8": fh8,
        "fh6": fh6,
        "gauss8": gauss8,
        "staircase_width_l1": wide,
    }


def heatmaps(epsilons: np.ndarray, deltas: np.ndarray) -> dict:
    e, d = np.meshgrid(epsilons, deltas)
    fh = dpjax.calibrate("flipped-huber", epsilon=e.ravel(), delta=d.ravel(), linf=1.0)
    v_fh = np.asarray(fh.variance).reshape(e.shape)
    v_lap = 2.0 / (e - 2.0 * np.log1p(-d)) ** 2
    with jax.enable_x64(True):
        v_st = np.asarray(staircase_unit_variance(e, staircase_optimal_gamma(e)))
    return {
        "epsilon": epsilons,
        "delta": deltas,
        "fh": v_fh,
        "db_laplace": 10 * np.log10(v_fh / v_lap),
        "db_staircase": 10 * np.log10(v_fh / v_st),
    }


def _bisect_increasing(f, lo, hi, target, iters=200):
    """x in [lo, hi] with f(x) = target for increasing f (plain float bisection)."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return 0.5 * (lo + hi)


def fig6(epsilons: np.ndarray) -> dict:
    """Profiles at variance 16, Delta = 1 (App. E-A): Gaussian sigma 4; OSGT, FH with scale 7."""
    from dpjax.noise.flipped_huber import standard_variance

    with jax.enable_x64(True):
        target = 16.0 / 49.0
        v_osgt, v_fh = jax.jit(osgt_unit_variance), jax.jit(standard_variance)
        k = _bisect_increasing(lambda x: -float(v_osgt(x)), 0.0, 50.0, -target, iters=100)
        b = _bisect_increasing(lambda x: -float(v_fh(x)), 0.0, 50.0, -target, iters=100)
        osgt = np.asarray(jax.jit(delta_osgt)(epsilons, 7.0 * k, 7.0, 1.0))
    gauss = np.asarray(dpjax.profile("gaussian", {"sigma": 4.0}, epsilons, l2=1.0))
    fh = np.asarray(dpjax.profile("flipped-huber", {"alpha": 7.0 * b, "gamma": 7.0}, epsilons))
    return {
        "epsilon": epsilons,
        "gaussian": gauss,
        "osgt": osgt,
        "fh": fh,
        "vartheta": 7 * k,
        "alpha": 7 * b,
    }


def _fig6_summary(prof: dict) -> str:
    """Where each mechanism has the least delta on the plotted eps grid (data, not a claim)."""
    e = prof["epsilon"]
    osgt_below = e[prof["osgt"] < prof["fh"]]
    fh_best = np.all(
        (prof["fh"] <= prof["gaussian"]) | (e < (osgt_below.max() if osgt_below.size else 0))
    )
    if osgt_below.size:
        part = (
            f"OSGT has a smaller delta than FH for eps <= {osgt_below.max():.3g} on this grid "
            f"(the paper: 'OSGT offers smaller delta for very small eps'); FH is below OSGT beyond"
        )
    else:
        part = "FH is below OSGT at every plotted eps"
    gauss = (
        "and below the Gaussian everywhere" if fh_best else "but not everywhere below the Gaussian"
    )
    return part + f", {gauss}."


def _f(x, digits=2):
    return f"{float(x):.{digits}f}"


def run(out_dir: Path, quick: bool = False) -> Path:
    """Write the figures and ``flipped-huber.md`` into ``out_dir``; return the report path."""
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    eps_a = (
        np.array([0.3, 3.0]) if quick else np.unique(np.r_[np.geomspace(0.05, 5.0, 14), 0.3, 3.0])
    )
    a = fig3a(eps_a)
    i03, i3 = int(np.argmin(abs(eps_a - 0.3))), int(np.argmin(abs(eps_a - 3.0)))
    log_k = np.linspace(np.log(1e-3), np.log(1e4), 25 if quick else 121)
    curves = {e: osgt_shape_curve(e, log_k) for e in (0.3, 3.0)}
    tab = table_ii()
    eps_h = np.geomspace(0.05, 10.0, 3 if quick else 12)
    del_h = np.geomspace(1e-12, 1e-2, 2 if quick else 6)
    h = heatmaps(eps_h, del_h)
    prof = fig6(np.linspace(0.0, 3.0, 31 if quick else 121))

    # ---- Fig. 3a table
    rows = []

    def var_of(name, i):
        obj = a[name]
        return float(np.asarray(obj.variance)[i])

    def dat_of(name, i):
        return float(np.asarray(a[name].delta_at_params)[i])

    for name in ("gaussian", "flipped-huber", "truncated-laplace"):
        for e, i in ((0.3, i03), (3.0, i3)):
            printed = PAPER_FIG3A[name].get(e)
            v = var_of(name, i)
            rows.append(
                [
                    name,
                    e,
                    "-" if printed is None else _f(printed),
                    f"{v:.6g}",
                    f"{dat_of(name, i):.3g}",
                    "-" if printed is None else matches(printed, v, 2),
                ]
            )
    for e, i in ((0.3, i03), (3.0, i3)):
        for label, key in (("osgt, paper's domain", "osgt-box"), ("osgt, unconstrained", "osgt")):
            rows.append(
                [
                    label,
                    e,
                    _f(PAPER_FIG3A["osgt"][e]),
                    f"{float(a[key].variance[i]):.6g}",
                    f"{float(a[key].delta_at_params[i]):.3g}",
                    matches(PAPER_FIG3A["osgt"][e], float(a[key].variance[i]), 2),
                ]
            )
    fh03, fh3 = var_of("flipped-huber", i03), var_of("flipped-huber", i3)
    tl03, tl3 = var_of("truncated-laplace", i03), var_of("truncated-laplace", i3)
    g03, g3 = var_of("gaussian", i03), var_of("gaussian", i3)
    box, free = a["osgt-box"], a["osgt"]

    # where the paper's OSGT numbers sit on the least-variance-vs-shape curve
    k_grid = np.exp(log_k)
    k_at_paper = {}
    for e, printed in PAPER_FIG3A["osgt"].items():
        var_k = curves[e][0]
        j = int(np.argmax(var_k <= printed))  # first shape whose least variance is below the print
        if 0 < j and var_k[j] <= printed <= var_k[j - 1]:
            w = (np.log(var_k[j - 1]) - np.log(printed)) / (np.log(var_k[j - 1]) - np.log(var_k[j]))
            k_at_paper[e] = float(np.exp(log_k[j - 1] + w * (log_k[j] - log_k[j - 1])))

    # ---- figures
    fig, ax = new_figure(figsize=(6, 4))
    ax.loglog(eps_a, a["gaussian"].variance, "o-", label="Gaussian")
    ax.loglog(eps_a, a["flipped-huber"].variance, "s-", label="flipped Huber (exact 1-D)")
    ax.loglog(eps_a, a["truncated-laplace"].variance, "x--", label="truncated Laplace")
    ax.loglog(
        eps_a, np.where(box.feasible, box.variance, np.nan), "^-", label="OSGT, paper's domain"
    )
    ax.loglog(eps_a, free.variance, "v:", label="OSGT, unconstrained")
    ax.loglog([0.3, 3.0], [108.94, 1.54], "k*", ms=10, label="OSGT as printed")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("least variance")
    ax.set_title("Fig. 3a: Delta = 1, delta = 1e-6")
    ax.legend(fontsize=7)
    save_figure(fig, out_dir / "fig3a_variance.png")

    fig, ax = new_figure(figsize=(6, 4))
    for e, (var_k, _) in curves.items():
        ax.loglog(k_grid, var_k, label=f"epsilon = {e}")
        ax.axhline(PAPER_FIG3A["osgt"][e], ls=":", color="gray")
    ax.set_xlabel("shape k = vartheta / rho")
    ax.set_ylabel("least OSGT variance at that shape")
    ax.set_title("OSGT: least variance per shape (dotted: paper's prints)")
    ax.legend(fontsize=8)
    save_figure(fig, out_dir / "osgt_variance_by_shape.png")

    for key, title, fname in (
        ("db_laplace", "Fig. 3b: 10 log10(var FH / var Laplace) [dB]", "fig3b_fh_vs_laplace.png"),
        (
            "db_staircase",
            "Fig. 3c: 10 log10(var FH / var staircase) [dB]",
            "fig3c_fh_vs_staircase.png",
        ),
    ):
        fig, ax = new_figure(figsize=(6, 4))
        mesh = ax.pcolormesh(eps_h, del_h, h[key], shading="nearest", cmap="viridis")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("delta")
        ax.set_title(title, fontsize=9)
        fig.colorbar(mesh, ax=ax)
        save_figure(fig, out_dir / fname)

    fig, ax = new_figure(figsize=(6, 4))
    ax.semilogy(prof["epsilon"], prof["gaussian"], label="Gaussian sigma = 4")
    ax.semilogy(
        prof["epsilon"], prof["osgt"], label=f"OSGT rho = 7, vartheta = {prof['vartheta']:.3f}"
    )
    ax.semilogy(
        prof["epsilon"], prof["fh"], label=f"flipped Huber gamma = 7, alpha = {prof['alpha']:.3f}"
    )
    ax.set_xlabel("epsilon")
    ax.set_ylabel("delta(epsilon)")
    ax.set_title("Fig. 6: privacy profiles at variance 16, Delta = 1")
    ax.legend(fontsize=8)
    save_figure(fig, out_dir / "fig6_profiles.png")

    # ---- Table II
    eps_t = tab["epsilon"]
    t_rows = [
        [
            "flipped Huber (Thm 8), paper",
            *[_f(x) for x in PAPER_TABLE_II["flipped-huber (sufficient)"]],
        ],
        ["flipped Huber (Thm 8), dpjax delta = 1e-8", *[_f(x) for x in tab["fh8"].variance]],
        ["  alpha at the optimum", *[f"{x:.3g}" for x in tab["fh8"].params["alpha"]]],
        ["Gaussian (exact, l2 = sqrt(20)), delta = 1e-8", *[_f(x) for x in tab["gauss8"].variance]],
        ["flipped Huber (Thm 8), dpjax delta = 1e-6", *[_f(x) for x in tab["fh6"].variance]],
        ["Laplace, paper", *[_f(x) for x in PAPER_TABLE_II["laplace"]]],
        ["Laplace (pure DP, b = Delta_1 / eps), dpjax", *[_f(x) for x in tab["laplace"]]],
        [
            "staircase (independent), paper",
            *[_f(x) for x in PAPER_TABLE_II["staircase (independent)"]],
        ],
        [
            "staircase, dpjax (decay = eps/K, width = Delta_inf)",
            *[_f(x) for x in tab["staircase"].variance],
        ],
        [
            "staircase, width Delta_1 and decay eps per coordinate",
            *[_f(x) for x in tab["staircase_width_l1"]],
        ],
    ]
    lap_match = all(
        matches(p, v, 2) == "yes"
        for p, v in zip(PAPER_TABLE_II["laplace"], tab["laplace"], strict=True)
    )
    st_match = all(
        matches(p, v, 2) == "yes"
        for p, v in zip(
            PAPER_TABLE_II["staircase (independent)"], tab["staircase"].variance, strict=True
        )
    )
    fh_paper = np.asarray(PAPER_TABLE_II["flipped-huber (sufficient)"])
    rel6 = fh_paper / np.asarray(tab["fh6"].variance) - 1

    # ---- report
    md = ["# flipped-huber-mechanism, Sec. V and App. E-A, reproduced by dpjax\n"]
    md.append(
        "Every dpjax value below is a *certified* least variance: the parameters were re-checked "
        "against the mechanism's privacy profile (exact 1-D profiles; Theorem 8 for K dims) and "
        "`delta_at_params <= delta`. Grids are "
        + ("reduced (quick mode)." if quick else "full.")
        + "\n"
    )
    md.append("## Fig. 3a: least variance, Delta = 1, delta = 1e-6\n")
    md.append(
        markdown_table(
            ["mechanism", "epsilon", "paper", "dpjax", "delta_at_params", "matches (2 dp)"], rows
        )
    )
    md.append(
        "\n* Gaussian reproduces (168.80, 2.38). Flipped Huber reproduces 22.21 at eps = 0.3; at "
        "eps = 3 "
        f"it is {fh3:.4f}, i.e. {fh03 / fh3:.1f}x below its eps = 0.3 value (paper: 'decrease by "
        "100 "
        f"times'); Gaussian falls {g03 / g3:.1f}x (paper: 'roughly 71-fold').\n"
        "* Truncated Laplace: dpjax minimises the variance over the whole family (shape A/lambda "
        "by a "
        f"zooming grid, scale by bisection) and finds {tl03:.6g} at eps = 0.3 and {tl3:.6g} at "
        "eps = 3; "
        f"GDGK's closed form (lambda = 1/eps, A = lambda log(1 + (e^eps - 1)/(2 delta))) gives "
        f"{a['gdgk'][i03]:.6g} and {a['gdgk'][i3]:.6g} and sits exactly on delta(eps) = delta "
        "(dpjax's "
        "answer carries the certification margin, hence a relative excess of order 1e-10). In the "
        "high-privacy regime the two agree; at large eps and delta the family search can beat "
        "GDGK's "
        "parameters slightly (GDGK's optimality is asymptotic).\n"
        "* **OSGT does not reproduce.** The paper prints 108.94 (eps = 0.3) and 1.54 (eps = 3). "
        "With the "
        f"exact 1-D profile of App. F(c), the least OSGT variance on the paper's own search domain "
        f"(vartheta, rho) in [0.02, 150] x [0.02, 50] is {box.variance[i03]:.6g} at eps = 0.3 "
        f"(vartheta = {box.vartheta[i03]:.4g}, rho = {box.rho[i03]:.4g}: the vartheta = 150 edge "
        "binds) and "
        f"{box.variance[i3]:.6g} at eps = 3 (vartheta = {box.vartheta[i3]:.4g}, rho = "
        f"{box.rho[i3]:.4g}). "
        f"Unconstrained, the least variance is {free.variance[i03]:.6g} at eps = 0.3 (shape "
        f"vartheta/rho = {free.vartheta[i03] / free.rho[i03]:.4g}) and {free.variance[i3]:.6g} at "
        "eps = 3; "
        "as vartheta/rho grows OSGT tends to a Laplace law of scale rho^2/vartheta, so the "
        "infimum is at "
        f"most the 1-D (eps, delta) Laplace variance ({a['laplace'][i03]:.6g}, "
        f"{a['laplace'][i3]:.6g}); "
        "dpjax's unconstrained optimum differs from that Laplace value by "
        f"{free.variance[i03] / a['laplace'][i03] - 1:+.1e} (eps = 0.3) and "
        f"{free.variance[i3] / a['laplace'][i3] - 1:+.1e} (eps = 3) relative, i.e. the OSGT "
        "infimum is the Laplace optimum up to a hair, far below the prints.\n"
        "* What the printed OSGT values correspond to: on the curve of least variance per fixed "
        "shape "
        "k = vartheta/rho (`osgt_variance_by_shape.png`) the printed values are met at "
        + ", ".join(f"k = {k_at_paper[e]:.3g} (eps = {e})" for e in sorted(k_at_paper))
        + f"; equivalently both prints are ~0.645 x the Gaussian variance "
        f"(108.94/168.80 = {108.94 / 168.80:.4f}, 1.54/2.38 = {1.54 / 2.38:.4f}). The paper's "
        "search "
        "evidently never reached offsets vartheta/rho above ~0.7, although its stated domain "
        "allows "
        "vartheta/rho up to 7500; we could not identify the cause (a coarse or differently "
        "parametrised "
        "grid, or numerical failure of Q(vartheta/rho) at large offsets, would all produce it). "
        "Either "
        "way, OSGT is not worse than flipped Huber by the margin Fig. 3a shows: in 1-D both "
        "approach the "
        "truncated-Laplace / Laplace optimum.\n"
    )
    if not np.all(box.feasible):
        md.append(
            "* On the paper's domain no OSGT parameter is private at eps = "
            + ", ".join(f"{e:.3g}" for e in eps_a[~box.feasible])
            + " (rho <= 50 is too small there); those points are missing from the OSGT-domain "
            "curve.\n"
        )
    md.append("\n![Fig. 3a](fig3a_variance.png)\n\n![OSGT by shape](osgt_variance_by_shape.png)\n")
    md.append("\n## Table II: K = 20, Delta_inf = 1, Delta_2 = sqrt(20), Delta_1 = 20\n")
    md.append(markdown_table(["row", *[f"eps = {e:g}" for e in eps_t]], t_rows))
    md.append(
        f"\n* Laplace reproduces as printed ({'yes' if lap_match else 'NO'}): pure epsilon-DP "
        "with the l1 "
        "budget, b = Delta_1 / eps, variance 2 b^2 (delta is not used). dpjax's "
        "`calibrate('laplace', "
        "dim=20, ...)` can do better at delta = 1e-8 by accounting the 20-fold composition exactly "
        "(PLD engine); that is a different, tighter calibration and not what Table II prints.\n"
        f"* Staircase reproduces as printed ({'yes' if st_match else 'NO'}) with **the same budget "
        "convention as Laplace**: every coordinate gets eps_i = eps Delta_inf / Delta_1 = eps / K "
        "with "
        "step width Delta_inf = 1 and GV's variance-optimal gamma*; the whole is eps-DP by "
        "composition. "
        "The variance is then 2K^2/eps^2 - 1/12 + O(eps^2), which is why the printed row is "
        "Laplace "
        "minus 0.08. Giving each coordinate an eps-DP staircase of width Delta_1 (last row) does "
        "not "
        "match (and would only be K eps-DP).\n"
        "* **Flipped Huber (Theorem 8) does not reproduce at delta = 1e-8.** dpjax's certified "
        "Theorem-8 "
        "optimum at delta = 1e-8 is the first dpjax row; its alpha is 0 (or negligible) at every "
        "eps, "
        "i.e. the sufficient condition is best met by the Gaussian member of the family (at alpha "
        "= 0, "
        "theta = 0 and Theorem 8 is exactly the Gaussian condition with Delta_2), so the values "
        "equal "
        "the exact Gaussian mechanism with l2 = sqrt(20). An independent re-implementation of "
        "Theorem 8 "
        "(SciPy, shape grid plus bisection on gamma) gives the same numbers. The printed row "
        "matches "
        "the Theorem-8 optimum at **delta = 1e-6** (the 1-D setting's delta) instead: printed / "
        "dpjax "
        "at delta = 1e-6 - 1 = "
        + ", ".join(f"{100 * r:+.2f}%" for r in rel6)
        + ", always slightly above the optimum, as a coarse grid search lands. (The optimal gamma "
        "at "
        "eps = 0.2 and delta = 1e-6 is ~85, outside the paper's 1-D grid gamma <= 50, so a wider "
        "grid "
        "must have been used.) Even at delta = 1e-8 flipped Huber (= Gaussian here) beats Laplace "
        "and "
        "staircase in 20 dimensions, so the paper's qualitative claim stands.\n"
    )
    md.append("\n## Fig. 3b and 3c: FH variance over Laplace / staircase, in dB\n")
    md.append(
        "Laplace: exact 1-D (eps, delta) scale Delta/(eps - 2 log(1 - delta)); staircase: eps-DP, "
        "gamma* "
        "(delta not used, as in the paper's footnote 5); FH: exact 1-D calibration.\n\n"
    )
    db_rows = [
        [f"{d:.0e}", *[f"{x:+.2f}" for x in row]]
        for d, row in zip(del_h, h["db_laplace"], strict=True)
    ]
    md.append("FH / Laplace [dB] (rows delta, columns eps):\n\n")
    md.append(markdown_table(["delta \\ eps", *[f"{e:.3g}" for e in eps_h]], db_rows))
    db_rows = [
        [f"{d:.0e}", *[f"{x:+.2f}" for x in row]]
        for d, row in zip(del_h, h["db_staircase"], strict=True)
    ]
    md.append("\nFH / staircase [dB]:\n\n")
    md.append(markdown_table(["delta \\ eps", *[f"{e:.3g}" for e in eps_h]], db_rows))
    md.append(
        "\nAs in the paper: FH matches Laplace (0 dB) except for small eps with delta > 0, where "
        "FH is "
        f"better (min {h['db_laplace'].min():+.2f} dB, max {h['db_laplace'].max():+.2f} dB over "
        "the grid), "
        f"and FH is worse than the staircase at large eps (max {h['db_staircase'].max():+.2f} "
        "dB).\n"
        "\n![Fig. 3b](fig3b_fh_vs_laplace.png)\n\n![Fig. 3c](fig3c_fh_vs_staircase.png)\n"
    )
    md.append("\n## Fig. 6: privacy profiles at variance 16\n")
    j1 = int(np.argmin(abs(prof["epsilon"] - 1.0)))
    md.append(
        f"Gaussian sigma = 4; OSGT rho = 7, vartheta = {prof['vartheta']:.4f}; FH gamma = 7, "
        f"alpha = {prof['alpha']:.4f} (each of variance 16). At eps = 1: Gaussian "
        f"{prof['gaussian'][j1]:.3g}, OSGT {prof['osgt'][j1]:.3g}, FH {prof['fh'][j1]:.3g}. "
        + _fig6_summary(prof)
        + "\n"
        "\n![Fig. 6](fig6_profiles.png)\n"
    )
    md.append(f"\n_Generated in {time.perf_counter() - t0:.0f} s._\n")
    report = out_dir / "flipped-huber.md"
    report.write_text("".join(md))
    return report
