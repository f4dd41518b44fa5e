r"""How dpjax turns a float64 evaluation into a certified number.

Every closed-form profile kernel documents its float error: a constant ``c``
such that

.. math:: |\log\hat\delta - \log\delta| \le \mathrm{err}(\log\delta)
          = c\,(1 + |\log\delta|)

(the relative error of ``delta``; the ``|log delta|`` part is the rounding of
a logarithm as large as 745 itself), measured against 60+ digit mpmath over
the kernel's whole domain and declared with :func:`kernel_error`.  Two rules
follow.

* **Targets keep a margin.**  Calibrations and inverse profiles aim at
  ``delta (1 - MARGIN)`` (:func:`log_target`).  :func:`kernel_error` refuses an
  error that is not well below ``MARGIN``, so an answer certified against the
  margin is private for the exact profile, not only for its float64
  evaluation: ``delta_true <= delta (1 - MARGIN) e^{err} < delta`` (``err <= 746 c <= MARGIN / 4``).
* **Reported values are upper bounds, not nearest floats.**  A delta is
  reported as :func:`reported_delta` (``exp(log delta + err)`` rounded up,
  never an underflowed 0, never NaN) and a closed-form epsilon as
  :func:`reported_epsilon` (rounded up by its documented relative error).

So ``profile(account(delta=d)) <= d``: the epsilon is certified at
``d (1 - MARGIN)`` and the reported profile there is at most
``d (1 - MARGIN) e^{err} (1 + 2^-52) <= d``.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.numerics import float64_kernel

MARGIN = 1e-10
#: Smallest positive normal float64; XLA flushes anything smaller to zero.
TINY = float(np.finfo(np.float64).tiny)
_LOG_TINY = math.log(TINY)


#: ``|log delta|`` of any delta a float64 can hold (``log 2.2e-308 ~ -708``), with room.
_LOG_RANGE = 745.0


def kernel_error(c: float) -> float:
    """Declare a kernel's documented error constant ``c`` (module docstring); returns ``c``.

    Raises ``ValueError`` (at import of the kernel's module) unless the error it
    allows at the far end of the float64 range, ``c (1 + 745)``, is at most
    ``MARGIN / 4``: the certification margin must exceed every kernel's error
    with room for the re-evaluation's rounding.
    """
    if not 0.0 <= c * (1.0 + _LOG_RANGE) <= MARGIN / 4:
        raise ValueError(
            f"kernel error constant {c!r}: c (1 + {_LOG_RANGE}) must lie in [0, MARGIN / 4]"
        )
    return float(c)


@float64_kernel


def error_bound(log_delta: ArrayLike, c: float) -> Array:
    """``c (1 + |log delta|)``: the documented bound on ``|log delta_hat - log delta|``."""
    return c * (1.0 + jnp.abs(jnp.asarray(log_delta)))


def log_target(delta: ArrayLike) -> Array:
    """``log(delta (1 - MARGIN))``: the level a certified answer must reach (``-inf`` for 0)."""
    return jnp.log(jnp.asarray(delta)) + jnp.log1p(-MARGIN)


@float64_kernel


def reported_delta(log_delta: ArrayLike, error: float) -> Array:
    r"""The delta to report from ``log delta`` computed by a kernel with error constant ``error``.

    .. math:: \hat\delta = \min\big(1,\ \mathrm{nextafter}(e^{\log\delta
              + c (1 + |\log\delta|)}, +\infty)\big),

    an upper bound on the exact value.  Fails closed: NaN gives 1; a finite
    ``log delta`` too small for a normal float64 gives :data:`TINY` (a true
    delta that underflows is positive, so it is never reported as 0); only
    ``-inf`` (an exact zero of the kernel's formula, e.g. pure DP) gives 0.
    """
    log_delta = jnp.asarray(log_delta)
    finite = jnp.isfinite(log_delta)
    shifted = log_delta + error_bound(jnp.where(finite, log_delta, 0.0), error)
    normal = shifted > _LOG_TINY
    up = jnp.nextafter(jnp.exp(jnp.where(normal, shifted, 0.0)), jnp.inf)
    out = jnp.where(normal, jnp.minimum(up, 1.0), jnp.where(log_delta == -jnp.inf, 0.0, TINY))
    return jnp.where(jnp.isnan(log_delta), 1.0, out)


@float64_kernel


def reported_epsilon(epsilon: ArrayLike, error: float) -> Array:
    r"""An epsilon from a closed form with relative error ``error``, rounded up.

    ``nextafter(epsilon (1 + error), +inf)``; an exact 0 stays 0, NaN gives
    ``+inf`` (no certificate), ``inf`` stays ``inf``.
    """
    epsilon = jnp.asarray(epsilon)
    up = jnp.nextafter(epsilon * (1.0 + error), jnp.inf)
    return jnp.where(jnp.isnan(epsilon), jnp.inf, jnp.where(epsilon == 0, 0.0, up))


@float64_kernel


def fail_closed(log_delta: ArrayLike, *inputs: ArrayLike) -> Array:
    """``log delta`` clipped to ``<= 0``, with ``0`` (``delta = 1``) wherever it or any of
    ``inputs`` is NaN.

    The last line of every profile kernel: a NaN from an overflow, an invalid
    operation or the caller becomes the trivial bound ``delta = 1``, never a small
    one (a branch selected by comparisons on a NaN input could otherwise look finite).
    """
    log_delta = jnp.asarray(log_delta)
    bad = jnp.isnan(log_delta)
    for x in inputs:
        bad = bad | jnp.isnan(jnp.asarray(x))
    return jnp.where(bad, 0.0, jnp.minimum(log_delta, 0.0))
