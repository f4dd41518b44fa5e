"""CPU cost of the PLD engine's sizing program: trace, lower and compile (issue 36).

Every cold engine call (``dpjax account``, ``dpjax.account``, a calibration) first runs
:func:`dpjax.accounting.pld.plan._sizing` (one program per family and row count) to size
its grid and FFT.  This times, in this process, the three steps of that program for a few
families with the ``dpjax`` command's XLA flags (``dpjax.cli._main.one_shot_flags``), in
CPU seconds of the whole process (XLA compiles on several threads), and reports the size of
its StableHLO module.  Run it in each tree to compare two versions, e.g.

    DPJAX_NO_COMPILATION_CACHE=1 PYTHONPATH=/path/to/other/checkout \
        python bench/bench_sizing_program.py

No peer has this program; what a user waits for is measured against dp-accounting by
``bench/bench_first_call.py``.  Nothing is timed inside dpjax.
"""

from __future__ import annotations

import os
import time

from dpjax.cli._main import add_xla_flags, one_shot_flags

add_xla_flags(one_shot_flags(), os.environ)  # before any backend starts

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import dpjax  # noqa: E402
from dpjax.accounting.pld import plan  # noqa: E402
from dpjax.accounting.pld.compose import LOG_WINDOW_TAIL  # noqa: E402
from dpjax.noise import Gaussian, Laplace  # noqa: E402

jax.config.update("jax_enable_x64", True)

#: (name, noise_fn, sampling rate or None): the issue command's family, and a plain one.
CASES = (
    ("gaussian, Poisson-subsampled", Gaussian.from_scale, 0.01),
    ("laplace", Laplace.from_scale, None),
)


def time_sizing(noise_fn, sampling_rate) -> tuple[float, float, float, int]:
    """``(trace, lower, compile)`` CPU seconds of one new sizing program and its StableHLO
    line count (a fresh :func:`jax.jit` of the function, so nothing is reused)."""
    args = (jnp.asarray([1.0]), jnp.asarray([0.0]), jnp.float64(1.0),
            jnp.float64(1.0 if sampling_rate is None else sampling_rate), jnp.float64(1000.0),
            jnp.float64(1e-40), jnp.float64(LOG_WINDOW_TAIL))
    static = dict(noise_fn=noise_fn, subsampled=sampling_rate is not None)
    jitted = jax.jit(plan._sizing.__wrapped__, static_argnames=tuple(static))
    t0 = time.process_time()
    traced = jitted.trace(*args, **static)
    t1 = time.process_time()
    lowered = traced.lower()
    t2 = time.process_time()
    lowered.compile()
    t3 = time.process_time()
    return t1 - t0, t2 - t1, t3 - t2, lowered.as_text().count("\n")


def main() -> None:
    print(f"# dpjax at {os.path.dirname(dpjax.__file__)}; XLA_FLAGS={os.environ['XLA_FLAGS']}")
    for name, noise_fn, q in CASES:
        trace, lower, comp, lines = time_sizing(noise_fn, q)
        print(f"{name:<30} trace {trace:.3f} lower {lower:.3f} compile {comp:.3f} "
              f"total {trace + lower + comp:.3f} CPU s; StableHLO {lines} lines")


if __name__ == "__main__":
    main()
