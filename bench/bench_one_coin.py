"""Flipped Huber and OSGT for a ``K``-dim query on one Poisson coin per use, beside the ends.

For each setting ``(K, T, q, epsilon, delta)`` (``linf = 1`` per coordinate, the corner
``l2 = sqrt(K)``, ``l1 = K``) one process calibrates, in this order, the Gaussian mechanism
(``l2 = sqrt(K)``: the family's shape-0 member), the Laplace mechanism on one coin (its
Laplace end), flipped Huber and OSGT (:mod:`dpjax.calibration.one_coin_family`), and prints
each one's per-coordinate variance, its ratio to the Gaussian's, the member that won, the
certified delta and the CPU seconds of the call (the first call of a process pays its
compiles).  Nothing here is asserted: ``tests/calibration/test_one_coin_family.py`` checks
the certificates and that neither end is beaten.

    python bench/bench_one_coin.py [--case small|medium|k20]
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import dpjax

CASES = {
    "small": (2, 2, 0.2, 1.0, 1e-5),
    "medium": (4, 10, 0.1, 0.3, 1e-6),
    "k20": (20, 100, 0.01, 2.0, 1e-5),
}


def run(k: int, uses: int, q: float, eps: float, delta: float) -> None:
    common = dict(epsilon=eps, delta=delta, compositions=uses, sampling_rate=q)
    calls = [
        ("gaussian", dict(l2=math.sqrt(k), **common)),
        ("laplace", dict(dim=k, linf=1.0, l1=float(k), **common)),
        ("flipped-huber", dict(dim=k, linf=1.0, **common)),
        ("osgt", dict(dim=k, linf=1.0, **common)),
    ]
    print(f"K = {k}, T = {uses}, q = {q}, epsilon = {eps}, delta = {delta:g}")
    print(f"  {'mechanism':<14} {'variance':>11} {'/ gaussian':>10} {'member':>9} "
          f"{'delta_at':>11} {'CPU s':>7}")
    base = None
    for name, kw in calls:
        t0 = time.process_time()
        cal = dpjax.calibrate(name, **kw)
        cpu = time.process_time() - t0
        var = float(cal.variance)
        base = var if base is None else base
        member = "-" if cal.member is None else str(cal.member)
        print(f"  {name:<14} {var:>11.6g} {var / base:>10.5f} {member:>9} "
              f"{float(cal.delta_at_params):>11.4g} {cpu:>7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    args = parser.parse_args()
    print(f"# dpjax {dpjax.__version__}; {platform.machine()}, "
          f"{platform.python_version()}; CPU seconds of each calibrate call")
    for case in args.case or list(CASES):
        run(*CASES[case])


if __name__ == "__main__":
    main()
