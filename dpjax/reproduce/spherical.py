"""Reproduce Figs. 1-2 of spherical-kl-optimal-mechanisms (m = 10, E|Z|^2 = 2.5).

Fig. 1: the radial density of the designed mechanism vs the Gaussian with
sigma = 0.5 per coordinate.  Fig. 2: certified epsilon at delta = 1e-8 vs the
number of compositions (1..2000) with Poisson subsampling q = 0.001, against
the subsampled Gaussian, at the paper's r = 0.9 and at the r dpjax chooses
(outer search minimising epsilon at k = 2000).  All epsilons are certified
upper bounds from the PLD engine (pessimistic discretisation, FFT
composition, add and remove adjacency, worse of the two).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import jax
import numpy as np

from dpjax import _progress
from dpjax.accounting.pld import engine
from dpjax.noise import Gaussian
from dpjax.numerics.lazy_scipy import special
from dpjax.reproduce._report import markdown_table, new_figure, save_figure
from dpjax.reproduce.spherical_map import map_section
from dpjax.spherical import design as de

M_DIM, N_SHELLS, N_FREE, BUDGET = 10, 400, 1200, 2.5
SIGMA = 0.5
DELTA, Q = 1e-8, 1e-3
KS = (1, 10, 100, 300, 1000, 2000)
PAPER_R = 0.9


def gaussian_radial_pdf(rho, sigma=SIGMA, m=M_DIM):
    r"""Chi density of ``|N(0, sigma^2 I_m)|`` (Fig. 1 of spherical-kl-optimal-mechanisms).

    .. math:: f(\rho) = \frac{\rho^{m-1} e^{-\rho^2 / (2\sigma^2)}}{2^{m/2 - 1}\,\sigma^m\,
              \Gamma(m/2)}

    Args:
      rho: radii ``>= 0``.
      sigma: per-coordinate standard deviation.
      m: dimension.

    Returns:
      The density at ``rho``.
    """
    rho = np.asarray(rho, np.float64)
    with np.errstate(divide="ignore"):
        lg = ((m - 1) * np.log(rho) - rho**2 / (2 * sigma**2)
              - (m / 2 - 1) * math.log(2) - m * math.log(sigma) - special.gammaln(m / 2))
    return np.exp(lg)


def gaussian_epsilons(ks, sigma=SIGMA, delta=DELTA, q=Q):
    """Certified epsilon of the subsampled Gaussian after ``k`` uses (the baseline of Fig. 2).

    The PLD engine's epsilon of ``N(0, sigma^2)`` at sensitivity 1 (the maximal shift of a
    spherically symmetric mechanism, Lemma 1 of spherical-kl-optimal-mechanisms), Poisson
    rate ``q``, worse adjacency.

    Args:
      ks: numbers of compositions.
      sigma: per-coordinate standard deviation.
      delta: the target delta.
      q: the sampling rate.

    Returns:
      Epsilons, one per ``k``.
    """
    return np.array([float(engine.epsilon(Gaussian.from_scale, sigma, 1.0, 1.0, delta,
                                              int(k), q)) for k in ks])


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(out_dir: Path, quick: bool = False) -> Path:
    """Write the report of Figs. 1-2 of spherical-kl-optimal-mechanisms into ``out_dir``.

    Designs the KL-optimal spherical mechanism (Theorem 4) at the paper's ``r = 0.9`` and
    at the ``r`` dpjax chooses, and certifies its epsilon against the Gaussian's
    (module docstring).  Enables x64 for the process.

    Then the (m, q, k) map of where the designed mechanism pays against the subsampled
    Gaussian (:mod:`dpjax.reproduce.spherical_map`); ``summary.json`` holds the Fig. 2
    epsilons and the map.

    Args:
      out_dir: output directory.
      quick: the map's small grid.

    Returns:
      The path of the markdown report.
    """
    jax.config.update("jax_enable_x64", True)
    out_dir = Path(out_dir)
    lines = ["# Optimal spherical mechanisms (spherical-kl-optimal-mechanisms, Figs. 1-2)\n"]
    decay_lo = 3.0  # smallest tail decay per unit radius searched: r = exp(-3/400) = 0.9925
    coeffs = de.coefficients_for(M_DIM, N_SHELLS, N_FREE, math.exp(-decay_lo / N_SHELLS))

    mech09, prob09, sol09 = de.design_mechanism(coeffs, N_FREE, PAPER_R, BUDGET)
    _log(f"r = 0.9 designed: KL {mech09.kl:.6f}")
    base_crit = de.epsilon_criterion(DELTA, KS[-1], Q)

    def crit(mech):
        val = base_crit(mech)
        _log(f"  r = {mech.r:.5f}: KL {mech.kl:.6f}, eps(k={KS[-1]}) = {val:.4f}")
        return val
    best, r_star, history = de.search_r(coeffs, N_FREE, BUDGET, crit, (decay_lo, 12.0),
                                        iterations=3)
    gauss_kl = 1.0 / (2 * SIGMA**2)

    _progress.mark("Fig. 1")
    # ---- Fig. 1
    rho = np.linspace(1e-3, 3.5, 2000)
    fig, ax = new_figure(figsize=(6, 4))
    ax.plot(rho, np.exp(mech09.radial_log_pdf(rho)), label=f"designed, r = {PAPER_R}")
    ax.plot(rho, np.exp(best.radial_log_pdf(rho)), "--", label=f"designed, r = {r_star:.4f}")
    ax.plot(rho, gaussian_radial_pdf(rho), ":", label="Gaussian sigma = 0.5")
    ax.set_xlabel("radius |Z|")
    ax.set_ylabel("density of |Z|")
    ax.legend()
    save_figure(fig, out_dir / "spherical_fig1.png")

    _progress.mark("Fig. 2")
    # ---- Fig. 2
    e09 = mech09.epsilons(DELTA, KS, Q)
    _log(f"r = 0.9 epsilons {e09}")
    ebest = best.epsilons(DELTA, KS, Q)
    _log(f"r* epsilons {ebest}")
    egauss = gaussian_epsilons(KS)
    _log(f"Gaussian epsilons {egauss}")
    fig, ax = new_figure(figsize=(6, 4))
    ax.plot(KS, e09, "o-", label=f"designed, r = {PAPER_R}")
    ax.plot(KS, ebest, "s-", label=f"designed, r = {r_star:.4f} (dpjax)")
    ax.plot(KS, egauss, "^-", label="subsampled Gaussian sigma = 0.5")
    ax.set_xscale("log")
    ax.set_xlabel("compositions k")
    ax.set_ylabel("certified epsilon at delta = 1e-8 (q = 0.001)")
    ax.legend()
    save_figure(fig, out_dir / "spherical_fig2.png")

    rows = [[k, a, b, g, "yes" if a < g else "NO", "yes" if b < g else "NO"]
            for k, a, b, g in zip(KS, e09, ebest, egauss, strict=True)]
    below09 = all(a < g for a, g in zip(e09, egauss, strict=True))
    below_best = all(b < g for b, g in zip(ebest, egauss, strict=True))
    lines += [
        "## Setting\n",
        f"m = {M_DIM}, E|Z|^2 = {BUDGET} (Gaussian sigma = {SIGMA} per coordinate), "
        f"(n, N) = ({N_SHELLS}, {N_FREE}), monotone programme (Definition 2), JAX barrier-Newton "
        f"solver; coefficients on {coeffs.rows} rows. delta = {DELTA:g}, q = {Q:g}, add and "
        "remove adjacency (worse of the two), certified PLD accounting (pessimistic "
        "connect-the-dots on the exact cell atoms, FFT composition).\n",
        "## The designs\n",
        markdown_table(["r", "n ln(1/r) (tail decay / unit radius)", "KL", "Gaussian KL",
                        "KKT residual"],
                       [[PAPER_R, N_SHELLS * -math.log(PAPER_R), mech09.kl, gauss_kl,
                         float(sol09.residual.total)],
                        [r_star, N_SHELLS * -math.log(r_star), best.kl, gauss_kl, ""]]),
        "\nOuter search over r (criterion: certified epsilon at k = 2000):\n",
        markdown_table(["r", "epsilon(k=2000)"], [[r, e] for r, e in history]),
        "## Fig. 2: certified epsilon vs compositions\n",
        markdown_table(["k", f"designed r={PAPER_R}", f"designed r={r_star:.4f}",
                        "subsampled Gaussian", f"r={PAPER_R} below Gaussian",
                        "dpjax r below Gaussian"], rows),
        "\n## Verdict\n",
        (f"The paper's claim (designed mechanism below the subsampled Gaussian at every k in "
         f"1..2000) {'HOLDS' if below09 else 'does NOT hold'} at r = {PAPER_R} with certified "
         f"numbers, and {'HOLDS' if below_best else 'does NOT hold'} at dpjax's r = "
         f"{r_star:.4f}.\n"),
        ("Why r matters: past the last free shell the density falls by n ln(1/r) per unit "
         f"radius ({N_SHELLS * -math.log(PAPER_R):.1f} at r = {PAPER_R}): a cliff whose "
         "single-step privacy loss (up to n ln(1/r)) the KL barely sees but which dominates "
         "delta at 1e-8 under subsampling and composition. The KL hardly depends on r "
         f"({mech09.kl:.6f} vs {best.kl:.6f}).\n"),
        "![Fig. 1](spherical_fig1.png)\n",
        "![Fig. 2](spherical_fig2.png)\n",
    ]
    map_lines, map_rows = map_section(out_dir, quick)
    lines += map_lines
    (out_dir / "summary.json").write_text(json.dumps({
        "fig2": {"ks": list(KS), "paper_r": PAPER_R, "dpjax_r": r_star,
                 "epsilon_paper_r": [float(v) for v in e09],
                 "epsilon_dpjax_r": [float(v) for v in ebest],
                 "epsilon_gaussian": [float(v) for v in egauss]},
        "map": map_rows}, indent=1))
    report = out_dir / "spherical.md"
    report.write_text("\n".join(lines))
    return report
