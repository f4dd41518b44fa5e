"""The hardening issue's deep-tail queries, as a user runs them: ``dpjax account`` at delta = 1e-30.

    python bench/bench_deep_tail.py [--out FILE.jsonl]

Each case runs the command twice in a fresh process: **cold** (an empty compilation cache,
the first query on a machine) and **warm** (the cache the cold run filled), wall time of
the whole process (import included).  In the same run, the peer a user would pick instead:
dp-accounting's RDP accountant on the same event (instant, but its answer is an
uncertified float and looser; dp-accounting's PLD accountant returns inf at this delta,
its grid truncation is above it).  The target (issue 34): every case under a minute on
2 cores.

Cases: Laplace (scale 1) composed 3e4 and 1e5 times; the Poisson-subsampled Gaussian
(sigma 1) composed 1e9 times at q = 1e-3 and 1e-6.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import emit_json  # noqa: E402

CASES = [
    ("laplace", "scale", 1.0, 30_000, None),
    ("laplace", "scale", 1.0, 100_000, None),
    ("gaussian", "sigma", 1.0, 10**9, 1e-3),
    ("gaussian", "sigma", 1.0, 10**9, 1e-6),
]
DELTA = 1e-30


def _command(family, name, value, compositions, rate) -> list[str]:
    cmd = [
        sys.executable, "-m", "dpjax", "account", family, "--param", f"{name}={value}",
        "--compositions", str(compositions), "--delta", str(DELTA), "--json",
    ]
    return cmd + (["--sampling-rate", str(rate)] if rate is not None else [])


def _timed(cmd, cache: str) -> tuple[float, float]:
    """Wall seconds of the whole process, and the epsilon its ``--json`` reports."""
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=cache)
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t, json.loads(out)["epsilon"]


def _rdp_peer(family, value, compositions, rate) -> tuple[float, float] | None:
    """dp-accounting's RDP epsilon and its time, or ``None`` where it has no answer."""
    try:
        import dp_accounting
        from dp_accounting import rdp
    except ImportError:
        return None
    event = (
        dp_accounting.GaussianDpEvent(value) if family == "gaussian"
        else dp_accounting.LaplaceDpEvent(value)
    )
    if rate is not None:
        event = dp_accounting.PoissonSampledDpEvent(rate, event)
    t = time.perf_counter()
    try:
        acc = rdp.RdpAccountant()
        acc.compose(event, compositions)
        eps = acc.get_epsilon(DELTA)
    except Exception:  # an event it does not support
        return None
    return eps, time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="append JSON lines to this file")
    args = parser.parse_args()
    print(f"# {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}")
    for family, name, value, compositions, rate in CASES:
        cmd = _command(family, name, value, compositions, rate)
        with tempfile.TemporaryDirectory() as cache:
            cold, answer = _timed(cmd, cache)
            warm, again = _timed(cmd, cache)
        peer = _rdp_peer(family, value, compositions, rate)
        emit_json(
            {
                "family": family, name: value, "compositions": compositions,
                "sampling_rate": rate, "delta": DELTA, "dpjax_epsilon": answer,
                "same_answer_warm": answer == again, "cold_s": round(cold, 2),
                "warm_s": round(warm, 2),
                "dp_accounting_rdp_epsilon": None if peer is None else peer[0],
                "dp_accounting_rdp_s": None if peer is None else round(peer[1], 4),
            },
            args.out,
        )


if __name__ == "__main__":
    main()
