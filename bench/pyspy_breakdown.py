"""Where a test run's Python time goes, from py-spy's sampled stacks (issue 36).

:mod:`profile_suite` reads JAX's own compile events; this reads what a sampling profiler
saw instead, so it also sees what no event reports: Python-side lowering (the MLIR context
JAX creates per program), writing the persistent compilation cache, pytest's collection
and assertion rewriting, the garbage collections pytest runs at the end of a session, and
reference code (mpmath, dp-accounting) in the tests.  Record a run with py-spy (not a
dependency of dpjax; ``pip install py-spy``) in its raw (collapsed-stack) format, then read
it:

    py-spy record --subprocesses -r 29 -f raw -o run.txt -- python -m pytest -q
    python bench/pyspy_breakdown.py run.txt [--rate 29] [--top 30]

py-spy samples threads that hold the GIL or run Python; XLA's backend compile and the
compiled programs run without the GIL, so they are mostly not in these samples (their
share is :mod:`profile_suite`'s).  Every sample goes to the first stage of :data:`STAGES`
whose marker is in its stack, else to the package of its innermost frame; each test gets
the samples whose stack passes through its function (or a fixture in its file).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys

#: (stage, markers): a sample whose stack holds any marker (a frame's function name, or a
#: file name) belongs to the first stage listed that matches.
STAGES = (
    ("pytest's session-end collections", ("gc_collect_harder",)),
    ("persistent cache write", ("_cache_write",)),
    ("XLA compile (Python side)", ("backend_compile", "compile_or_get_cached")),
    ("MLIR context per program", ("make_ir_context",)),
    ("lowering", ("lower_jaxpr_to_module", "jaxpr_subcomp", "_cached_lowering",
                  "lower_sharding_computation")),
    ("tracing", ("trace_to_jaxpr", "_create_pjit_jaxpr")),
    ("collection and imports", ("pytest_collection", "_find_and_load")),
)

_PACKAGES = ("mpmath", "dp_accounting", "cvxpy", "scipy", "numpy", "hypothesis", "dpjax",
             "solvers", "jax", "_pytest", "execnet")
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^:()]*):\d+\)$")
_TEST = re.compile(r"^(?P<function>\w+) \((?P<file>[^:()]*test_\w+\.py):\d+\)$")


def stage_of(frames: list[str]) -> str:
    """The stage of one sampled stack (:data:`STAGES`, else ``run: <package>``).

    Args:
      frames: the stack, outermost frame first, each ``"function (file:line)"``.

    Returns:
      The stage's name.

    Example:
      >>> stage_of(["main (x.py:1)", "trace_to_jaxpr (jax/_src/pe.py:9)", "f (dpjax/a.py:2)"])
      'tracing'
      >>> stage_of(["main (x.py:1)", "mpf_exp (mpmath/libmp/libelefun.py:3)"])
      'run: mpmath'
    """
    stack = ";".join(frames)
    for stage, markers in STAGES:
        if any(marker in stack for marker in markers):
            return stage
    match = _FRAME.match(frames[-1]) if frames else None
    path = match.group("file") if match else ""
    for package in _PACKAGES:
        if path.startswith(package + "/") or f"/{package}/" in path:
            return f"run: {package}"
    return "run: tests" if "test_" in path else "run: other"


def test_of(frames: list[str]) -> str | None:
    """The test a stack belongs to: ``file::function`` of its outermost ``test_*`` frame in
    a ``test_*.py`` file, else of any frame in such a file (a fixture), else ``None``.

    Args:
      frames: the stack, outermost frame first.

    Returns:
      The test's name, or ``None`` outside any test file.

    Example:
      >>> test_of(["run (pytest.py:1)", "test_a (mech/test_x.py:5)", "f (dpjax/a.py:2)"])
      'mech/test_x.py::test_a'
    """
    fixture = None
    for frame in frames:
        match = _TEST.match(frame)
        if match is None:
            continue
        name = f"{match.group('file')}::{match.group('function')}"
        if match.group("function").startswith("test_"):
            return name
        fixture = fixture or name + " (fixture)"
    return fixture


def breakdown(lines, rate: float) -> dict:
    """Seconds per stage and per test from py-spy's raw lines.

    Args:
      lines: the file's lines, each ``frame;frame;... count``.
      rate: py-spy's sampling rate (samples per second and thread).

    Returns:
      ``{"total": s, "stages": Counter, "tests": Counter, "test_stages": {test: Counter}}``
      in seconds.

    Example:
      >>> out = breakdown(["a (x.py:1);trace_to_jaxpr (j.py:2) 29", "a (x.py:1) 58"], 29.0)
      >>> out["total"], out["stages"]["tracing"]
      (3.0, 1.0)
    """
    stages, tests = collections.Counter(), collections.Counter()
    test_stages = collections.defaultdict(collections.Counter)
    total = 0.0
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        seconds = int(count) / rate
        frames = stack.split(";")
        stage, test = stage_of(frames), test_of(frames) or "(outside tests)"
        total += seconds
        stages[stage] += seconds
        tests[test] += seconds
        test_stages[test][stage] += seconds
    return {"total": total, "stages": stages, "tests": tests, "test_stages": test_stages}


def report(result: dict, top: int) -> str:
    """The breakdown as text: stages, then the ``top`` tests with their three main stages."""
    total = result["total"] or 1.0
    rows = [f"sampled thread time {result['total']:.1f} s"]
    rows += [f"{s:9.1f} s {100 * s / total:5.1f}%  {stage}"
             for stage, s in result["stages"].most_common()]
    rows.append("")
    for test, s in result["tests"].most_common(top):
        parts = ", ".join(f"{k} {v:.1f}" for k, v in result["test_stages"][test].most_common(3))
        rows.append(f"{s:9.1f} s  {test}  [{parts}]")
    return "\n".join(rows)


def main(argv=None) -> int:
    """Command line: ``python bench/pyspy_breakdown.py RAW [--rate R] [--top N]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", help="py-spy's raw output (-f raw)")
    parser.add_argument("--rate", type=float, default=29.0, help="py-spy's -r")
    parser.add_argument("--top", type=int, default=30, help="tests listed")
    args = parser.parse_args(argv)
    with open(args.raw) as f:
        print(report(breakdown(f, args.rate), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
