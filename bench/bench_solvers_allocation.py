"""Power allocation (i.n.i.d. noise scales): JAX closed form vs cvxpy + Clarabel.

Same instances, same shared KKT residual; prints wall time, objective
agreement and residuals, and the time ratio.  Run: ``python bench/bench_solvers_allocation.py``.
"""

from __future__ import annotations

import platform
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import cvxpy  # noqa: E402

from solvers import PowerAllocation, solve  # noqa: E402


def main() -> None:
    print(f"jax {jax.__version__}, cvxpy {cvxpy.__version__}, device {jax.devices()[0]}, "
          f"{platform.processor() or platform.machine()}, float64")
    fast = jax.jit(lambda pr: solve(pr, "jax"))
    print(f"{'K':>6} {'p':>3} {'q':>3} {'jax s':>9} {'cvxpy s':>9} {'ratio':>8} "
          f"{'rel value diff':>15} {'resid jax':>10} {'resid cvxpy':>12}")
    for k in (10, 100, 1000, 10000):
        for p, q in ((2.0, 2.0), (2.0, 1.0)):
            rng = np.random.default_rng(k)
            lam = rng.uniform(0.05, 1.0, k)
            prob = PowerAllocation.create(lam**q, 0.3**q, p, q)
            jax.block_until_ready(fast(prob))  # warm-up / compile
            t = time.perf_counter()
            for _ in range(10):
                sol = jax.block_until_ready(fast(prob))
            t_jax = (time.perf_counter() - t) / 10
            t = time.perf_counter()
            ref = solve(prob, "cvxpy")
            t_cvx = time.perf_counter() - t
            diff = abs(float(ref.value) / float(sol.value) - 1)
            print(f"{k:>6} {p:>3.0f} {q:>3.0f} {t_jax:>9.2e} {t_cvx:>9.2e} {t_cvx / t_jax:>8.0f} "
                  f"{diff:>15.1e} {float(sol.residual.total):>10.1e} "
                  f"{float(ref.residual.total):>12.1e}")


if __name__ == "__main__":
    main()
