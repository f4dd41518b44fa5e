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
  true one, so the bound holds for the true mechanism.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.pld._pld import LAMBDAS, POSITIVE
from dpjax.numerics import float64_kernel


def _lam():
    return jnp.asarray(LAMBDAS)


def _log_c(lam):
    """``log c(lambda) = lambda log lambda - (1 + lambda) log(1 + lambda)`` (``lambda > 0``)."""
    return lam * jnp.log(lam) - (1.0 + lam) * jnp.log1p(lam)


@float64_kernel
def log_upper_tail(log_mgf: ArrayLike, x: ArrayLike) -> Array:
    """``log`` of a bound on ``P(S >= x; S finite)``: ``min_{lambda>0} log M - lambda x``."""
    lam = _lam()[POSITIVE:]
    x = jnp.asarray(x)[..., None]
    return jnp.min(jnp.asarray(log_mgf)[..., POSITIVE:] - lam * x, axis=-1)


@float64_kernel
def upper_edge(log_mgf: ArrayLike, log_tail: float) -> Array:
    """Least ``x`` certified by Chernoff to have ``P(S >= x) <= e^{log_tail}``."""
    lam = _lam()[POSITIVE:]
    return jnp.min((jnp.asarray(log_mgf)[..., POSITIVE:] - log_tail) / lam, axis=-1)


@float64_kernel
def lower_edge(log_mgf: ArrayLike, log_tail: float) -> Array:
    """Largest ``x`` certified by Chernoff to have ``P(S <= x) <= e^{log_tail}``."""
    lam = _lam()[:POSITIVE]
    return jnp.max((jnp.asarray(log_mgf)[..., :POSITIVE] - log_tail) / lam, axis=-1)


@float64_kernel
def log_delta_chernoff(log_mgf: ArrayLike, epsilon: ArrayLike) -> Array:
    r"""``log`` of the Chernoff bound on the finite part of ``delta(epsilon)`` (see module)."""
    lam = _lam()[POSITIVE:]
    eps = jnp.asarray(epsilon)[..., None]
    return jnp.min(jnp.asarray(log_mgf)[POSITIVE:] - lam * eps + _log_c(lam), axis=-1)


@float64_kernel
def epsilon_chernoff(log_mgf: ArrayLike, log_delta: ArrayLike) -> Array:
    r"""Least ``epsilon`` whose Chernoff bound on the finite part is ``<= e^{log_delta}``.

    ``epsilon = min_lambda (log M(lambda) + log c(lambda) - log delta) / lambda``,
    clipped at 0 (``-inf``/``nan`` safe for ``log_delta = -inf``: returns ``+inf``).
    """
    lam = _lam()[POSITIVE:]
    ld = jnp.asarray(log_delta)[..., None]
    eps = jnp.min((jnp.asarray(log_mgf)[POSITIVE:] + _log_c(lam) - ld) / lam, axis=-1)
    return jnp.maximum(eps, 0.0)
