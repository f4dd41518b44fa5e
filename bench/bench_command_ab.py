"""One ``dpjax`` command from two checkouts, in paired fresh processes (a before/after of a change).

Each round runs the command once from checkout A, then once from checkout B (the order
swapped every other round), each a fresh process with that checkout first on
``PYTHONPATH``, and records the child's CPU seconds (user + system).  ``--cold`` gives every
run an empty cache (a new ``XDG_CACHE_HOME``); by default each checkout keeps its own warm
cache, filled by one untimed run first.  The report gives each run, the medians, and the
paired differences ``A - B`` (the median and range, and in how many rounds B was lower): on
a shared 2-core host the process time of one command drifts by more between passes than
many changes move it, and only differences taken within a round resolve them.

    python bench/bench_command_ab.py A B [--rounds N] [--cold] [--out FILE] -- COMMAND ...

e.g. ``python bench/bench_command_ab.py /tmp/before . --rounds 10 -- account laplace --param
scale=1 --compositions 100 --delta 1e-5``.  Both checkouts' bytecode is written first
(``compileall``), as an installed package has it.  Nothing is timed inside dpjax.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(root: Path, argv: list[str], cache: str) -> float:
    """CPU seconds (user + system) of ``python -m dpjax *argv`` from checkout ``root``.

    Args:
      root: the checkout (put first on ``PYTHONPATH``).
      argv: the command's arguments after ``dpjax``.
      cache: the ``XDG_CACHE_HOME`` of the run (dpjax's compile and export caches).

    Returns:
      The child's CPU seconds.
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("JAX_COMPILATION_CACHE") and k != "DPJAX_NO_COMPILATION_CACHE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    env["XDG_CACHE_HOME"] = cache
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "dpjax", *argv], env=env, cwd=root,
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{root}: dpjax {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def paired_summary(a: list[float], b: list[float]) -> str:
    """Medians of ``a`` and ``b`` and their paired differences ``a - b``.

    Args:
      a, b: per-round CPU seconds of the two checkouts (same length).

    Returns:
      One line.

    Example:
      >>> paired_summary([2.0, 2.2, 2.4], [1.7, 2.0, 2.5])
      'median A 2.20, B 2.00; A - B median 0.20 (-0.10 to 0.30), B lower in 2 of 3 rounds'
    """
    diff = [x - y for x, y in zip(a, b, strict=True)]
    lower = sum(d > 0 for d in diff)
    return (f"median A {statistics.median(a):.2f}, B {statistics.median(b):.2f}; A - B median "
            f"{statistics.median(diff):.2f} ({min(diff):.2f} to {max(diff):.2f}), B lower in "
            f"{lower} of {len(diff)} rounds")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path, help="checkout A (e.g. the tree before a change)")
    ap.add_argument("b", type=Path, help="checkout B (e.g. the tree after it)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--cold", action="store_true", help="an empty cache for every run")
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("command", nargs="+", help="the command's arguments after `dpjax`")
    args = ap.parse_args()
    roots = [args.a.resolve(), args.b.resolve()]
    for root in roots:
        for package in ("dpjax", "solvers"):
            if (root / package).is_dir():
                compileall.compile_dir(root / package, quiet=1)
    lines = [f"# dpjax {' '.join(args.command)}; {'cold' if args.cold else 'warm'} cache; "
             f"{args.rounds} paired rounds, fresh processes, user + system CPU s; "
             f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"# A = {roots[0]}", f"# B = {roots[1]}", "# round A B"]
    print("\n".join(lines), flush=True)
    times: list[list[float]] = [[], []]
    with tempfile.TemporaryDirectory(prefix="dpjax-ab-") as tmp:
        warm = [os.path.join(tmp, "a"), os.path.join(tmp, "b")]
        if not args.cold:
            for root, cache in zip(roots, warm, strict=True):
                run_once(root, args.command, cache)  # fills this checkout's caches
        for r in range(args.rounds):
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for i in order:
                cache = tempfile.mkdtemp(dir=tmp) if args.cold else warm[i]
                times[i].append(run_once(roots[i], args.command, cache))
            lines.append(f"{r + 1} {times[0][-1]:.2f} {times[1][-1]:.2f}")
            print(lines[-1], flush=True)
    lines.append("# " + paired_summary(*times))
    print(lines[-1])
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
