"""Bench: JAX barrier-Newton vs cvxpy + Clarabel on the monotone spherical KL programme.

m = 10, E|Z|^2 = 2.5, r = 0.9, (n, N) from (50, 150) up to (400, 1200).  For each
instance: wall time (JAX after a compile warm-up, ``block_until_ready``, median of
``--repeats`` runs; cvxpy, run once,
including its canonicalisation, which is part of what a user pays), objective,
the shared KKT residual, and the radial-mass discrepancy in low-mass shells
(max relative difference of the shell masses where the JAX mass is < 1e-6).

Usage: python bench/bench_spherical.py [--sizes 50,100,200,400] [--no-cvxpy] [--repeats 3]
       python bench/bench_spherical.py --scale [--scale-configs 10:200,100:100,1000:100,10000:100]
       python bench/bench_spherical.py --large 100000:10   (the windowed checks at m = 10^5)

``--large 100000:10``, measured 2026-11-26 (2 shared cores, load ~18, x64): solved (status 0,
residual 1.6e-11) on 193 window rows (shells 3063..3255); KL 12.109 vs the grid Gaussian's
12.111 (gain 1.8e-4) and the continuous Gaussian's 0.5 (n = 10 is coarse at m = 10^5: the
Gaussian's log density drops sqrt(m) / n ~ 32 per shell; n ~ sqrt(m) would need ~6000 window
rows and a band of 633, a 6000 x 6000 Cholesky per Newton step); 2000 draws: radius KS
p = 0.29 against the exact radial CDF, direction KS p = 0.47 against Beta((m-1)/2, (m-1)/2);
Monte Carlo loss mean 12.001 vs KL 12.109 (5 sd: 1.72), worst CDF gap against the exact
cells 0.008 at five quantiles; P-mass at +inf 1.6e-11; certified epsilon(1e-5) after 10 uses
at q = 0.01: 54.13.  Times: design 68 s, sampling 349 s (2000 x 10^5 draws, 8 chunks), PLD
77 s.

Measured 2026-11-22 (one run, 2 CPU cores shared with other jobs, load ~3,
OPENBLAS_NUM_THREADS=1, jax 0.10.2, clarabel 0.11.1; solver times exclude the
coefficients, which both solvers share)::

  (n, N)    |jax s|it|jax KL        |jax res|cvx s|cvxpy KL      |cvx res|dKL  |x
  (50,150)  |0.006|11|1.951766921373|2.5e-15|  5.1|1.951766922883|1.5e-09|8e-10| 888
  (100,300) |0.020|13|1.948867440705|1.2e-15|  7.6|1.948867452457|3.8e-09|6e-09| 378
  (200,600) |0.100|14|1.956552234465|3.0e-15| 27.6|1.956552285530|5.9e-09|3e-08| 276
  (400,1200)|0.652|15|1.974407241235|2.8e-14|192.5|1.974407365467|9.7e-09|6e-08| 295

(it: Newton steps of the barrier phase, plus 3 polish solves; dKL relative; x: speedup;
residual ratio cvxpy/JAX 6e5, 3e6, 2e6, 4e5.)  Clarabel ends ``optimal_inaccurate``
(stalled, not at max_iter) at every size; its objective is above the JAX one, at a
point feasible to ~1e-9, while the JAX point is feasible to ~3e-15 with KKT residual
<= 3e-14.  The reference's low-mass shells (JAX mass < 1e-6) are poor: off by up to
2-9x (last column of the output), invisible in its residual, which scales
stationarity by the shell mass.

The reference's formulation matters: with the edge weights outside the cones
(``w @ rel_entr(y_a, y_b)``) Clarabel stalled at residual ~4e-5 with the objective
1.0e-5 / 2.7e-5 too high at (200, 600) / (400, 1200) (43.7 s / 512.9 s; speedups 449x /
578x); all of the weight inside the cones converges at (100, 300) but fails outright at
(200, 600); ``sqrt(w)`` inside and outside (now used) is the table above.  The JAX
solver before this rework (primal barrier, scatter-built Laplacian, 69 Newton steps at
(200, 600)) took ~1.7 s at (200, 600).  Coefficient build (two-GEMM band): 0.4-1 s at
these sizes including compilation (cell-by-cell: ~7 s at (400, 1200); at (m, n, rows) =
(10, 400, 1926) ~1 s instead of ~7 s).  The incomplete-beta path
(``dpjax.spherical.cells_beta``): 0.9 s for (m, n, rows) = (100, 20, 400), 1.0 s for
(1000, 10, 400), 5 s for (10^4, 10, 700).

The JAX solver (``solvers.BarrierNewton``, measured with this script: m = 10, C = 2.5,
r = 0.9, N = 3n, 2 shared CPU cores): 11-15 Newton steps + 3 polish solves from (50, 150)
to (400, 1200) (the primal barrier method it replaced: 21-69); KKT residual <= 3e-14;
0.1 s at (200, 600) and 0.65 s at (400, 1200), 276x and 295x faster than cvxpy +
Clarabel in the same run, objectives within 3e-8 and 6e-8 (the reference's accuracy).
Per step at (400, 1200): Cholesky of the 1201 x 1201 matrix ~20-35 ms, everything else
~10 ms (the scatter-built Laplacian alone was ~40 ms; the merged dense kernel's objective
is ~10x cheaper than the cell-wise sum, a scatter-add of the band's cells ~10x slower than
the dense Laplacian).  A banded Cholesky (bandwidth ``n``) would save little: with
``N = 3n`` it is ``N n^2`` vs ``N^3 / 3`` flops, a factor 3 at best, against LAPACK's dense
``potrf``.  On CPU jaxlib's Cholesky calls scipy's OpenBLAS: with oversubscribed cores set
``OPENBLAS_NUM_THREADS=1`` (200x faster measured; this script does).

Scale (``--scale``, issue 6 item 7): the JAX solver at m = 10 .. 10^4 with the
same per-coordinate variance as the paper (E|Z|^2 = C = m / 4, sigma = 0.5), via
:func:`dpjax.spherical.design.scale_design` (free shells up to
``rho_N = sqrt(C) + 4 sqrt(2) sigma``, i.e. 8 standard deviations of the Gaussian's
radius past its mean, unless given as ``m:n:N``; m = 10 rows below use the paper's
N = 3n, (100, 375) too; the massless inner shells below ``first`` left out, relative
radial density < e^-80; ``r = exp(-rho_N / (n sigma^2))``, the Gaussian's slope at the
junction).  "grid G" is the reference profile -- the budget's Gaussian discretised on
the same shells, cost exactly C -- and "gain" ``1 - KL / KL(grid G)`` the
discretisation-matched gain; the continuous Gaussian's KL is ``m / (2C) = 2``.
Measured 2026-11-22, CPU (2 shared cores; solve after a compile warm-up of ~3-5 s;
coefficients by the incomplete-beta path for m >= 32)::

  m     |(n, N)     |first|status|resid  |KL        |grid G KL |gain   |coef s|solve s
  10    |(200, 600) |    0|0     |5.8e-15|1.94934   |1.99994   |2.53e-2| 1.3  |0.10
  10    |(400, 1200)|    0|0     |6.7e-15|1.94928   |1.99986   |2.53e-2| 2.4  |0.71
  100   |(50, 375)  |   19|0     |2.5e-15|2.00680   |2.01357   |3.36e-3| 2.3  |0.04
  100   |(100, 783) |   39|0     |2.9e-15|1.99673   |2.00340   |3.33e-3| 6.0  |0.22
  100   |(200, 1566)|   79|0     |4.9e-15|1.99421   |2.00085   |3.32e-3|22.9  |1.26
  1000  |(50, 932)  |  528|0     |1.5e-14|2.12937   |2.13018   |3.83e-4| 2.5  |0.06
  1000  |(100, 1864)| 1056|0     |1.8e-14|2.03247   |2.03318   |3.52e-4| 7.1  |0.31
  1000  |(200, 3728)| 2112|0     |1.6e-14|2.00764   |2.00834   |3.44e-4|24.1  |1.98
  10^4  |(100, 5283)| 4459|0     |4.8e-14|2.31300   |2.31311   |4.5e-5 | 7.4  |0.33
  10^4  |(200,10566)| 8918|0     |2.4e-13|2.08192   |2.08199   |3.7e-5 |24.8  |1.97

What happens as m grows: the optimum converges to the Gaussian.  Its gain over the
Gaussian on the same grid falls like ~1/m (2.5e-2, 3.3e-3, 3.4e-4, ~3.5e-5 at m = 10,
10^2, 10^3, 10^4; stable in n to 2-3 digits), while the price of the shell
discretisation grows: the radial log-density slope is ``rho / sigma^2 ~ 2 sqrt(m)`` per
unit radius, so at fixed n both KLs sit above the continuous Gaussian's 2 by ~c(m) / n^2
(0.0083 at (1000, 200), 0.082 at (10^4, 200)), and beating the *continuous* Gaussian
needs n growing like sqrt(m) (m = 100: n >= 100; m = 1000: n ~ 1000 extrapolated).  The
KL at m = 10 with the junction-slope r (0.97 at n = 400) is 1.94928, 1.3 % below the
paper's r = 0.9 (1.974407, table above): r = 0.9 puts a cliff of 42 nats per unit
radius at rho = 3, which costs KL, not only delta.  m = 100 with a fixed r = 0.9 at
(n, N) = (20, 150) fails (status 1, primal residual ~2e2): the tail decays by only 2.1
nats per unit radius against a Gaussian slope of ~30 there, so its cost cannot meet the
budget from the reference.
"""

from __future__ import annotations

import os

# jaxlib's CPU Cholesky calls scipy's OpenBLAS; on oversubscribed cores its threads make a
# 300 x 300 factorisation ~200x slower (measured), so pin it to one thread like the peer
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from dpjax.spherical import design as de  # noqa: E402
from solvers import solve  # noqa: E402

M_DIM, BUDGET, R = 10, 2.5, 0.9
#: the programme's default JAX solver (``solvers.BarrierNewton``), compiled once per shape
JAX_SOLVE = jax.jit(lambda prob: solve(prob, "jax"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="50,100,200,400", help="values of n (N = 3n)")
    ap.add_argument("--no-cvxpy", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="JAX timings (median reported)")
    ap.add_argument("--scale", action="store_true", help="large-m table (issue 6 item 7)")
    ap.add_argument("--scale-configs", default="10:200,100:100,1000:100,10000:100",
                    help="m:n[:N] for --scale (C = m / 4; N by default from the radial mass)")
    ap.add_argument("--large", default="",
                    help="m:n[,m:n] for the windowed design's checks at large m (e.g. 100000:10)")
    args = ap.parse_args()
    if args.large:
        for item in args.large.split(","):
            large_checks(*(int(v) for v in item.split(":")))
        return
    if args.scale:
        scale_table(args.scale_configs)
        return
    print(f"# jax {jax.__version__} on {jax.devices()[0].platform}, {platform.processor() or ''}"
          f" float64, m = {M_DIM}, C = {BUDGET}, r = {R}")
    header = ("(n, N)", "rows", "coeff s", "jax s", "jax iters", "jax KL", "jax resid",
              "cvxpy s", "cvxpy KL", "cvxpy resid", "rel dKL", "resid ratio", "speedup",
              "low-mass dmu")
    print(" | ".join(header))
    for n in (int(s) for s in args.sizes.split(",")):
        N = 3 * n
        t = time.perf_counter()
        coeffs = de.coefficients_for(M_DIM, n, N, R)
        tcoef = time.perf_counter() - t
        prob = de.programme(coeffs, N, R, BUDGET)
        jax.block_until_ready(JAX_SOLVE(prob))  # compile
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            sol = jax.block_until_ready(JAX_SOLVE(prob))
            times.append(time.perf_counter() - t)
        tj = float(np.median(times))
        row = [f"({n}, {N})", coeffs.rows, f"{tcoef:.2f}", f"{tj:.3f}",
               int(sol.stats["iterations"]), f"{float(sol.value):.12f}",
               f"{float(sol.residual.total):.2e}"]
        if not args.no_cvxpy:
            t = time.perf_counter()
            ref = solve(prob, "cvxpy")
            tc = time.perf_counter() - t
            mu_j, mu_c = np.asarray(sol.x), np.asarray(ref.x)
            low = mu_j < 1e-6
            dmu = float(np.max(np.abs(mu_c[low] / mu_j[low] - 1))) if low.any() else float("nan")
            row += [f"{tc:.2f}", f"{float(ref.value):.12f}", f"{float(ref.residual.total):.2e}",
                    f"{abs(float(ref.value) / float(sol.value) - 1):.1e}",
                    f"{float(ref.residual.total) / float(sol.residual.total):.1e}",
                    f"{tc / tj:.0f}x", f"{dmu:.2e}"]
        print(" | ".join(str(v) for v in row), flush=True)


def scale_table(configs: str) -> None:
    """Print the large-m table (module docstring): one JAX solve per ``m:n``."""
    import math

    print(f"# jax {jax.__version__} on {jax.devices()[0].platform}, float64, C = m / 4")
    print(" | ".join(("m", "(n, N)", "first", "r", "status", "residual", "iters", "KL",
                      "grid Gaussian KL", "Gaussian KL", "gain vs grid", "coef s",
                      "compile s", "solve s")))
    for item in configs.split(","):
        parts = [int(v) for v in item.split(":")]
        m, n = parts[:2]
        budget = 0.25 * m
        N = parts[2] if len(parts) > 2 else math.ceil(
            n * (math.sqrt(budget) + 4.0 * math.sqrt(2.0) * 0.5))
        t = time.perf_counter()
        prob, info = de.scale_programme(m, n, N, budget)
        coef_s = time.perf_counter() - t
        t = time.perf_counter()
        jax.block_until_ready(JAX_SOLVE(prob))  # compile (and a first solve)
        compile_s = time.perf_counter() - t
        t = time.perf_counter()
        sol = jax.block_until_ready(JAX_SOLVE(prob))
        solve_s = time.perf_counter() - t
        d = de.scale_summary(prob, info, sol)
        print(" | ".join(str(v) for v in (
            m, f"({n}, {N})", d["first"], f"{d['r']:.4g}", d["status"], f"{d['residual']:.1e}",
            d["iterations"], f"{d['kl']:.6f}", f"{d['grid_gaussian_kl']:.6f}",
            f"{d['gaussian_kl']:.6f}", f"{1.0 - d['kl'] / d['grid_gaussian_kl']:.2e}",
            f"{coef_s:.1f}", f"{compile_s:.1f}", f"{solve_s:.3f}")), flush=True)


def large_checks(m: int, n: int, samples: int = 2000, chunk: int = 250) -> None:
    """The checks of tests/spherical/test_windowed.py at a dimension too large for a test.

    Windowed design (per-coordinate variance 1, slope-rule tail), ``samples`` exact draws
    ``chunk`` at a time (memory ``chunk * m`` floats): radius KS against the exact radial
    CDF, direction KS against Beta((m-1)/2, (m-1)/2), the Monte Carlo loss at ``e_1`` against
    the exact cells (mean vs KL, CDF at five quantiles), the grid Gaussian's KL gain, and
    the certified epsilon at delta = 1e-5 after 10 uses at q = 0.01.
    """
    import math

    from scipy import stats

    from dpjax.spherical.windowed import design_windowed

    t = time.perf_counter()
    mech, info = design_windowed(m, float(m), n)
    design_s = time.perf_counter() - t
    t = time.perf_counter()
    rho, x1, loss_mc = [], [], []
    for c in range(samples // chunk):
        z = np.asarray(mech.sample(jax.random.fold_in(jax.random.key(19), c), (chunk,)))
        shifted = z.copy()
        shifted[:, 0] -= 1.0
        rho.append(np.linalg.norm(z, axis=-1))
        x1.append(z[:, 0])
        loss_mc.append(mech.log_density(z) - mech.log_density(shifted))
    rho, x1, loss_mc = (np.concatenate(v) for v in (rho, x1, loss_mc))
    sample_s = time.perf_counter() - t
    a = 0.5 * (m - 1)
    p_radius = stats.kstest(rho, mech.radial_cdf).pvalue
    p_dir = stats.kstest(0.5 * (1.0 + x1 / rho), stats.beta(a, a).cdf).pvalue
    loss, pm, _, p_out, _ = mech.atoms()
    order = np.argsort(loss)
    values, cdf = loss[order], np.cumsum(pm[order])
    worst = max(abs(np.mean(loss_mc <= q) - cdf[np.searchsorted(values, q, side="right") - 1])
                for q in np.quantile(loss_mc, [0.05, 0.25, 0.5, 0.75, 0.95]))
    t = time.perf_counter()
    eps = mech.epsilon(1e-5, compositions=10, sampling_rate=0.01)
    pld_s = time.perf_counter() - t
    print(f"m = {m}, n = {n}: first {info['first']}, rows {info['rows']}, status "
          f"{info['status']}, residual {info['residual']:.1e}, KL {info['kl']:.6f} (grid "
          f"Gaussian {info['grid_gaussian_kl']:.6f}, gain "
          f"{1 - info['kl'] / info['grid_gaussian_kl']:.2e}; continuous {info['gaussian_kl']})")
    print(f"  {samples} draws: radius KS p {p_radius:.3g}, direction KS p {p_dir:.3g}; loss MC "
          f"mean {loss_mc.mean():.5f} vs KL {mech.kl:.5f} (5 sd "
          f"{5 * loss_mc.std() / math.sqrt(samples):.5f}), worst CDF gap {worst:.4f}, "
          f"P-mass at +inf {p_out:.1e}")
    print(f"  certified epsilon(1e-5), 10 uses at q = 0.01: {eps:.4f}; design {design_s:.1f} s, "
          f"sampling {sample_s:.1f} s, PLD {pld_s:.1f} s", flush=True)


if __name__ == "__main__":
    main()
