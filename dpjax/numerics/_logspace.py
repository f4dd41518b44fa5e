"""Log-space arithmetic with safe gradients.

Every helper uses the double-``where`` pattern: the argument of the branch
that is not taken is clamped to a harmless value, so ``log(0)`` or
``exp(large)`` never reaches a gradient (see ``log_ndtr`` in
``jax/_src/scipy/special.py`` and optax ``safe_norm``).  The NumPy twins
(``*_host``, for host searches with nothing to compile) sit beside their originals.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.numerics.constants import LOG_2, LOG_HALF


def log_gamma_host(x) -> np.ndarray:
    r"""``log |Gamma(x)|`` in NumPy: :func:`math.lgamma` (the C library's ``lgamma``) of
    each distinct value, broadcast back.

    The host twin of ``scipy.special.gammaln`` for the few hundred distinct arguments of
    the RDP binomial expansions, without importing SciPy (whose import costs a
    ``dpjax account`` command more than the expansions themselves, issue 36).  The C
    library's ``lgamma`` is within a few ulps of ``log Gamma``
    (tests/numerics/test_special_functions.py checks it against mpmath); callers pad the
    cancellation of several terms by their magnitudes.

    Args:
      x: float64 array-like, ``x > 0`` (poles give ``inf``).

    Returns:
      NumPy float64 of the shape of ``x``.

    Example:
      >>> round(float(log_gamma_host(5.0)), 12)  # log 4!
      3.178053830348
    """
    x = np.asarray(x, np.float64)
    values, inverse = np.unique(x, return_inverse=True)
    logs = np.array([_lgamma(v) for v in values.tolist()], np.float64)
    return logs[inverse].reshape(x.shape)


def _lgamma(v: float) -> float:
    """:func:`math.lgamma`, ``inf`` at its poles and ``nan`` for ``nan``."""
    try:
        return math.lgamma(v)
    except ValueError:  # a pole (0, -1, ...)
        return math.inf


def log_binomial_host(n, k) -> np.ndarray:
    r"""``log C(n, k)`` in NumPy for real ``n >= 0`` and integers ``0 <= k`` (broadcast).

    .. math:: \log\binom{n}{k} = \log\Gamma(n + 1) - \log\Gamma(k + 1)
              - \log\Gamma(\max(n - k, 0) + 1)

    by :func:`log_gamma_host` (``k > n`` gives a finite value the caller masks: the binomial
    expansions of the RDP moments, :mod:`dpjax.accounting.rdp.subsampled_gaussian` and
    :mod:`dpjax.train.flipped_huber`, sum over ``k <= n`` only).  Its rounding is a few
    ulps of the three terms' magnitudes, at most :func:`log_binomial_magnitude_host`
    for integers ``k <= n``: the callers pad by that.

    Args:
      n: float64 array-like (an RDP order).
      k: float64 array-like of integers.

    Returns:
      NumPy float64 of the broadcast shape.

    Example:
      >>> round(float(log_binomial_host(5.0, 2.0)), 12) == round(float(np.log(10.0)), 12)
      True
    """
    n, k = np.asarray(n, np.float64), np.asarray(k, np.float64)
    return log_gamma_host(n + 1) - log_gamma_host(k + 1) - log_gamma_host(
        np.maximum(n - k, 0) + 1
    )


def log_binomial_magnitude_host(n) -> np.ndarray:
    r"""``2 log Gamma(n + 1)``: a bound on the magnitudes of the three ``log Gamma`` terms
    that :func:`log_binomial_host` cancels, for integers ``0 <= k <= n``.

    .. math:: |\log\Gamma(n+1)| + |\log\Gamma(k+1)| + |\log\Gamma(n-k+1)|
              \le 2\log\Gamma(n + 1)

    (``log k! + log (n-k)! <= log n!`` as ``C(n, k) >= 1``, every term ``>= 0``).  A
    caller padding the rounding of ``log C(n, k)`` pads a few ulps of this, not of
    ``|log C(n, k)|`` (6.9 at ``n = 1024, k = 1``, where the terms are near 6078).

    Args:
      n: float64 array-like of integers ``n >= 0``.

    Returns:
      NumPy float64 of the shape of ``n``.

    Example:
      >>> round(float(log_binomial_magnitude_host(4.0)), 12) == round(2 * float(np.log(24.0)), 12)
      True
    """
    return 2.0 * log_gamma_host(np.asarray(n, np.float64) + 1.0)


def logsumexp_host(x, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    r"""``log sum_i e^{x_i}`` along ``axis`` in NumPy, shifted by the largest term.

    .. math:: \log\sum_i e^{x_i} = m + \log c + \operatorname{log1p}\Big(\frac1c
              \sum_{x_i < m} e^{x_i - m}\Big),\qquad m = \max_i x_i

    (``c`` the number of terms equal to ``m``): the algorithm of
    ``scipy.special.logsumexp`` for real input without weights, and its answers, without
    its general-purpose handling of weights, signs, complex input and array namespaces:
    several times faster on the large host arrays of the RDP moments.  ``-inf`` terms add
    nothing; a slice of ``-inf`` only gives ``-inf``; a ``+inf`` term gives ``+inf``.

    Args:
      x: float64 array-like.
      axis: the axis summed over.
      keepdims: keep ``axis`` with length 1 (for broadcasting back against ``x``).

    Returns:
      NumPy float64, ``x``'s shape without ``axis`` (or with it of length 1).

    Example:
      >>> import numpy as np
      >>> float(logsumexp_host([1000.0, 1000.0])) == 1000.0 + float(np.log(2.0))
      True
      >>> logsumexp_host([[-np.inf, -np.inf], [0.0, -np.inf]]).tolist()
      [-inf, 0.0]
    """
    x = np.asarray(x, np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    at_top = x == top
    count = np.sum(at_top, axis=axis, keepdims=True, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf in a slice whose top is +-inf
        rest = np.sum(np.where(at_top, 0.0, np.exp(x - top)), axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        out = np.log1p(rest / count) + np.log(count) + top
    out = np.where(np.isinf(top), top, out)
    return out if keepdims else np.squeeze(out, axis=axis)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def log1mexp(x: ArrayLike) -> Array:
    r"""``log(1 - exp(x))`` for ``x <= 0``, accurate over the whole range.

    .. math:: \log(1 - e^{x}) =
       \begin{cases} \log(-\mathrm{expm1}(x)) & x > -\log 2 \\
                     \mathrm{log1p}(-e^{x}) & x \le -\log 2 \end{cases}

    (Maechler 2012, "Accurately computing log(1 - exp(-|a|))").  The step from
    ``log Q(a)`` to the hockey stick ``log(Q(a) - e^eps Q(b))`` (eq. (29) of
    flipped-huber-mechanism) goes through it.

    Args:
      x: exponent, ``x <= 0``, any shape.

    Returns:
      ``log(1 - e^x)``: ``-inf`` at ``x = 0`` and ``nan`` for ``x > 0``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(log1mexp(-1e-20)), 9)  # log(1e-20): no cancellation
      -46.05170186
    """
    x = jnp.asarray(x)
    near = x > LOG_HALF
    x_near = jnp.where(near, x, LOG_HALF)
    x_far = jnp.where(near, LOG_HALF, x)
    out = jnp.where(near, jnp.log(-jnp.expm1(x_near)), jnp.log1p(-jnp.exp(x_far)))
    return jnp.where(x > 0, jnp.nan, out)


def log1mexp_host(x) -> np.ndarray:
    r"""``log(1 - e^x)`` for ``x <= 0`` in NumPy (``-inf`` at 0): the host twin of
    :func:`dpjax.numerics.log1mexp` (Maechler's two branches, split at ``-log 2``).

    .. math:: \log(1 - e^x) = \begin{cases} \log(-\mathrm{expm1}(x)) & x > -\log 2 \\
              \mathrm{log1p}(-e^x) & \text{otherwise} \end{cases}

    Args:
      x: ``x <= 0`` (larger values are clipped to 0).

    Example:
      >>> round(float(log1mexp_host(-1e-20)), 4)
      -46.0517
    """
    x = np.minimum(np.asarray(x, dtype=np.float64), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -LOG_2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def log_expm1(x: ArrayLike) -> Array:
    r"""``log(e^x - 1)`` for ``x >= 0`` (``-inf`` at 0), accurate at both ends.

    .. math:: \log(e^x - 1) = x + \log(1 - e^{-x})

    with :func:`log1mexp` for the second term: no overflow of ``e^x`` for large ``x``, no
    cancellation for small ``x`` (``log x - x/2 + ...``).

    Args:
      x: ``x >= 0``, any shape.

    Returns:
      ``log(e^x - 1)``: ``-inf`` at 0, ``x`` to round-off for ``x > 40``, ``nan`` for
      ``x < 0``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(log_expm1(1e-20)), 9), float(log_expm1(1000.0))
      (-46.05170186, 1000.0)
    """
    x = jnp.asarray(x)
    return x + log1mexp(-x)


def log_expm1_host(x) -> np.ndarray:
    r"""``log(e^x - 1)`` for ``x >= 0`` in NumPy (``-inf`` at 0): the host twin of
    :func:`dpjax.numerics.log_expm1`, ``x + log(1 - e^{-x})`` through :func:`log1mexp_host`.

    Args:
      x: ``x >= 0`` (smaller values are clipped to 0).

    Example:
      >>> round(float(log_expm1_host(1e-20)), 4), float(log_expm1_host(1000.0))
      (-46.0517, 1000.0)
    """
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    with np.errstate(invalid="ignore"):  # inf + log1p(-0) = inf
        return x + log1mexp_host(-x)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def logsubexp(a: ArrayLike, b: ArrayLike) -> Array:
    r"""``log(exp(a) - exp(b))`` for ``a >= b``; ``-inf`` when ``a == b``.

    .. math:: \log(e^a - e^b) = a + \log(1 - e^{b - a})

    with :func:`log1mexp` for the second term (Maechler 2012).

    Args:
      a: the larger log-value.
      b: the smaller log-value (broadcast against ``a``).

    Returns:
      ``log(e^a - e^b)``: ``nan`` when ``b > a`` (a negative difference has no
      logarithm); ``a = -inf`` (and therefore ``b = -inf``) gives ``-inf``.
    """
    a, b = jnp.asarray(a), jnp.asarray(b)
    finite = jnp.isfinite(a)
    safe_a = jnp.where(finite, a, 0.0)
    diff = jnp.where(finite, b - safe_a, -1.0)
    out = safe_a + log1mexp(jnp.minimum(diff, 0.0))
    out = jnp.where(b > a, jnp.nan, out)
    return jnp.where(finite, out, a)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def logaddexp(a: ArrayLike, b: ArrayLike) -> Array:
    r"""``log(exp(a) + exp(b))`` with a safe gradient when both are ``-inf``.

    .. math:: \log(e^a + e^b) = m + \mathrm{log1p}(e^{-|a - b|}),\quad m = \max(a, b)

    Args:
      a: first log-value.
      b: second log-value (broadcast against ``a``).

    Returns:
      ``log(e^a + e^b)``; ``-inf`` when both are ``-inf`` (with a zero, not ``nan``,
      gradient).
    """
    a, b = jnp.asarray(a), jnp.asarray(b)
    m = jnp.maximum(a, b)
    finite = jnp.isfinite(m)
    safe_m = jnp.where(finite, m, 0.0)
    safe_a = jnp.where(finite, a, 0.0)
    safe_b = jnp.where(finite, b, 0.0)
    out = safe_m + jnp.log1p(jnp.exp(-jnp.abs(safe_a - safe_b)))
    return jnp.where(finite, out, m)
