"""Timing helpers shared by the bench scripts (run as ``python bench/<script>.py``)."""

import json
import time

import jax


def mean_time(fn, repeats: int) -> float:
    """Mean wall time of ``fn()`` over ``repeats`` calls, after one warm-up call (compile).

    Args:
      fn: a zero-argument callable returning JAX arrays (waited for).
      repeats: number of timed calls.

    Returns:
      Seconds per call.
    """
    jax.block_until_ready(fn())  # warm-up / compile
    t = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(fn())
    return (time.perf_counter() - t) / repeats


def emit_json(row: dict, out: str | None) -> None:
    """Print ``row`` as one JSON line and append it to ``out`` (when given) as it lands.

    Args:
      row: the measurement, JSON-serialisable.
      out: a file to append the line to, or ``None``.
    """
    line = json.dumps(row)
    print(line, flush=True)
    if out:
        with open(out, "a") as f:
            f.write(line + "\n")
