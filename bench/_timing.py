"""Timing helpers shared by the bench scripts (run as ``python bench/<script>.py``)."""

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
