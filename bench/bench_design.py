"""``dpjax design`` from a fresh process: wall and CPU time, cold and warm compilation cache.

Each run is a new ``python -m dpjax design ...`` process, so nothing compiled in one run
helps the next except JAX's persistent compilation cache:

* **cold**: an empty ``JAX_COMPILATION_CACHE_DIR`` (a new temporary folder per case);
* **warm**: a new process on the folder the cold run filled.

The cache threshold is lowered to 0 s (every compiled program is cached).  CPU time
(user + system of the child) is printed beside the wall time: on a shared machine it
is the steadier number.  With ``--per-mechanism`` the same target is also timed one
mechanism at a time (in one fresh process per cache state: each mechanism's
``calibrate`` after ``import dpjax``), which says where a design's time goes.

    python bench/bench_design.py [--case default|dim20 ...] [--repeat N] [--per-mechanism]
                                 [--root CHECKOUT]

``--root`` times another checkout of dpjax (e.g. the main branch, for a before/after
table in the same run).

Cases: ``default`` (``dpjax design``: epsilon 0.3, delta 1e-6, one coordinate,
linf 1) and ``dim20`` (``dpjax design --dim 20 --linf 1``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {"default": [], "dim20": ["--dim", "20", "--linf", "1"]}

#: one mechanism at a time, as ``dpjax.comparison.compare`` calls it (prints JSON seconds)
_PER_MECHANISM = """
import json, sys, time
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np
from dpjax.comparison import _conditions
from dpjax.mechanisms import get, names
from dpjax.mechanisms._spec import make_query
query = json.loads(sys.argv[1])
out = {}
for name in names():
    mech = get(name)
    if query["dim"] < mech.min_dim:
        continue
    t = time.perf_counter()
    for cond in _conditions(mech, "auto", query["dim"]):
        try:
            mech.calibrate_certified(np.asarray(0.3), np.asarray(1e-6),
                                     make_query(mech, query, condition=cond))
            break
        except (NotImplementedError, ValueError, ArithmeticError):
            pass
    out[name] = time.perf_counter() - t
print(json.dumps(out))
"""


def _env(cache: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_COMPILATION_CACHE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))

    env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
    env["JAX_COMPILATION_CACHE_DIR"] = cache
    env.pop("DPJAX_NO_COMPILATION_CACHE", None)
    return env


def _run(argv: list[str], cache: str) -> tuple[float, float, str]:
    """``(wall seconds, child CPU seconds, stdout)`` of ``argv`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, env=_env(cache), capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main() -> None:
    global ROOT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs="*", choices=sorted(CASES), default=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=1, help="warm runs per case")
    parser.add_argument("--per-mechanism", action="store_true")
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout of dpjax to time")
    args = parser.parse_args()
    ROOT = args.root.resolve()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"dpjax at {ROOT}; python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load {load:.1f}")
    print(f"{'case':8s}  {'cache':5s}  {'wall s':>7s}  {'cpu s':>7s}  best")
    for case in args.case:
        with tempfile.TemporaryDirectory() as cache:
            argv = [sys.executable, "-m", "dpjax", "design", *CASES[case]]
            for state in ["cold"] + ["warm"] * args.repeat:
                wall, cpu, out = _run(argv, cache)
                best = next((ln for ln in out.splitlines() if ln.startswith("best:")), "?")
                print(f"{case:8s}  {state:5s}  {wall:7.2f}  {cpu:7.2f}  {best}", flush=True)
            if args.per_mechanism:
                dim = int(CASES[case][1]) if CASES[case] else 1
                query = {"dim": dim, "l1": None, "l2": None, "linf": 1.0,
                         "compositions": 1, "sampling_rate": None}
                with tempfile.TemporaryDirectory() as fresh:
                    for state in ("cold", "warm"):
                        _, _, out = _run([sys.executable, "-c", _PER_MECHANISM,
                                          json.dumps(query)], fresh)
                        times = json.loads(out.splitlines()[-1])
                        print(f"{case:8s}  {state:5s}  per mechanism: " + ", ".join(
                            f"{k} {v:.2f}" for k, v in times.items()), flush=True)


if __name__ == "__main__":
    main()
