"""Bench: JAX barrier-Newton vs cvxpy + Clarabel on the monotone spherical KL programme.

m = 10, E|Z|^2 = 2.5, r = 0.9, (n, N) from (50, 150) up to (400, 1200).  For each
instance: wall time (JAX after a compile warm-up, ``block_until_ready``, median of
``--repeats`` runs; cvxpy, run once,
including its canonicalisation, which is part of what a user pays), objective,
the shared KKT residual, and the radial-mass discrepancy in low-mass shells
(max relative difference of the shell masses where the JAX mass is < 1e-6).

Usage: python bench/bench_spherical.py [--sizes 50,100,200,400] [--no-cvxpy] [--repeats 3]

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
these sizes including compilation (cell-by-cell: ~7 s at (400, 1200)).
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="50,100,200,400", help="values of n (N = 3n)")
    ap.add_argument("--no-cvxpy", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="JAX timings (median reported)")
    args = ap.parse_args()
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
        jax.block_until_ready(de._JAX_SOLVE(prob))  # compile
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            sol = jax.block_until_ready(de._JAX_SOLVE(prob))
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


if __name__ == "__main__":
    main()
