"""A long sweep in one process against the memory-map limit (dpjax/numerics/memory_maps.py).

Runs ``dpjax.account`` for the Poisson-subsampled Gaussian over ``sigma`` x ``K`` (60
settings, q = 0.05, delta = 1e-6) in this one process, as a notebook or a study would,
and prints each epsilon with the process's memory mappings after it, then the peak.
Every compiled program holds mappings, and past ``vm.max_map_count`` LLVM aborts the
process; dpjax releases its programs within ``HEADROOM`` of the limit.  To see both sides
without compiling 65530 mappings' worth, lower the kernel's limit first (root:
``sysctl -w vm.max_map_count=9000``; restore 65530 after) and run this once with a
checkout before 2f33e22 on ``PYTHONPATH`` (it aborts) and once with this one (it completes
with the same epsilons).  Nothing is timed inside dpjax.

    python bench/study_memory_maps.py [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

SIGMAS = (0.7, 0.9, 1.1, 1.3, 1.6, 1.9, 2.3, 2.8, 3.4, 4.1)
USES = (3, 10, 30, 100, 300, 1000)


def mappings() -> int:
    """Lines of ``/proc/self/maps``."""
    with open("/proc/self/maps", "rb") as f:
        return f.read().count(b"\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="also write the lines to this file")
    args = parser.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    import dpjax

    with open("/proc/sys/vm/max_map_count") as f:
        limit = f.read().strip()
    lines = [f"# dpjax at {os.path.dirname(dpjax.__file__)}; vm.max_map_count {limit}"]
    out = open(args.out, "w") if args.out else None  # noqa: SIM115 (lines as they come)

    def emit(line):
        print(line, flush=True)
        if out:
            print(line, file=out, flush=True)

    for line in lines:
        emit(line)
    start, peak, n = time.perf_counter(), 0, 0
    for sigma in SIGMAS:
        for uses in USES:
            eps = dpjax.account("gaussian", {"sigma": sigma}, compositions=uses,
                                sampling_rate=0.05, delta=1e-6)
            n, peak = n + 1, max(peak, mappings())
            emit(f"{n:2d} sigma {sigma} K {uses:4d} epsilon {float(eps)!r} maps {mappings()}")
    emit(f"done: {n} settings, peak maps {peak}, {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
