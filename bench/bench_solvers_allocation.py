"""Power allocation (i.n.i.d. noise scales): JAX closed form vs the cvxpy + Clarabel reference.

For each profile family, dimension K and allocation (Gaussian l_p^p with
p = 1, 2 and weighted MSE: q = 2, eq. 9; Laplace l_p^p, p = 1, 2: q = 1, eq. 12
of inid-noise-laplace-beats-gaussian) it prints the maximum relative
discrepancy of the scales against the closed form for the IPM point alone
(``polish=False``) and for the reference as shipped (IPM + KKT polish), the
relative value difference, the shared residual, and the wall times with the
ratio cvxpy / jax (jax: compiled, after a warm-up, mean of 10 calls with
``block_until_ready``; cvxpy: one call, model building and polish included,
after the polish has been compiled for that K).
Run: ``python bench/bench_solvers_allocation.py [--quick]``.

The polish (``solvers.KKTPolish``) solves its Newton systems with XLA's LU
inside one jitted ``lax.while_loop``: NumPy's threaded BLAS was erratic on
oversubscribed cores (30-170 ms per solve for n = 200, measured).
"""

from __future__ import annotations

import platform
import sys
import time
import warnings

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import cvxpy  # noqa: E402

from dpjax.inid import make_profile  # noqa: E402
from solvers import PowerAllocation, solve  # noqa: E402

ALLOCATIONS = [  # (name, p, q, weighted)
    ("gauss-mse", 2.0, 2.0, False),
    ("gauss-l1", 1.0, 2.0, False),
    ("gauss-wmse", 2.0, 2.0, True),
    ("lap-mse", 2.0, 1.0, False),
    ("lap-l1", 1.0, 1.0, False),
]
KINDS = ("rand-unif", "rand-lognorm", "rand-1e-6..1", "uniform", "linear", "quadratic",
         "exponential", "one-hot")


def profile(kind: str, k: int) -> np.ndarray:
    rng = np.random.default_rng(k)
    if kind == "rand-unif":
        return rng.uniform(0.05, 1.0, k)
    if kind == "rand-lognorm":
        return rng.lognormal(0.0, 1.0, k)
    if kind == "rand-1e-6..1":
        return np.exp(rng.uniform(np.log(1e-6), 0.0, k))
    return make_profile(kind, k)


def main() -> None:
    quick = "--quick" in sys.argv
    dims = (10, 100, 1000) if quick else (1, 10, 100, 1000)
    print(f"jax {jax.__version__}, cvxpy {cvxpy.__version__}, device {jax.devices()[0]}, "
          f"{platform.processor() or platform.machine()}, float64")
    fast = jax.jit(lambda pr: solve(pr, "jax"))
    print(f"{'K':>5} {'profile':>13} {'allocation':>10} {'jax s':>9} {'cvxpy s':>8} "
          f"{'ratio':>7} {'err IPM':>8} {'err ref':>8} {'value':>8} {'resid':>8} status")
    worst: dict[tuple[str, int], float] = {}
    compiled: set[int] = set()
    cases = [(k, kind) for k in dims for kind in KINDS]
    cases += [(k, "exponential") for k in (200, 300, 355)]  # where the polish stops
    for k, kind in cases:
        lam = profile(kind, k)
        for name, p, q, weighted in ALLOCATIONS:
            pos = lam > 0
            w = np.random.default_rng(k + 1).uniform(0.5, 2.0, k) if weighted else np.ones(k)
            a = lam[pos] ** q
            if not np.all(a >= np.finfo(np.float64).tiny):
                print(f"{k:>5} {kind:>13} {name:>10}  lambda^q subnormal or 0: not stated")
                continue
            prob = PowerAllocation.create(a, 0.09 if q == 2 else 0.7, p, q, weights=w[pos])
            jax.block_until_ready(fast(prob))  # warm-up / compile
            t = time.perf_counter()
            for _ in range(10):
                sol = jax.block_until_ready(fast(prob))
            t_jax = (time.perf_counter() - t) / 10
            x_cf = np.asarray(sol.x)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ipm = solve(prob, "cvxpy", polish=False)
                if k not in compiled:  # the polish compiles once per K: not timed
                    solve(prob, "cvxpy")
                    compiled.add(k)
                t = time.perf_counter()
                ref = solve(prob, "cvxpy")
                t_cvx = time.perf_counter() - t
            err_ipm = float(np.max(np.abs(np.asarray(ipm.x) / x_cf - 1)))
            err = float(np.max(np.abs(np.asarray(ref.x) / x_cf - 1)))
            dval = abs(float(ref.value) / float(sol.value) - 1)
            worst[(kind, k)] = max(worst.get((kind, k), 0.0), err)
            print(f"{k:>5} {kind:>13} {name:>10} {t_jax:>9.2e} {t_cvx:>8.2e} "
                  f"{t_cvx / t_jax:>7.0f} {err_ipm:>8.1e} {err:>8.1e} {dval:>8.1e} "
                  f"{float(ref.residual.total):>8.1e} {int(ref.status)}", flush=True)
    print("\nmax relative discrepancy of the reference scales (all allocations):")
    for (kind, k), e in sorted(worst.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"  K={k:>5} {kind:>13}: {e:.1e}")


if __name__ == "__main__":
    main()
