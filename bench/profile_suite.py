"""Where the test suite's time goes: XLA compiling, per program and per test (issue 36).

Runs pytest (README's command by default: the default tier, one worker per core) from an
empty persistent compilation cache, with :mod:`_suite_profile_plugin` listening to JAX's
compile events in every worker, then reports:

* the run's wall time and the summed test time, and how much of it is XLA's backend
  compile, tracing and lowering, and the persistent cache's hits with the time spent
  loading them (JAX's own ``compile_time_saved_sec`` is not reported: the cache stores
  each program's compile time in whole seconds, so for the sub-second programs of a test
  run it reads as a loss);
* the compiles over ``--big`` seconds (whole engine programs) against the small ones
  (op-by-op dispatch of eager ``jnp`` calls);
* the programs that cost the most compile time, each with its number of compiles and the
  number of *distinct* programs of that name the persistent cache holds at the end (equal
  counts: every compile was a new program, none repeated between workers);
* the slowest tests with their compile share;
* the call sites of the small compiles (op-by-op dispatch), by the deepest ``dpjax`` frame.

    python bench/profile_suite.py [--top N] [--big SECONDS] [--out FILE] [--min-compile-time S]
                                  [-- PYTEST ARGS]

e.g. ``python bench/profile_suite.py -- -m slow`` profiles the slow tier, ``-- tests/
accounting -n 0`` one folder in one process.  Nothing is timed inside dpjax: the numbers
come from JAX's own monitoring events.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_EVENTS = {
    "backend compile": "/jax/core/compile/backend_compile_duration",
    "tracing": "/jax/core/compile/jaxpr_trace_duration",
    "lowering": "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "loaded from the persistent cache": "/jax/compilation_cache/cache_retrieval_time_sec",
}


def merge(reports: list[dict]) -> dict:
    """Sum the per-process JSON reports of :mod:`_suite_profile_plugin`.

    Args:
      reports: the decoded files, one per pytest process.

    Returns:
      ``{"events": {name: [s, n]}, "programs": {name: [s, n]}, "tests": {id: [wall, s, n]},
      "sites": {site: [s, n]}}``.

    Example:
      >>> a = {"events": {"e": [1.0, 2]}, "programs": {"p": [1.0, 2]}, "tests": {"t": [3, 1, 2]}}
      >>> b = {"events": {"e": [0.5, 1]}, "programs": {}, "tests": {"u": [1, 0, 0]}}
      >>> m = merge([a, b]); m["events"]["e"], sorted(m["tests"])
      ([1.5, 3], ['t', 'u'])
    """
    out = {key: collections.defaultdict(lambda: [0.0, 0])
           for key in ("events", "programs", "sites")}
    out["tests"] = {}
    for rep in reports:
        for key in ("events", "programs", "sites"):
            for name, (seconds, count) in rep.get(key, {}).items():
                out[key][name][0] += seconds
                out[key][name][1] += count
        out["tests"].update(rep["tests"])
    return {k: dict(v) for k, v in out.items()}


def _file_name(program: str) -> str:
    """A program name as JAX's cache file names spell it (``jit(<lambda>)`` ->
    ``jit(_lambda_)``: characters other than letters, digits and ``_`` become ``_``)."""
    inner = program[4:-1] if program.startswith("jit(") else program
    return f"jit({re.sub(r'[^0-9A-Za-z_]', '_', inner)})"


def cached_programs(cache_dir: str) -> collections.Counter:
    """Distinct programs per name in a JAX persistent cache folder (``jit_<name>-<key>-...``),
    keyed as :func:`_file_name` spells the program name.

    Example:
      >>> import tempfile, os
      >>> d = tempfile.mkdtemp()
      >>> for f in ("jit_kernel-ab12-cache", "jit_kernel-cd34-cache", "jit__lambda_-ef56-cache"):
      ...     open(os.path.join(d, f), "w").close()
      >>> sorted(cached_programs(d).items())
      [('jit(_lambda_)', 1), ('jit(kernel)', 2)]
    """
    names = collections.Counter()
    for entry in os.listdir(cache_dir):
        match = re.match(r"jit_(.+?)-[0-9a-f]+", entry)
        if match and not entry.endswith("-atime"):
            names[f"jit({match.group(1)})"] += 1
    return names


def report(merged: dict, wall: float, distinct: collections.Counter, top: int,
           big: float) -> str:
    """The text report of one profiled run (see the module docstring)."""
    ev, programs, tests = merged["events"], merged["programs"], merged["tests"]
    summed = sum(t[0] for t in tests.values())
    lines = [f"wall {wall:.0f} s; {len(tests)} tests, summed test time {summed:.0f} s"]
    for label, key in _EVENTS.items():
        s, n = ev.get(key, [0.0, 0])
        lines.append(f"  {label:32s} {s:8.0f} s  {n:6d} events  ({s / max(summed, 1e-9):.0%})")
    large = [(s, n) for s, n in programs.values() if n and s / n > big]
    small = [(s, n) for s, n in programs.values() if n and s / n <= big]
    n_large, s_large = sum(n for _, n in large), sum(s for s, _ in large)
    n_small, s_small = sum(n for _, n in small), sum(s for s, _ in small)
    lines.append(f"  compiles of programs averaging over {big} s: {n_large} ({s_large:.0f} s);"
                 f" the rest: {n_small} ({s_small:.0f} s)")
    lines.append(f"  distinct programs in the persistent cache: {sum(distinct.values())}")
    lines.append("")
    lines.append(f"{'program':40s} {'compile s':>9s} {'compiles':>8s} {'distinct':>8s}")
    for name, (s, n) in sorted(programs.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{name[:40]:40s} {s:9.1f} {n:8d} {distinct.get(_file_name(name), 0):8d}")
    lines.append("")
    lines.append(f"{'test':96s} {'wall s':>7s} {'compile':>7s} {'n':>4s}")
    for tid, (w, s, n) in sorted(tests.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{tid[:96]:96s} {w:7.1f} {s:7.1f} {n:4d}")
    sites = merged.get("sites", {})
    lines.append("")
    lines.append(f"small compiles (<= {_plugin_small()} s each) by the deepest dpjax frame: "
                 f"{sum(n for _, n in sites.values())} "
                 f"({sum(s for s, _ in sites.values()):.0f} s)")
    for site, (s, n) in sorted(sites.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{site[:96]:96s} {s:7.1f} {n:6d}")
    return "\n".join(lines)


def _plugin_small() -> float:
    """:data:`_suite_profile_plugin.SMALL_SECONDS`, read without importing JAX."""
    with open(os.path.join(HERE, "_suite_profile_plugin.py")) as f:
        return float(re.search(r"^SMALL_SECONDS = ([0-9.]+)", f.read(), re.M).group(1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30, help="rows of each table")
    parser.add_argument("--big", type=float, default=0.5,
                        help="seconds per compile above which a program counts as large")
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument("--min-compile-time", default="0.05",
                        help="JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS of the run (as .ci/run)")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=cache, DPJAX_SUITE_PROFILE_DIR=out,
                   JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=args.min_compile_time,
                   PYTHONPATH=os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])))
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "-p", "_suite_profile_plugin", *args.pytest_args], cwd=ROOT, env=env,
        )
        wall = time.perf_counter() - start
        reports = []
        for name in sorted(os.listdir(out)):
            with open(os.path.join(out, name)) as f:
                reports.append(json.load(f))
        text = report(merge(reports), wall, cached_programs(cache), args.top, args.big)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
