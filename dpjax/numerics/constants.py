"""Numerical constants shared by the kernels (one definition each, float64-exact literals)."""

import math

#: ``log 2``.
LOG_2 = math.log(2.0)

#: ``log(1/2) = -log 2`` (``log p`` at the median of a symmetric law).
LOG_HALF = -LOG_2

#: ``log(2 pi) / 2``, the Gaussian density's normaliser in log space.
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

#: ``u = 2^-53``, the unit roundoff of float64 (half an ulp of 1).
UNIT_ROUNDOFF = 2.0**-53

__all__ = ["HALF_LOG_2PI", "LOG_2", "LOG_HALF", "UNIT_ROUNDOFF"]
