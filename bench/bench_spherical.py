"""Bench: JAX barrier-Newton vs cvxpy + Clarabel on the monotone spherical KL programme.

m = 10, E|Z|^2 = 2.5, r = 0.9, (n, N) from (50, 150) up to (400, 1200).  For each
instance: wall time (JAX after a compile warm-up, ``block_until_ready``, median of
``--repeats`` runs; cvxpy, run once,
including its canonicalisation, which is part of what a user pays), objective,
the shared KKT residual, and the radial-mass discrepancy in low-mass shells
(max relative difference of the shell masses where the JAX mass is < 1e-6).

Usage: python bench/bench_spherical.py [--sizes 50,100,200,400] [--no-cvxpy] [--repeats 3]
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
