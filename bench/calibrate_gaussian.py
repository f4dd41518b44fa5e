"""Batched Gaussian calibration vs dp-accounting and autodp (issue: foundation, item 8).

Times one vmapped, jitted call calibrating N (epsilon, delta) targets against a
Python loop of ``dp_accounting.get_sigma_gaussian`` and autodp's analytic
Gaussian calibrator over (a subset of) the same targets, in the same run, after
a warm-up, with ``block_until_ready``.  Prints per-target times and ratios, and
the agreement with dp-accounting (max relative difference in sigma).

    python bench/calibrate_gaussian.py [--n 10000] [--peer-n 1000]
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000, help="targets in the batched call")
    ap.add_argument("--peer-n", type=int, default=1_000, help="targets timed for each peer")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    jax.config.update("jax_enable_x64", True)
    from dpjax.calibration import sigma_gaussian

    rng = np.random.default_rng(0)
    eps = rng.uniform(0.05, 10.0, args.n)
    delta = 10.0 ** rng.uniform(-12, -3, args.n)
    e, d, s = jnp.asarray(eps), jnp.asarray(delta), jnp.ones(args.n)

    sigma_gaussian(e, d, s)[0].block_until_ready()  # compile + warm-up
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        out = sigma_gaussian(e, d, s)
        out[0].block_until_ready()
        times.append(time.perf_counter() - t0)
    ours = min(times) / args.n
    sigma = np.asarray(out[0])
    assert np.all(np.asarray(out[2])), "uncertified result"

    rows = [("dpjax (vmapped, jit, certified)", ours, args.n)]
    m = min(args.peer_n, args.n)
    try:
        from dp_accounting.gaussian_mechanism import get_sigma_gaussian

        t0 = time.perf_counter()
        ref = np.array([get_sigma_gaussian(eps[i], delta[i]) for i in range(m)])
        rows.append(("dp-accounting get_sigma_gaussian (loop)", (time.perf_counter() - t0) / m, m))
        agree = np.max(np.abs(sigma[:m] / ref - 1))
    except ImportError:
        agree = None
    try:
        from autodp.calibrator_zoo import ana_gaussian_calibrator
        from autodp.mechanism_zoo import ExactGaussianMechanism

        cal = ana_gaussian_calibrator()
        k = min(m, 200)  # autodp is slow; fewer targets
        t0 = time.perf_counter()
        for i in range(k):
            cal(ExactGaussianMechanism, eps[i], delta[i])
        rows.append(("autodp ana_gaussian_calibrator (loop)", (time.perf_counter() - t0) / k, k))
    except ImportError:
        pass

    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), "
          f"jax {jax.__version__}, python {platform.python_version()}, float64")
    print(f"targets: eps ~ U(0.05, 10), delta ~ 10^U(-12, -3); batch n = {args.n}")
    print(f"{'method':42s} {'targets':>8s} {'time/target':>14s} {'ratio vs dpjax':>15s}")
    for name, t, n in rows:
        print(f"{name:42s} {n:8d} {t * 1e6:11.2f} us {t / ours:14.1f}x")
    if agree is not None:
        print(f"max |sigma_dpjax / sigma_dp_accounting - 1| over {m} targets: {agree:.2e}")


if __name__ == "__main__":
    main()
