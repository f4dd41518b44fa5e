"""What a benchmark backend hands back for one instance (shared by the JAX and host backends)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

#: seconds a first solve of a size (the warm-up) may take beyond the time limit: process
#: start, imports, compilation (JAX, the Newton polish), caches; a warm-up over it fails
SETUP_LIMIT = 120.0


class Run(NamedTuple):
    """What a backend hands back for one instance (before verification).

    Attributes:
      x, inequality_multipliers, equality_multipliers: the point and multipliers.
      reported_status: the backend's own status code (recorded, never trusted).
      times: seconds of each timed solve, setup excluded (for cvxpy: the wall time less
        the model build and canonicalisation of that solve).
      compile_s: compile time (``nan`` for host backends; ``0`` when reused).
      error: an exception message, or ``""``.
      setup_s: setup paid on every solve besides ``times`` (median over the solves; cvxpy:
        model build and canonicalisation; ``0`` for JAX, whose setup is ``compile_s``).
    """

    x: Any
    inequality_multipliers: Any
    equality_multipliers: Any
    reported_status: int
    times: tuple
    compile_s: float = math.nan
    error: str = ""
    setup_s: float = 0.0


__all__ = ["SETUP_LIMIT", "Run"]
