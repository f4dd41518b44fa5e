"""DP-SGD at a tiny rate and a huge number of steps: dpjax's certified epsilon vs dp-accounting
and an exact inversion (issue 39, item 3).

    python bench/bench_tiny_rate.py [--only I ...]

For the Poisson-subsampled Gaussian at (sigma, q, T) in :data:`SETTINGS` and delta in
:data:`DELTAS`, in the same run:

* dpjax: ``dpjax.account`` (certified upper end), time of one warm call over all deltas;
* dp-accounting: pessimistic connect-the-dots PLD at ``value_discretization_interval`` 1e-5
  and 1e-6 (its certified upper bound up to FFT round-off), compose + queries timed;
* exact: the inversion of the T-fold moment generating function along a vertical line
  (``tests/_references.py``, ``subsampled_gaussian_delta_bromwich``; matches the T-fold
  Gaussian closed form to 1e-9 at q = 1), solved for epsilon by the secant method on
  ``log delta`` (the worse adjacency; the remove adjacency's samples above ``x_cut``, where
  ``T Q(x > x_cut) = 1e-4 min(delta)``, are counted at +infinity, their mass added in full).

Ratios are ``dpjax / exact - 1`` and ``dpjax / dp-accounting``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import time

import jax
import numpy as np
from scipy.special import ndtri

jax.config.update("jax_enable_x64", True)

import dpjax  # noqa: E402


def _load_references():
    """``tests/_references.py`` loaded from its path (``tests/`` on ``sys.path`` would shadow
    the top-level ``solvers`` package with ``tests/solvers``)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                        "_references.py")
    spec = importlib.util.spec_from_file_location("_references", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bromwich = _load_references().subsampled_gaussian_delta_bromwich

SETTINGS = [(0.8, 1e-6, 10**7), (2.0, 1e-5, 10**6)]
DELTAS = np.array([1e-5, 1e-7, 1e-8])
INTERVALS = (1e-5, 1e-6)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def exact_epsilon(sigma, q, steps, delta, start):
    """The epsilon at which the exact delta (worse adjacency) is ``delta``: secant steps on
    ``log delta`` until within ``1e-5`` of ``log delta`` (an error if 30 do not get there; a
    run that stopped after a fixed 8 steps reported 0.026760 at (0.8, 1e-6, 10^7, 1e-8),
    where the reference's delta at 0.026760 is 9.17e-9 and the exact epsilon ~0.02665)."""

    # the remove adjacency's samples above x_cut go to +infinity in full: T Q(x > x_cut) is
    # kept at 1e-4 of the least delta asked
    x_cut = sigma * float(-ndtri(1e-4 * float(np.min(DELTAS)) / steps))

    def log_delta(eps):
        return np.log(max(bromwich(eps, sigma, q, steps, "remove", x_cut=x_cut),
                          bromwich(eps, sigma, q, steps, "add")))

    target = np.log(delta)
    e0, e1 = 0.98 * start, start
    l0, l1 = log_delta(e0), log_delta(e1)
    for _ in range(30):
        if abs(l1 - target) < 1e-5:
            return e1
        e0, l0, e1 = e1, l1, e1 + (target - l1) * (e1 - e0) / (l1 - l0)
        l1 = log_delta(e1)
    raise RuntimeError(f"the exact epsilon at delta {delta:g} did not converge (last {e1})")


def dp_accounting_ctd(sigma, q, steps, interval):
    from dp_accounting.pld import privacy_loss_distribution as dp_pld

    one = dp_pld.from_gaussian_mechanism(
        sigma, value_discretization_interval=interval, sampling_prob=q,
        pessimistic_estimate=True, use_connect_dots=True)
    composed = one.self_compose(steps)
    return [composed.get_epsilon_for_delta(float(d)) for d in DELTAS]


def one_setting(sigma, q, steps) -> None:
    print(f"\n(sigma, q, T) = ({sigma}, {q}, {steps})")

    def ours():
        return np.atleast_1d(dpjax.account(
            "gaussian", {"sigma": sigma}, compositions=steps, sampling_rate=q, delta=DELTAS))

    _, cold = timed(ours)
    dpjax.accounting.pld.engine._ANSWERS.clear()  # time the composition, not the memo
    got, warm = timed(ours)
    peers = {}
    for interval in INTERVALS:
        peers[interval] = timed(lambda interval=interval: dp_accounting_ctd(
            sigma, q, steps, interval))
    exact = [exact_epsilon(sigma, q, steps, d, e) for d, e in zip(DELTAS, got, strict=True)]
    print(f"  dpjax {warm:.1f} s warm ({cold:.1f} s cold) for {len(DELTAS)} deltas; "
          + "; ".join(f"dp-accounting CTD {i:g}: {t:.1f} s" for i, (_, t) in peers.items()))
    print(f"  {'delta':>7} {'dpjax':>9} {'exact':>9} {'dpjax/exact-1':>13} "
          + " ".join(f"{'dpacc ' + format(i, 'g'):>12} {'ratio':>6}" for i in INTERVALS))
    for k, d in enumerate(DELTAS):
        cells = " ".join(f"{peers[i][0][k]:12.5f} {got[k] / peers[i][0][k]:6.3f}"
                         for i in INTERVALS)
        print(f"  {d:7.0e} {got[k]:9.5f} {exact[k]:9.5f} {got[k] / exact[k] - 1:+13.3f} {cells}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=int, nargs="+", choices=range(len(SETTINGS)),
                        metavar="I", help=f"run only these settings (indices into {SETTINGS})")
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}; "
          f"{os.cpu_count()} cores; jax {jax.__version__}")
    for i, setting in enumerate(SETTINGS):
        if args.only is None or i in args.only:
            one_setting(*setting)


if __name__ == "__main__":
    main()
