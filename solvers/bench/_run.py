"""What a benchmark backend hands back for one instance (shared by the JAX and host backends)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple


class Run(NamedTuple):
    """What a backend hands back for one instance (before verification).

    Attributes:
      x, inequality_multipliers, equality_multipliers: the point and multipliers.
      reported_status: the backend's own status code (recorded, never trusted).
      times: wall seconds of each repetition.
      compile_s: compile time (``nan`` for host backends; ``0`` when reused).
      error: an exception message, or ``""``.
    """

    x: Any
    inequality_multipliers: Any
    equality_multipliers: Any
    reported_status: int
    times: tuple
    compile_s: float = math.nan
    error: str = ""


__all__ = ["Run"]
