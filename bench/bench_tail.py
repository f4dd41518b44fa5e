"""Composed DP-SGD accounting at small delta: dpjax vs dp-accounting (PLD, RDP), prv-accountant.

    python bench/bench_tail.py

Epsilon at delta = 1e-5, 1e-8, 1e-10, 1e-12, 1e-15, 1e-30 for the Poisson-subsampled Gaussian
(sigma, q, T) in {(1, 0.01, 1000), (0.8, 0.004, 10^4), (2, 0.1, 100)}, in the same run, with
the time per query (dpjax timed warm, after one compiling call; all deltas in one call).

* dpjax: ``dpjax.account`` (certified upper bound: min of the pessimistic PLD engine and the
  Chernoff / RDP conversion of the exact integer- and fractional-order moments), and with
  ``bracket=True`` its certified lower end (optimistic PLD); the table shows the bracket
  width ``upper - lower`` (below delta 1e-7 the lower end also goes through the tilted
  optimistic composition, :mod:`dpjax.accounting.bracket.tilted`, so the width stays
  near the grid's below the plain FFT's ~1e-12 round-off floor).  Time per query: one warm
  ``account`` call over all deltas, divided by their number (upper end alone, and with the bracket).
* dp-accounting PLD: pessimistic connect-the-dots at ``value_discretization_interval = 1e-4``
  (returns inf where its grid truncation exceeds delta).
* dp-accounting RDP: its default orders (fractional 1.1 .. 10.9, integers 11 .. 63, 128 .. 1024).
* prv-accountant: ``DPSGDAccountant`` (eps_error 1e-3; its delta_error must be below delta,
  so it is run with delta_error = delta / 10 where that is representable; it reports an
  estimate with error bounds, not a certificate).

* reference: ``bench/tilted_reference.py``, an independent NumPy/SciPy tilted-FFT composition
  of the subsampled Gaussian (exact normal CDFs, each cell's mass split half to each end,
  bin width 5e-5; validated against the T-fold Gaussian closed form down to 1e-30); the
  columns ``dpjax/ref-1`` (acceptance: within 0.5%) and ``in`` (the bracket contains it).
* small rates (``q < 1e-3``, e.g. (2, 1e-5, 10^6)): the reference is skipped (its bin width
  is coarser than a use's loss) and dp-accounting's pessimistic connect-the-dots at interval
  1e-6 is shown instead (``dpacc CTD 1e-6``; issue 39: 0.02023 at delta 1e-7).
* dpjax at delta = 1e-5 alone (the speed acceptance): warm time of one ``account`` call,
  beside dp-accounting's PLD accountant (compose and one query, the same bin width 1e-4).
* ledger: ``dpjax.accounting.PLDAccountant`` on the same event (the ledger path of
  ``dpjax.account(event)`` and of the DP-SGD accountant; tilted below delta 1e-7, and never
  above the RDP bound of the exact moments, :mod:`dpjax.accounting.rdp.ledger`), warm.

* Opacus (``pip install opacus``; it needs torch): ``RDPAccountant`` and ``PRVAccountant``
  (its defaults: eps_error 0.01, delta_error delta / 1000) with ``history = [(sigma, q, T)]``;
  the last column ``opacus RDP / PRV`` (PRV refuses deltas where, in its words, floating
  point errors dominate).  Without Opacus the column says "not installed".
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import dp_accounting  # noqa: E402
from dp_accounting import pld, rdp  # noqa: E402

import dpjax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilted_reference  # noqa: E402

SETTINGS = [(1.0, 0.01, 1000), (0.8, 0.004, 10**4), (2.0, 0.1, 100), (2.0, 1e-5, 10**6)]
#: Below this rate the per-use loss is of order q: dp-accounting's connect-the-dots at
#: interval 1e-6 (:data:`FINE`) is affordable and the best certified peer bound, and the
#: reference's bin width (5e-5) is too coarse to be one.
SMALL_Q = 1e-3
FINE = 1e-6
DELTAS = np.array([1e-5, 1e-8, 1e-10, 1e-12, 1e-15, 1e-30])


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def event(sigma, q, steps):
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
    )


def dpjax_eps(sigma, q, steps, bracket=False):
    out = dpjax.account(
        "gaussian", {"sigma": sigma}, compositions=steps, sampling_rate=q, delta=DELTAS,
        bracket=bracket,
    )
    return out.bracket if bracket else np.atleast_1d(out)


def ledger_eps(sigma, q, steps):
    """``dpjax.accounting.PLDAccountant`` (the event-ledger path) at :data:`DELTAS`."""
    from dpjax.accounting import PLDAccountant

    acc = PLDAccountant().compose(event(sigma, q, steps))
    return [acc.get_epsilon(float(d)) for d in DELTAS]


def opacus_eps(sigma, q, steps):
    """Opacus's RDP and PRV epsilons at :data:`DELTAS` (strings) and their total times."""
    try:
        from opacus.accountants import PRVAccountant, RDPAccountant
    except ImportError:
        return ["not installed"] * len(DELTAS), (0.0, 0.0)
    out, times = [], [0.0, 0.0]
    for d in DELTAS:
        cells = []
        for k, cls in enumerate((RDPAccountant, PRVAccountant)):
            acc = cls()
            acc.history = [(sigma, q, steps)]
            try:
                e, t = timed(lambda acc=acc, d=d: acc.get_epsilon(float(d)))
                times[k] += t
                cells.append(f"{float(e):.4f}")
            except ValueError:  # PRV: "floating point errors will dominate"
                cells.append("refused")
        out.append(" / ".join(cells))
    return out, tuple(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", type=int, nargs="+", choices=range(len(SETTINGS)), metavar="I",
        help=f"run only these settings (indices into {SETTINGS}; default all)",
    )
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}; jax {jax.__version__}")
    for i, (sigma, q, steps) in enumerate(SETTINGS):
        if args.only is None or i in args.only:
            one_setting(sigma, q, steps)


def one_setting(sigma, q, steps) -> None:
    """Print one setting's table."""
    print(f"\n(sigma, q, T) = ({sigma}, {q}, {steps})")
    _, cold = timed(lambda: dpjax_eps(sigma, q, steps))
    ours, warm = timed(lambda: dpjax_eps(sigma, q, steps))
    dpjax_eps(sigma, q, steps, bracket=True)  # compiles the optimistic kernel
    (lower, upper), warm_b = timed(lambda: dpjax_eps(sigma, q, steps, bracket=True))
    acc = rdp.RdpAccountant()
    acc.compose(event(sigma, q, steps))
    rdp_eps, t_rdp = timed(lambda acc=acc: [acc.get_epsilon(d) for d in DELTAS])

    def pld_eps():
        a = pld.PLDAccountant(value_discretization_interval=1e-4)
        a.compose(event(sigma, q, steps))
        return [a.get_epsilon(d) for d in DELTAS]

    pld_out, t_pld = timed(pld_eps)

    def pld_one():
        a = pld.PLDAccountant(value_discretization_interval=1e-4)
        a.compose(event(sigma, q, steps))
        return a.get_epsilon(1e-5)

    t_pld_one = min(timed(pld_one)[1] for _ in range(2))
    ledger_eps(sigma, q, steps)  # compiles
    ledger, t_ledger = timed(lambda: ledger_eps(sigma, q, steps))
    prv = []
    t_prv = 0.0
    try:
        from prv_accountant.dpsgd import DPSGDAccountant

        for d in DELTAS:
            try:
                a = DPSGDAccountant(
                    noise_multiplier=sigma, sampling_probability=q, eps_error=1e-3,
                    delta_error=d / 10.0, max_steps=steps,
                )
                r, t = timed(lambda a=a, d=d: a.compute_epsilon(num_steps=steps, delta=d))
                t_prv += t
                prv.append(f"{r[1]:.4f} [{r[0]:.4f}, {r[2]:.4f}]")
            except Exception as err:  # prv-accountant refuses tiny deltas
                prv.append(f"error: {type(err).__name__}")
    except ImportError:
        prv = ["not installed"] * len(DELTAS)
    opacus, t_opacus = opacus_eps(sigma, q, steps)
    one = lambda: dpjax.account(  # noqa: E731
        "gaussian", {"sigma": sigma}, compositions=steps, sampling_rate=q, delta=1e-5)
    one()
    t_one = min(timed(one)[1] for _ in range(3))
    if q < SMALL_Q:
        def ctd():
            one = pld.privacy_loss_distribution.from_gaussian_mechanism(
                sigma, value_discretization_interval=FINE, sampling_prob=q,
                pessimistic_estimate=True, use_connect_dots=True)
            composed = one.self_compose(steps)
            return [composed.get_epsilon_for_delta(d) for d in DELTAS]

        ref, t_ref = timed(ctd)
    else:
        ref, t_ref = timed(
            lambda: [tilted_reference.epsilon(sigma, q, steps, d) for d in DELTAS])
    n = len(DELTAS)
    print(f"  dpjax: {warm:.3f} s warm for all {n} deltas ({warm / n:.3f} s/query; {cold:.1f} s "
          f"cold), with bracket {warm_b:.3f} s ({warm_b / n:.3f} s/query); dp-accounting RDP "
          f"{t_rdp / n:.4f} s/query, PLD {t_pld:.2f} s (ratio {t_pld / warm:.1f}x), "
          f"prv-accountant {t_prv / n:.2f} s/query, Opacus RDP / PRV {t_opacus[0] / n:.3f} / "
          f"{t_opacus[1] / n:.2f} s/query; delta = 1e-5 alone {t_one:.3f} s warm against "
          f"dp-accounting PLD {t_pld_one:.3f} s (compose + query: {t_pld_one / t_one:.1f}x); "
          f"PLDAccountant (ledger) {t_ledger / n:.3f} s/query warm; "
          f"{'dpacc CTD 1e-6' if q < SMALL_Q else 'reference'} {t_ref / n:.1f} s/query")
    name = "dpacc CTD" if q < SMALL_Q else "reference"
    print(f"  {'delta':>7} {'dpjax':>9} {'lower':>9} {'width':>8} {name:>10} {'dpjax/ref-1':>11} "
          f"{'in':>3} {'dpacc RDP':>10} {'dpacc PLD':>10}  {'dpjax/RDP-1':>11}  "
          f"{'ledger':>9}  prv-accountant est [lo, hi]  opacus RDP / PRV")
    for i, d in enumerate(DELTAS):
        flag = "  (above RDP)" if ours[i] > rdp_eps[i] else ""
        assert upper[i] == ours[i]  # the bracket's upper end is what account reports
        inside = "yes" if lower[i] <= ref[i] <= upper[i] else "NO"
        if q < SMALL_Q:  # dp-accounting's CTD is an upper bound, not the truth
            inside = "-"
        print(f"  {d:7.0e} {ours[i]:9.4f} {lower[i]:9.4f} {upper[i] - lower[i]:8.4f} "
              f"{ref[i]:10.4f} "
              f"{ours[i] / ref[i] - 1:+11.2e} {inside:>3} {rdp_eps[i]:10.4f} "
              f"{pld_out[i]:10.4f}  {ours[i] / rdp_eps[i] - 1:+11.2e}  {ledger[i]:9.4f}  {prv[i]}  "
              f"{opacus[i]}{flag}")


if __name__ == "__main__":
    main()
