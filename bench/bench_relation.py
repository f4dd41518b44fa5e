"""Calibration under a neighbouring relation with Poisson subsampling, beside dp-accounting.

For each setting ``(relation, T, q, epsilon, delta)`` (the Gaussian mechanism, ``l2 = 1``)
one process calibrates ``sigma`` with ``dpjax.calibrate(..., relation=...)`` (replace-one:
the event-scale search on the certified PLD accountant,
:mod:`dpjax.calibration.event_scale`; add-or-remove: the PLD engine's search) and with
dp-accounting's ``calibrate_dp_mechanism`` over its ``PLDAccountant`` (the same relation,
``value_discretization_interval = 1e-4``, dpjax's bin width, and a relative tolerance of
``1e-5`` in ``sigma``, dpjax's), and prints both ``sigma``, the CPU seconds of each call and
their ratio.  Each library's first call pays its compiles (dpjax: XLA; the persistent cache
is off unless ``--warm``, which calibrates every setting once before timing).  dpjax's
``sigma`` is certified (re-checked at the tightest answer); dp-accounting's is its
pessimistic PLD's.  Nothing is asserted: ``tests/mechanisms/test_relation.py`` checks
dp-accounting's expected values and the certificates.

    python bench/bench_relation.py [--warm]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

CASES = [
    ("replace_one", 1, 0.2, 2.0, 1e-5),
    ("replace_one", 10, 0.1, 2.0, 1e-6),
    ("add_remove", 10, 0.2, 1.0, 1e-6),
]


def _dpjax(relation, uses, q, eps, delta) -> float:
    import dpjax

    cal = dpjax.calibrate("gaussian", eps, delta, l2=1.0, compositions=uses, sampling_rate=q,
                          relation=relation)
    return float(cal.params["sigma"])


def _dp_accounting(relation, uses, q, eps, delta) -> float:
    import dp_accounting
    from dp_accounting import mechanism_calibration as mc
    from dp_accounting.pld import pld_privacy_accountant as pa

    rel = {"replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
           "add_remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE}[relation]

    def event(sigma):
        step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
        return dp_accounting.SelfComposedDpEvent(step, uses) if uses > 1 else step

    return float(mc.calibrate_dp_mechanism(
        lambda: pa.PLDAccountant(rel, value_discretization_interval=1e-4), event, eps, delta,
        mc.LowerEndpointAndGuess(0.3, 1.0), tol=1e-5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", action="store_true",
                        help="calibrate every setting once before timing (compiled programs)")
    args = parser.parse_args()
    os.environ.setdefault("DPJAX_NO_COMPILATION_CACHE", "1")
    import dpjax

    print(f"# dpjax {dpjax.__version__}; {platform.machine()}, {platform.python_version()}, "
          f"{os.cpu_count()} CPUs; CPU seconds of each call ({'warm' if args.warm else 'cold'})")
    if args.warm:
        for case in CASES:
            _dpjax(*case)
    print(f"{'relation':<12} {'T':>4} {'q':>5} {'eps':>5} {'delta':>7} {'sigma dpjax':>12} "
          f"{'sigma dp-acc':>12} {'CPU dpjax':>10} {'CPU dp-acc':>10} {'ratio':>7}")
    for case in CASES:
        t0 = time.process_time()
        ours = _dpjax(*case)
        t1 = time.process_time()
        theirs = _dp_accounting(*case)
        t2 = time.process_time()
        relation, uses, q, eps, delta = case
        print(f"{relation:<12} {uses:>4} {q:>5} {eps:>5} {delta:>7.0e} {ours:>12.6f} "
              f"{theirs:>12.6f} {t1 - t0:>10.2f} {t2 - t1:>10.2f} "
              f"{(t1 - t0) / (t2 - t1):>7.2f}")


if __name__ == "__main__":
    main()
