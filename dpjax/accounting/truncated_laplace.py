r"""Exact 1-D privacy profile of the truncated Laplace mechanism (Geng, Ding, Guo & Kumar 2020).

Noise ``TL(lambda, A)`` (:mod:`dpjax.noise.truncated_laplace`), sensitivity
``Delta``; write ``c = A / lambda``, ``mu = Delta / lambda`` and
``D = 1 - e^{-c}``.  Derived here from ``delta(eps) = int [g(t) - e^eps g(t + Delta)]_+ dt``
(App. F, eq. (26) of flipped-huber-mechanism): on ``(A - Delta, A]`` the
shifted density vanishes (loss ``+inf``), on ``[-A, A - Delta]`` the loss is the
Laplace one ``(|t + Delta| - |t|) / lambda``, so with ``t* = lambda (eps - mu) / 2``

.. math::
   \delta(\epsilon) = \begin{cases}
     1, & \mu \ge 2c \\
     \dfrac{2\,(1 - e^{(\epsilon - \mu)/2}) + e^{-c}(e^{\epsilon} - 1)}{2D},
        & \epsilon < \min(\mu,\ 2c - \mu) \\
     P(T > A - \Delta) = \begin{cases} \dfrac{e^{\mu} - 1}{2(e^{c} - 1)} & \mu \le c \\
        \dfrac{D + 1 - e^{c - \mu}}{2D} & c < \mu < 2c \end{cases}, & \text{otherwise.}
   \end{cases}

The middle line is ``P(T > t*) - e^eps P(T > t* + Delta)`` after simplification
(both terms non-negative: no cancellation).  GDGK's optimal parameters for a
target ``(epsilon, delta)`` are ``lambda = Delta / epsilon`` and
``A = lambda log(1 + (e^epsilon - 1) / (2 delta))``, which put
``epsilon = mu`` exactly on the kink with ``P(T > A - Delta) = delta``
(:func:`truncated_laplace_gdgk`).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.numerics import bisect_monotone, float64_kernel, log1mexp, logaddexp

_LOG2 = 0.6931471805599453


def _log_expm1(x: Array) -> Array:
    """``log(e^x - 1)`` for ``x > 0`` (``-inf`` at 0)."""
    return x + log1mexp(-x)


@float64_kernel
def log_delta_truncated_laplace_unit(epsilon: ArrayLike, c: ArrayLike, mu: ArrayLike) -> Array:
    r"""``log delta(epsilon)`` for shape ``c = A / lambda``, ``mu = Delta / lambda``."""
    epsilon, c, mu = (jnp.asarray(x) for x in (epsilon, c, mu))
    log_d = log1mexp(-c)  # log D
    kink = jnp.minimum(mu, 2.0 * c - mu)
    middle = epsilon < kink
    e_m = jnp.where(middle, epsilon, 0.0)
    mu_m = jnp.where(middle, mu, 1.0)
    lap = _LOG2 + log1mexp(jnp.minimum(0.5 * (e_m - mu_m), 0.0))
    trunc = -c + _log_expm1(e_m)
    mid_val = logaddexp(lap, trunc) - _LOG2 - log_d
    # flat part: P(T > A - Delta)
    below = mu <= c
    mu_b = jnp.where(below, mu, 0.5 * c)
    flat_below = _log_expm1(mu_b) - _LOG2 - _log_expm1(c)
    mu_a = jnp.where(below, 1.5 * c, jnp.minimum(mu, 2.0 * c))
    flat_above = logaddexp(log_d, log1mexp(jnp.minimum(c - mu_a, 0.0))) - _LOG2 - log_d
    flat = jnp.where(below, flat_below, flat_above)
    out = jnp.where(middle, mid_val, flat)
    return jnp.where(mu >= 2.0 * c, 0.0, out)


@float64_kernel
def log_delta_truncated_laplace(
    epsilon: ArrayLike, scale: ArrayLike, bound: ArrayLike, sensitivity: ArrayLike
) -> Array:
    r"""``log delta(epsilon)`` of the 1-D truncated Laplace mechanism (exact).

    Args:
      epsilon: ``epsilon >= 0``.
      scale: ``lambda > 0``.
      bound: truncation ``A > 0``.
      sensitivity: ``Delta > 0``.
    """
    scale = jnp.asarray(scale)
    return log_delta_truncated_laplace_unit(
        epsilon, jnp.asarray(bound) / scale, jnp.asarray(sensitivity) / scale
    )


@float64_kernel
def delta_truncated_laplace(
    epsilon: ArrayLike, scale: ArrayLike, bound: ArrayLike, sensitivity: ArrayLike
) -> Array:
    """``delta(epsilon)`` of the 1-D truncated Laplace mechanism (exact)."""
    return jnp.exp(log_delta_truncated_laplace(epsilon, scale, bound, sensitivity))


@float64_kernel
def epsilon_truncated_laplace(
    delta: ArrayLike,
    scale: ArrayLike,
    bound: ArrayLike,
    sensitivity: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""Least ``epsilon`` with ``delta(epsilon) <= delta``; ``inf`` where the flat part
    ``P(T > A - Delta)`` already exceeds ``delta`` (no epsilon suffices).

    The profile is constant from ``min(mu, 2c - mu)`` on, so the bisection runs on
    ``[0, min(mu, 2c - mu)]``.
    """
    delta = jnp.asarray(delta)
    scale = jnp.asarray(scale)
    c = jnp.asarray(bound) / scale
    mu = jnp.asarray(sensitivity) / scale
    delta, c, mu = jnp.broadcast_arrays(delta, c, mu)
    log_d = jnp.log(jnp.where(delta > 0, delta, 1.0))
    kink = jnp.maximum(jnp.minimum(mu, 2.0 * c - mu), 0.0)
    feasible = (log_delta_truncated_laplace_unit(kink, c, mu) <= log_d) & (delta > 0)
    res = bisect_monotone(
        lambda e: log_delta_truncated_laplace_unit(e, c, mu) <= log_d,
        good=kink,
        bad=jnp.zeros_like(kink),
        num_iterations=num_iterations,
    )
    at_zero = log_delta_truncated_laplace_unit(jnp.zeros_like(kink), c, mu) <= log_d
    eps = jnp.where(at_zero, 0.0, res.good)
    return jnp.where(feasible, eps, jnp.inf)


@float64_kernel
def truncated_laplace_gdgk(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike):
    r"""GDGK 2020's parameters ``(lambda, A)`` for a target ``(epsilon, delta)``, ``epsilon > 0``.

    ``lambda = Delta / epsilon``, ``A = lambda log(1 + (e^epsilon - 1) / (2 delta))``;
    at these the exact profile equals ``delta`` at ``epsilon`` (on the boundary:
    :mod:`dpjax.calibrate.truncated_laplace` returns certified parameters with margin).
    """
    epsilon, delta = jnp.asarray(epsilon), jnp.asarray(delta)
    lam = jnp.asarray(sensitivity) / epsilon
    log_ratio = _log_expm1(epsilon) - _LOG2 - jnp.log(delta)  # log((e^eps - 1) / (2 delta))
    big = log_ratio > 0
    a = lam * jnp.where(
        big,
        log_ratio + jnp.log1p(jnp.exp(-jnp.where(big, log_ratio, 0.0))),
        jnp.log1p(jnp.exp(jnp.where(big, 0.0, log_ratio))),
    )
    return lam, a
