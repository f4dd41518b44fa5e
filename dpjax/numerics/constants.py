"""Numerical constants shared by the kernels (one definition each, float64-exact literals)."""

import math

#: ``log 2``.
LOG_2 = math.log(2.0)

#: ``log(2 pi) / 2``, the Gaussian density's normaliser in log space.
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

__all__ = ["HALF_LOG_2PI", "LOG_2"]
