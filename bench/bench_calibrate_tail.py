"""DP-SGD sigma calibration at small delta: dpjax vs an independent reference and RDP.

    python bench/bench_calibrate_tail.py              # the full table
    python bench/bench_calibrate_tail.py --dpjax-only # dpjax's sigma and epsilon only
    python bench/bench_calibrate_tail.py 0.1,100      # one setting (q,T)

For the Poisson-subsampled Gaussian (q, T) in {(0.01, 1000), (0.004, 10^4), (0.1, 100)},
target epsilon in {1, 3} and delta in {1e-5, 1e-10, 1e-15, 1e-30}:

* dpjax: ``dpjax.calibrate("gaussian", eps, delta, sampling_rate=q, compositions=T,
  l2=1)`` (all eight targets of a setting in one call; its wall time is printed) and the
  certified epsilon ``dpjax.account`` reports at that sigma and the target delta;
* reference: the sigma whose epsilon under ``bench/tilted_reference.py`` (NumPy/SciPy,
  no dpjax code, bin width 5e-5, cell masses split to both ends) equals the target (a
  secant on ``log sigma`` from dpjax's sigma, to 1e-9); ``dpjax/ref-1`` is the relative gap;
* RDP: the least sigma dp-accounting's RDP accountant (its default orders) certifies
  (bisection on ``log sigma`` to 1e-9), an independent valid upper bound.

Run it against an older tree (``PYTHONPATH=/path/to/tree ... --dpjax-only``) for a
before/after comparison on the same machine.
"""

from __future__ import annotations

import math
import os
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import dp_accounting  # noqa: E402
from dp_accounting import rdp  # noqa: E402

import dpjax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilted_reference  # noqa: E402

SETTINGS = [(0.01, 1000), (0.004, 10**4), (0.1, 100)]
EPSILONS = np.array([1.0, 3.0])
DELTAS = np.array([1e-5, 1e-10, 1e-15, 1e-30])


def rdp_epsilon(sigma, q, steps, delta):
    acc = rdp.RdpAccountant()
    acc.compose(
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
        )
    )
    return acc.get_epsilon(delta)


def rdp_sigma(q, steps, eps, delta, lo=0.1, hi=100.0):
    """Least sigma with RDP epsilon <= eps (bisection on log sigma)."""
    a, b = math.log(lo), math.log(hi)
    while b - a > 1e-9:
        m = 0.5 * (a + b)
        a, b = (a, m) if rdp_epsilon(math.exp(m), q, steps, delta) <= eps else (m, b)
    return math.exp(b)


def reference_sigma(q, steps, eps, delta, start):
    """Root of ``tilted_reference.epsilon(sigma) = eps`` (secant on log sigma)."""
    f = lambda x: tilted_reference.epsilon(math.exp(x), q, steps, delta) - eps  # noqa: E731
    x0, x1 = math.log(start), math.log(start) - 1e-3
    f0, f1 = f(x0), f(x1)
    for _ in range(12):
        if not (math.isfinite(f0) and math.isfinite(f1)) or f1 == f0:
            return math.nan
        x0, x1, f0 = x1, x1 - f1 * (x1 - x0) / (f1 - f0), f1
        f1 = f(x1)
        if abs(x1 - x0) < 1e-9:
            break
    return math.exp(x1)


def one_setting(q, steps, full: bool) -> None:
    print(f"\n(q, T) = ({q}, {steps})", flush=True)
    e, d = np.meshgrid(EPSILONS, DELTAS, indexing="ij")
    t = time.perf_counter()
    cal = dpjax.calibrate("gaussian", e, d, sampling_rate=q, compositions=steps, l2=1.0)
    took = time.perf_counter() - t
    sigma = np.asarray(cal.params["sigma"], np.float64)
    print(f"  dpjax.calibrate: {took:.1f} s wall for {sigma.size} targets", flush=True)
    print(f"  {'eps':>4} {'delta':>7} {'dpjax sigma':>13} {'certified eps':>13}"
          + (f" {'reference':>11} {'dpjax/ref-1':>11} {'RDP sigma':>11} {'RDP/ref-1':>10}"
             if full else ""), flush=True)
    for i, j in np.ndindex(sigma.shape):
        s = float(sigma[i, j])
        got = dpjax.account(
            "gaussian", {"sigma": s}, compositions=steps, sampling_rate=q, delta=DELTAS[j], l2=1.0
        )
        row = f"  {EPSILONS[i]:4.0f} {DELTAS[j]:7.0e} {s:13.7f} {float(np.ravel(got)[0]):13.7f}"
        if full:
            ref = reference_sigma(q, steps, EPSILONS[i], DELTAS[j], s)
            r = rdp_sigma(q, steps, EPSILONS[i], DELTAS[j])
            row += f" {ref:11.7f} {s / ref - 1:+11.2e} {r:11.7f} {r / ref - 1:+10.2e}"
        print(row, flush=True)


def main() -> None:
    full = "--dpjax-only" not in sys.argv
    print(f"dpjax from {os.path.dirname(dpjax.__file__)}; jax {jax.__version__}; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    picked = [a for a in sys.argv[1:] if not a.startswith("--")]
    settings = [(float(a.split(",")[0]), int(a.split(",")[1])) for a in picked] or SETTINGS
    for q, steps in settings:
        one_setting(q, steps, full)


if __name__ == "__main__":
    main()
