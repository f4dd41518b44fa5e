r"""Chernoff (moment-generating-function) tail bounds from a PLD's ``log_mgf``.

For the finite part of the loss ``S`` of a (composed) discretised pair, with
``M(lambda) = E_P[e^{lambda S}; S < inf]`` (a product over the components, so
``log M`` adds up under composition: :data:`dpjax.accounting.pld.LAMBDAS`),

* window edges: ``P(S >= x) <= M(lambda) e^{-lambda x}`` (``lambda > 0``) and
  ``P(S <= x) <= M(lambda) e^{-lambda x}`` (``lambda < 0``);
* the privacy profile (RDP-style conversion, Canonne-Kamath-Steinke 2020):
  ``(1 - e^{eps - s})_+ <= c(lambda) e^{lambda (s - eps)}`` with
  ``c(lambda) = lambda^lambda / (1 + lambda)^{1 + lambda}``, hence

  .. math:: \delta(\epsilon) \le m_\infty + \min_{\lambda > 0}
            \exp\big(\log M(\lambda) - \lambda\epsilon + \log c(\lambda)\big),

  an upper bound computed entirely in log space, so it stays finite and
  certified far below the ``~1e-12`` floor of float64 FFT composition.
  ``M`` is that of the *pessimistic* discretised pair, which dominates the
  true one, so the bound holds for the true mechanism.  With ``lambda = alpha - 1``
  and ``log M = (alpha - 1) D_alpha`` this is the RDP conversion, so exact
  Rényi moments (e.g. the subsampled Gaussian's at integer orders,
  :func:`dpjax.accounting.rdp.subsampled_gaussian.gaussian_log_moments`) plug in through
  the ``lambdas`` argument.

**Fail closed.**  A ``nan`` moment is treated as ``+inf`` (that ``lambda``
bounds nothing; the others still do), and every bound that decides privacy
(:func:`log_upper_tail`, :func:`log_delta_chernoff`) is padded by the float64
rounding of its own terms (``8 u`` times the sum of their magnitudes, ``u =
2^-53``), so a computed bound is an upper bound of the exact one.
:func:`epsilon_chernoff` pads its inverse by twice that, so that the bound
re-evaluated at the returned ``epsilon`` is ``<= delta``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.pld._pld import LAMBDAS
from dpjax.numerics import float64_kernel
from dpjax.numerics.constants import UNIT_ROUNDOFF as _U


def split_by_sign(log_mgf, lambdas, positive: bool, xp=jnp):
    """``(lambda, log M)`` with the entries of the other sign (and ``nan`` moments) read as
    ``log M = +inf`` (uninformative); ``lambdas`` may be traced (default :data:`LAMBDAS`);
    ``xp``: the array namespace (``jax.numpy``, or ``numpy`` for a host caller)."""
    lam = xp.asarray(LAMBDAS if lambdas is None else lambdas, xp.float64)
    use = lam > 0 if positive else lam < 0
    lm = xp.asarray(log_mgf)
    lm = xp.where(xp.isnan(lm) | ~use, xp.inf, lm)
    return xp.where(use, lam, 1.0 if positive else -1.0), lm


def log_c_terms(lam, xp=jnp):
    """``(log c(lambda), |terms|)``: ``lambda log lambda - (1 + lambda) log(1 + lambda)``
    (``lambda > 0``) and the sum of the magnitudes of its two terms (for rounding pads)."""
    a, b = lam * xp.log(lam), (1.0 + lam) * xp.log1p(lam)
    return a - b, xp.abs(a) + xp.abs(b)


def _mag(x, xp=jnp):
    """``|x|`` where finite, else 0 (an infinite term needs no rounding pad)."""
    return xp.where(xp.isfinite(x), xp.abs(x), 0.0)


def _nan_min(x, axis=-1, xp=jnp):
    """``min`` along ``axis`` with ``nan`` read as ``+inf`` (an uninformative bound)."""
    return xp.min(xp.where(xp.isnan(x), xp.inf, x), axis=axis)


@float64_kernel
def log_upper_tail(log_mgf: ArrayLike, x: ArrayLike, lambdas=None) -> Array:
    r"""``log`` of a Chernoff bound on ``P(S >= x; S finite)``.

    .. math:: \log P(S \ge x) \le \min_{\lambda > 0}\ \log M(\lambda) - \lambda x

    (Chernoff 1952), padded by its rounding; a ``nan`` moment bounds nothing.

    Args:
      log_mgf: ``log M(lambda)`` on ``lambdas`` (last axis).
      x: where to bound the tail (any shape).
      lambdas: the ``lambda`` grid of ``log_mgf`` (default :data:`LAMBDAS`).

    Returns:
      The log-bound, shape of ``x``.
    """
    lam, lm = split_by_sign(log_mgf, lambdas, True)
    x = jnp.asarray(x)[..., None]
    lx = lam * x
    return _nan_min(lm - lx + 8.0 * _U * (_mag(lm) + _mag(lx)))


@float64_kernel
def log_lower_tail(log_mgf: ArrayLike, x: ArrayLike, lambdas=None) -> Array:
    r"""``log`` of a Chernoff bound on ``P(S <= x)`` (the negative half of the ``lambda`` grid).

    .. math:: \log P(S \le x) \le \min_{\lambda < 0}\ \log M(\lambda) - \lambda x

    (Chernoff 1952), padded by its rounding; a ``nan`` moment bounds nothing.

    Args:
      log_mgf, lambdas: as in :func:`log_upper_tail`.
      x: where to bound the tail (any shape).

    Returns:
      The log-bound, shape of ``x`` (``+inf`` when no ``lambda < 0`` is informative).
    """
    lam, lm = split_by_sign(log_mgf, lambdas, False)
    lx = lam * jnp.asarray(x)[..., None]
    return _nan_min(lm - lx + 8.0 * _U * (_mag(lm) + _mag(lx)))


@float64_kernel
def upper_edge(log_mgf: ArrayLike, log_tail: float, lambdas=None, xp=jnp) -> Array:
    r"""Least ``x`` certified by Chernoff to have ``P(S >= x) <= e^{log_tail}``.

    .. math:: x = \min_{\lambda > 0} \frac{\log M(\lambda) - \text{log\_tail}}{\lambda}

    A placement (of an FFT window): soundness never depends on it.

    Args:
      log_mgf: ``log M(lambda)`` on ``lambdas`` (last axis).
      log_tail: log of the tail mass allowed above ``x``.
      lambdas: the ``lambda`` grid of ``log_mgf`` (default :data:`LAMBDAS`).
      xp: the array namespace (``jax.numpy``; ``numpy`` through :func:`on_host`).

    Returns:
      The edge ``x``.
    """
    lam, lm = split_by_sign(log_mgf, lambdas, True, xp)
    return _nan_min((lm - log_tail) / lam, xp=xp)


@float64_kernel
def lower_edge(log_mgf: ArrayLike, log_tail: float, lambdas=None, xp=jnp) -> Array:
    r"""Largest ``x`` certified by Chernoff to have ``P(S <= x) <= e^{log_tail}``.

    .. math:: x = \max_{\lambda < 0} \frac{\log M(\lambda) - \text{log\_tail}}{\lambda}

    A placement (of an FFT window): soundness never depends on it.

    Args:
      log_mgf, lambdas, xp: as in :func:`upper_edge`.
      log_tail: log of the tail mass allowed below ``x``.

    Returns:
      The edge ``x``; ``-inf`` when no ``lambda < 0`` is informative.
    """
    lam, lm = split_by_sign(log_mgf, lambdas, False, xp)
    return -_nan_min(-(lm - log_tail) / lam, xp=xp)


@float64_kernel
def log_delta_chernoff(log_mgf: ArrayLike, epsilon: ArrayLike, lambdas=None, xp=jnp) -> Array:
    r"""``log`` of the Chernoff bound on the finite part of ``delta(epsilon)`` (see module).

    .. math:: \log\delta(\epsilon) \le \min_{\lambda > 0}\ \log M(\lambda) - \lambda\epsilon
              + \log c(\lambda),\qquad
              c(\lambda) = \frac{\lambda^\lambda}{(1 + \lambda)^{1 + \lambda}}

    (the RDP conversion of Canonne, Kamath & Steinke 2020, Prop. 12, at
    ``lambda = alpha - 1``), padded by its rounding.

    Args:
      log_mgf: ``log M(lambda)`` on ``lambdas`` (last axis).
      epsilon: where to bound ``delta`` (any shape).
      lambdas: the ``lambda`` grid of ``log_mgf`` (default :data:`LAMBDAS`); only
        ``lambda > 0`` is used.
      xp: the array namespace: ``jax.numpy`` (traced, the default) or ``numpy`` (a host
        caller with concrete arrays: no compiled program).

    Returns:
      The log-bound, shape of ``epsilon`` (without the mass at infinity).

    Example:
      >>> import jax, jax.numpy as jnp; jax.config.update("jax_enable_x64", True)
      >>> lam = jnp.arange(1.0, 200.0)  # Gaussian, mu = 1: log M = lambda (lambda + 1) / 2
      >>> round(float(log_delta_chernoff(lam * (lam + 1) / 2, 4.0, lambdas=lam)), 3)
      -8.502
    """
    lam, lm = split_by_sign(log_mgf, lambdas, True, xp)
    log_c, mag_c = log_c_terms(lam, xp)
    eps = xp.asarray(epsilon)[..., None]
    le = lam * eps
    pad = 8.0 * _U * (_mag(lm, xp) + _mag(le, xp) + mag_c)
    return _nan_min(lm - le + log_c + pad, xp=xp)


@float64_kernel
def epsilon_chernoff(log_mgf: ArrayLike, log_delta: ArrayLike, lambdas=None, xp=jnp) -> Array:
    r"""Least ``epsilon`` whose Chernoff bound on the finite part is ``<= e^{log_delta}``.

    .. math:: \epsilon = \min_{\lambda > 0} \frac{\log M(\lambda) + \log c(\lambda)
              - \log\delta}{\lambda}

    (the inverse of :func:`log_delta_chernoff`; Canonne, Kamath & Steinke 2020), padded up
    by twice its rounding pad so that the bound re-evaluated there is ``<= delta``.

    Args:
      log_mgf: ``log M(lambda)`` on ``lambdas`` (last axis).
      log_delta: target ``log delta`` (any shape).
      lambdas: the ``lambda`` grid of ``log_mgf`` (default :data:`LAMBDAS`).
      xp: the array namespace, as in :func:`log_delta_chernoff`.

    Returns:
      ``epsilon``, clipped at 0; ``+inf`` for ``log_delta = -inf`` and for ``nan``.
    """
    lam, lm = split_by_sign(log_mgf, lambdas, True, xp)
    log_c, mag_c = log_c_terms(lam, xp)
    ld = xp.asarray(log_delta)[..., None]
    num = lm + log_c - ld
    pad = 32.0 * _U * (_mag(lm, xp) + mag_c + _mag(ld, xp))
    eps = _nan_min((num + pad) / lam * (1.0 + 8.0 * _U), xp=xp)
    eps = xp.where(xp.isnan(xp.asarray(log_delta)), xp.inf, eps)
    return xp.maximum(eps, 0.0)


@float64_kernel
def on_host(bound, *args, **kwargs) -> np.ndarray:
    """``bound(*args, **kwargs)`` evaluated with NumPy: for host callers with concrete arrays.

    :func:`log_delta_chernoff` and :func:`epsilon_chernoff` on a few hundred orders are a
    few microseconds of NumPy; through ``jax.jit`` each would compile a program of its own
    in every fresh process.  NumPy's floating-point warnings are silenced: the bounds read a
    ``nan`` or infinite term as uninformative themselves.  The rounding pads of the bounds
    hold for any correctly rounded or faithful ``log`` / ``log1p``, so the NumPy value is
    certified as the traced one is (the two may differ in their last bits).

    Args:
      bound: :func:`log_delta_chernoff` or :func:`epsilon_chernoff` (any function of this
        module with an ``xp`` argument).
      *args, **kwargs: its arguments (concrete arrays).

    Returns:
      Its value as a float64 NumPy array.

    Example:
      >>> import jax, numpy as np; jax.config.update("jax_enable_x64", True)
      >>> lam = np.arange(1.0, 200.0)  # Gaussian, mu = 1: log M = lambda (lambda + 1) / 2
      >>> round(float(on_host(log_delta_chernoff, lam * (lam + 1) / 2, 4.0, lambdas=lam)), 3)
      -8.502
    """
    with np.errstate(all="ignore"):
        return np.asarray(bound(*args, xp=np, **kwargs), np.float64)
