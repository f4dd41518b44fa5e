r"""Reproduction of flipped-huber-mechanism Sec. V (Fig. 3a-c, Table II) and App. E-A (Fig. 6).

``dpjax reproduce flipped-huber --out DIR`` writes PNG figures and
``flipped-huber.md``, which puts the paper's printed numbers beside dpjax's
certified values (every calibrated parameter re-checked against its privacy
profile) and explains each discrepancy; :func:`run` with ``quick=True`` uses
reduced grids (the test suite).  The numbers come from
:mod:`dpjax.reproduce.flipped_huber_data` (what is computed, and from which
equation); this module plots them and writes the report, one section per figure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpjax import _progress
from dpjax.reproduce._report import markdown_table, matches, new_figure, save_figure
from dpjax.reproduce.flipped_huber_data import (
    PAPER_FIG3A,
    PAPER_TABLE_II,
    fig3a,
    fig6,
    heatmaps,
    osgt_shape_curve,
    table_ii,
)


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


def _fig3a_rows(a: dict, i03: int, i3: int) -> list:
    """The rows of the Fig. 3a table: paper, dpjax, certificate, match, at eps = 0.3 and 3."""
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
    return rows


def _k_at_paper(curves: dict, log_k: np.ndarray) -> dict:
    """Where the paper's OSGT numbers sit on the least-variance-vs-shape curve: the shape
    ``k`` (log-interpolated) at which each printed value is met."""
    k_at_paper = {}
    for e, printed in PAPER_FIG3A["osgt"].items():
        var_k = curves[e][0]
        j = int(np.argmax(var_k <= printed))  # first shape whose least variance is below the print
        if 0 < j and var_k[j] <= printed <= var_k[j - 1]:
            w = (np.log(var_k[j - 1]) - np.log(printed)) / (np.log(var_k[j - 1]) - np.log(var_k[j]))
            k_at_paper[e] = float(np.exp(log_k[j - 1] + w * (log_k[j] - log_k[j - 1])))
    return k_at_paper


def _plot(out_dir: Path, a: dict, eps_a, curves: dict, log_k, h: dict, eps_h, del_h,
          prof: dict) -> None:
    """Write the PNG figures (Fig. 3a, OSGT by shape, Fig. 3b/3c, Fig. 6) into ``out_dir``."""
    box, free = a["osgt-box"], a["osgt"]
    k_grid = np.exp(log_k)
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


def _fig3a_section(a: dict, eps_a, i03: int, i3: int, k_at_paper: dict, quick: bool) -> list:
    """The report's header and Fig. 3a section (markdown pieces)."""
    rows = _fig3a_rows(a, i03, i3)

    def var_of(name, i):
        return float(np.asarray(a[name].variance)[i])

    fh03, fh3 = var_of("flipped-huber", i03), var_of("flipped-huber", i3)
    tl03, tl3 = var_of("truncated-laplace", i03), var_of("truncated-laplace", i3)
    g03, g3 = var_of("gaussian", i03), var_of("gaussian", i3)
    box, free = a["osgt-box"], a["osgt"]
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
        f"eps = 3 it is {fh3:.4f}, i.e. {fh03 / fh3:.1f}x below its eps = 0.3 value (paper: "
        f"'decrease by 100 times'); Gaussian falls {g03 / g3:.1f}x (paper: 'roughly "
        "71-fold').\n"
        "* Truncated Laplace: dpjax minimises the variance over the whole family (shape A/lambda "
        f"by a zooming grid, scale by bisection) and finds {tl03:.6g} at eps = 0.3 and {tl3:.6g} "
        "at eps = 3; GDGK's closed form (lambda = 1/eps, A = lambda log(1 + (e^eps - 1)/(2 "
        f"delta))) gives {a['gdgk'][i03]:.6g} and {a['gdgk'][i3]:.6g} and sits exactly on "
        "delta(eps) = delta (dpjax's answer carries the certification margin, hence a relative "
        "excess of order 1e-10). In the high-privacy regime the two agree; at large eps and "
        "delta the family search can beat GDGK's parameters slightly (GDGK's optimality is "
        "asymptotic).\n"
        "* **OSGT does not reproduce.** The paper prints 108.94 (eps = 0.3) and 1.54 (eps = 3). "
        "With the exact 1-D profile of App. F(c), the least OSGT variance on the paper's own "
        "search domain (vartheta, rho) in [0.02, 150] x [0.02, 50] is "
        f"{box.variance[i03]:.6g} at eps = 0.3 (vartheta = {box.vartheta[i03]:.4g}, rho = "
        f"{box.rho[i03]:.4g}: the vartheta = 150 edge binds) and {box.variance[i3]:.6g} at "
        f"eps = 3 (vartheta = {box.vartheta[i3]:.4g}, rho = {box.rho[i3]:.4g}). Unconstrained, "
        f"the least variance is {free.variance[i03]:.6g} at eps = 0.3 (shape vartheta/rho = "
        f"{free.vartheta[i03] / free.rho[i03]:.4g}) and {free.variance[i3]:.6g} at eps = 3; as "
        "vartheta/rho grows OSGT tends to a Laplace law of scale rho^2/vartheta, so the infimum "
        "is at most the 1-D (eps, delta) Laplace variance "
        f"({a['laplace'][i03]:.6g}, {a['laplace'][i3]:.6g}); dpjax's unconstrained optimum "
        "differs from that Laplace value by "
        f"{free.variance[i03] / a['laplace'][i03] - 1:+.1e} (eps = 0.3) and "
        f"{free.variance[i3] / a['laplace'][i3] - 1:+.1e} (eps = 3) relative, i.e. the OSGT "
        "infimum is the Laplace optimum up to a hair, far below the prints.\n"
        "* What the printed OSGT values correspond to: on the curve of least variance per fixed "
        "shape k = vartheta/rho (`osgt_variance_by_shape.png`) the printed values are met at "
        + ", ".join(f"k = {k_at_paper[e]:.3g} (eps = {e})" for e in sorted(k_at_paper))
        + "; equivalently both prints are ~0.645 x the Gaussian variance "
        f"(108.94/168.80 = {108.94 / 168.80:.4f}, 1.54/2.38 = {1.54 / 2.38:.4f}). The paper's "
        "search evidently never reached offsets vartheta/rho above ~0.7, although its stated "
        "domain allows vartheta/rho up to 7500; we could not identify the cause (a coarse or "
        "differently parametrised grid, or numerical failure of Q(vartheta/rho) at large "
        "offsets, would all produce it). Either way, OSGT is not worse than flipped Huber by the "
        "margin Fig. 3a shows: in 1-D both approach the truncated-Laplace / Laplace optimum.\n"
    )
    if not np.all(box.feasible):
        md.append(
            "* On the paper's domain no OSGT parameter is private at eps = "
            + ", ".join(f"{e:.3g}" for e in eps_a[~box.feasible])
            + " (rho <= 50 is too small there); those points are missing from the OSGT-domain "
            "curve.\n"
        )
    md.append("\n![Fig. 3a](fig3a_variance.png)\n\n![OSGT by shape](osgt_variance_by_shape.png)\n")
    return md


def _table_ii_rows(tab: dict) -> list:
    """The rows of the Table II table: the paper's and dpjax's per-coordinate variances."""
    paper = {k: [_f(x) for x in v] for k, v in PAPER_TABLE_II.items()}
    return [
        ["flipped Huber (Thm 8), paper", *paper["flipped-huber (sufficient)"]],
        ["flipped Huber (Thm 8), dpjax delta = 1e-8", *[_f(x) for x in tab["fh8"].variance]],
        ["  alpha at the optimum", *[f"{x:.3g}" for x in tab["fh8"].params["alpha"]]],
        ["Gaussian (exact, l2 = sqrt(20)), delta = 1e-8", *[_f(x) for x in tab["gauss8"].variance]],
        ["flipped Huber (Thm 8), dpjax delta = 1e-6", *[_f(x) for x in tab["fh6"].variance]],
        ["Laplace, paper", *paper["laplace"]],
        ["Laplace (pure DP, b = Delta_1 / eps), dpjax", *[_f(x) for x in tab["laplace"]]],
        ["staircase (independent), paper", *paper["staircase (independent)"]],
        [
            "staircase, dpjax (decay = eps/K, width = Delta_inf)",
            *[_f(x) for x in tab["staircase"].variance],
        ],
        [
            "staircase, width Delta_1 and decay eps per coordinate",
            *[_f(x) for x in tab["staircase_width_l1"]],
        ],
    ]


def _table_ii_section(tab: dict) -> list:
    """The report's Table II section (markdown pieces)."""

    def reproduces(printed, got):
        return all(matches(p, v, 2) == "yes" for p, v in zip(printed, got, strict=True))

    lap_match = reproduces(PAPER_TABLE_II["laplace"], tab["laplace"])
    st_match = reproduces(PAPER_TABLE_II["staircase (independent)"], tab["staircase"].variance)
    fh_paper = np.asarray(PAPER_TABLE_II["flipped-huber (sufficient)"])
    rel6 = fh_paper / np.asarray(tab["fh6"].variance) - 1
    md = ["\n## Table II: K = 20, Delta_inf = 1, Delta_2 = sqrt(20), Delta_1 = 20\n"]
    header = ["row", *[f"eps = {e:g}" for e in tab["epsilon"]]]
    md.append(markdown_table(header, _table_ii_rows(tab)))
    md.append(
        f"\n* Laplace reproduces as printed ({'yes' if lap_match else 'NO'}): pure epsilon-DP "
        "with the l1 budget, b = Delta_1 / eps, variance 2 b^2 (delta is not used). dpjax's "
        "`calibrate('laplace', dim=20, ...)` can do better at delta = 1e-8 by accounting the "
        "20-fold composition exactly (PLD engine); that is a different, tighter calibration and "
        "not what Table II prints.\n"
        f"* Staircase reproduces as printed ({'yes' if st_match else 'NO'}) with **the same budget "
        "convention as Laplace**: every coordinate gets eps_i = eps Delta_inf / Delta_1 = eps / K "
        "with step width Delta_inf = 1 and GV's variance-optimal gamma*; the whole is eps-DP by "
        "composition. The variance is then 2K^2/eps^2 - 1/12 + O(eps^2), which is why the "
        "printed row is Laplace minus 0.08. Giving each coordinate an eps-DP staircase of width "
        "Delta_1 (last row) does not match (and would only be K eps-DP).\n"
        "* **Flipped Huber (Theorem 8) does not reproduce at delta = 1e-8.** dpjax's certified "
        "Theorem-8 optimum at delta = 1e-8 is the first dpjax row; its alpha is 0 (or "
        "negligible) at every eps, i.e. the sufficient condition is best met by the Gaussian "
        "member of the family (at alpha = 0, theta = 0 and Theorem 8 is exactly the Gaussian "
        "condition with Delta_2), so the values equal the exact Gaussian mechanism with l2 = "
        "sqrt(20). An independent re-implementation of Theorem 8 (SciPy, shape grid plus "
        "bisection on gamma) gives the same numbers. The printed row matches the Theorem-8 "
        "optimum at **delta = 1e-6** (the 1-D setting's delta) instead: printed / dpjax at "
        "delta = 1e-6 - 1 = "
        + ", ".join(f"{100 * r:+.2f}%" for r in rel6)
        + ", always slightly above the optimum, as a coarse grid search lands. (The optimal gamma "
        "at eps = 0.2 and delta = 1e-6 is ~85, outside the paper's 1-D grid gamma <= 50, so a "
        "wider grid must have been used.) Even at delta = 1e-8 flipped Huber (= Gaussian here) "
        "beats Laplace and staircase in 20 dimensions, so the paper's qualitative claim stands.\n"
    )
    return md


def _heatmap_section(h: dict, eps_h, del_h) -> list:
    """The report's Fig. 3b / 3c section (markdown pieces)."""
    header = ["delta \\ eps", *[f"{e:.3g}" for e in eps_h]]

    def db_table(key):
        rows = [[f"{d:.0e}", *[f"{x:+.2f}" for x in r]] for d, r in zip(del_h, h[key], strict=True)]
        return markdown_table(header, rows)

    md = ["\n## Fig. 3b and 3c: FH variance over Laplace / staircase, in dB\n"]
    md.append(
        "Laplace: exact 1-D (eps, delta) scale Delta/(eps - 2 log(1 - delta)); staircase: eps-DP, "
        "gamma* (delta not used, as in the paper's footnote 5); FH: exact 1-D calibration.\n\n"
    )
    md.append("FH / Laplace [dB] (rows delta, columns eps):\n\n")
    md.append(db_table("db_laplace"))
    md.append("\nFH / staircase [dB]:\n\n")
    md.append(db_table("db_staircase"))
    md.append(
        "\nAs in the paper: FH matches Laplace (0 dB) except for small eps with delta > 0, where "
        f"FH is better (min {h['db_laplace'].min():+.2f} dB, max {h['db_laplace'].max():+.2f} dB "
        "over the grid), and FH is worse than the staircase at large eps "
        f"(max {h['db_staircase'].max():+.2f} dB).\n"
        "\n![Fig. 3b](fig3b_fh_vs_laplace.png)\n\n![Fig. 3c](fig3c_fh_vs_staircase.png)\n"
    )
    return md


def _fig6_section(prof: dict) -> list:
    """The report's Fig. 6 section (markdown pieces)."""
    md = ["\n## Fig. 6: privacy profiles at variance 16\n"]
    j1 = int(np.argmin(abs(prof["epsilon"] - 1.0)))
    md.append(
        f"Gaussian sigma = 4; OSGT rho = 7, vartheta = {prof['vartheta']:.4f}; FH gamma = 7, "
        f"alpha = {prof['alpha']:.4f} (each of variance 16). At eps = 1: Gaussian "
        f"{prof['gaussian'][j1]:.3g}, OSGT {prof['osgt'][j1]:.3g}, FH {prof['fh'][j1]:.3g}. "
        + _fig6_summary(prof)
        + "\n"
        "\n![Fig. 6](fig6_profiles.png)\n"
    )
    return md


def run(out_dir: Path, quick: bool = False) -> Path:
    """Write the figures and ``flipped-huber.md`` into ``out_dir``.

    Args:
      out_dir: the output folder (created if missing).
      quick: reduced grids (the test suite).

    Returns:
      The path of the report.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    eps_a = (
        np.array([0.3, 3.0]) if quick else np.unique(np.r_[np.geomspace(0.05, 5.0, 14), 0.3, 3.0])
    )
    _progress.mark("Fig. 3a")
    a = fig3a(eps_a)
    i03, i3 = int(np.argmin(abs(eps_a - 0.3))), int(np.argmin(abs(eps_a - 3.0)))
    log_k = np.linspace(np.log(1e-3), np.log(1e4), 25 if quick else 121)
    _progress.mark("OSGT shape curve")
    curves = {e: osgt_shape_curve(e, log_k) for e in (0.3, 3.0)}
    _progress.mark("Table II")
    tab = table_ii()
    eps_h = np.geomspace(0.05, 10.0, 3 if quick else 12)
    del_h = np.geomspace(1e-12, 1e-2, 2 if quick else 6)
    _progress.mark("heatmaps")
    h = heatmaps(eps_h, del_h)
    _progress.mark("Fig. 6")
    prof = fig6(np.linspace(0.0, 3.0, 31 if quick else 121))
    _progress.mark("figures")
    _plot(out_dir, a, eps_a, curves, log_k, h, eps_h, del_h, prof)
    md = [
        *_fig3a_section(a, eps_a, i03, i3, _k_at_paper(curves, log_k), quick),
        *_table_ii_section(tab),
        *_heatmap_section(h, eps_h, del_h),
        *_fig6_section(prof),
    ]
    report = out_dir / "flipped-huber.md"
    report.write_text("".join(md))
    return report
