r"""What the PLD engine asks a noise family: where its loss crosses a level, where its tail ends.

For a pair ``P = T``, ``Q = T - d`` the privacy loss ``zeta_d(t) = log g(t) - log g(t + d)``
(Sec. II-C of flipped-huber-mechanism; the family's ``privacy_loss``) is non-decreasing
for the symmetric log-concave families here, and the exact profile is

.. math:: \delta(\epsilon) = \bar G(t(\epsilon)) - e^\epsilon \bar G(t(\epsilon) + d),
          \qquad t(\epsilon) = \sup\{t : \zeta_d(t) \le \epsilon\}

(eq. (14)/(16) of flipped-huber-mechanism).  A family with a closed-form inverse
provides ``privacy_loss_inverse(epsilon, sensitivity)`` (:class:`~dpjax.noise._base.
InvertibleLoss`); otherwise :func:`privacy_loss_inverse` bisects ``privacy_loss`` on a
bracket.  Likewise :func:`tail_point` uses the family's ``tail_point(tail)``
(:class:`~dpjax.noise._base.KnownTail`) or bisects ``log_sf``.  Both fallbacks are the
vmap-fair fixed-iteration bisection of :mod:`dpjax.numerics.roots`, so a new family
needs only ``privacy_loss`` and ``log_sf`` to plug into the engine.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.noise._base import InvertibleLoss, KnownTail, NoiseFamily
from dpjax.numerics import Status, bisect_monotone

#: Halvings of the loss-inverse bisection: the bracket ``[t_lo, t_hi]`` shrinks below
#: one float64 ulp of its ends.
INVERSE_ITERATIONS = 110
#: Halvings of the tail-point bisection on ``[0, 400 sd]`` (``4e-22`` of the bracket).
TAIL_ITERATIONS = 80
#: The tail-point bracket is ``[0, TAIL_BRACKET * sd]``, ``sd`` the family's standard deviation.
TAIL_BRACKET = 400.0


def privacy_loss_inverse(
    noise: NoiseFamily,
    epsilon: ArrayLike,
    sensitivity: ArrayLike,
    t_lo: ArrayLike,
    t_hi: ArrayLike,
    num_iterations: int = INVERSE_ITERATIONS,
) -> Array:
    r"""The right-continuous inverse ``t(epsilon) = sup{t : zeta_d(t) <= epsilon}``.

    The family's closed form where it has one (``privacy_loss_inverse``); otherwise
    fixed-iteration bisection of ``privacy_loss`` on ``[t_lo, t_hi]``: the largest ``t``
    found with ``zeta_d(t) <= epsilon``, ``t_hi`` if the whole bracket qualifies and
    ``t_lo`` if none of it does (the caller clips to its range in any case).

    Args:
      noise: a noise family (:class:`~dpjax.noise.NoiseFamily`).
      epsilon: loss levels.
      sensitivity: the shift ``d > 0``.
      t_lo, t_hi: the bracket searched by the fallback (outside it the pair keeps at
        most its tail mass).
      num_iterations: static number of halvings of the fallback.

    Returns:
      ``t(epsilon)``, shaped like ``epsilon``.
    """
    if isinstance(noise, InvertibleLoss):
        return noise.privacy_loss_inverse(epsilon, sensitivity)
    return monotone_inverse(
        lambda t: noise.privacy_loss(t, sensitivity), epsilon, t_lo, t_hi, num_iterations
    )


def monotone_inverse(
    loss: Callable[[Array], Array],
    epsilon: ArrayLike,
    t_lo: ArrayLike,
    t_hi: ArrayLike,
    num_iterations: int = INVERSE_ITERATIONS,
) -> Array:
    r"""``sup{t in [t_lo, t_hi] : loss(t) <= epsilon}`` of a non-decreasing ``loss``.

    .. math:: t(\epsilon) = \sup\{t \in [t_\text{lo}, t_\text{hi}] : \zeta(t) \le \epsilon\}

    by fixed-iteration bisection (:func:`dpjax.numerics.bisect_monotone`): ``t_hi`` if the
    whole bracket qualifies, ``t_lo`` if none of it does.  The fallback of
    :func:`privacy_loss_inverse`, and the inverse of losses that are not one family's
    (e.g. a mixture's).

    Args:
      loss: elementwise non-decreasing ``t -> zeta(t)`` (traceable).
      epsilon: loss levels.
      t_lo, t_hi: the bracket.
      num_iterations: static number of halvings.

    Returns:
      ``t(epsilon)``, shaped like ``epsilon``.
    """
    epsilon = jnp.asarray(epsilon)
    lo = jnp.broadcast_to(jnp.asarray(t_lo, jnp.float64), epsilon.shape)
    hi = jnp.broadcast_to(jnp.asarray(t_hi, jnp.float64), epsilon.shape)
    res = bisect_monotone(lambda t: loss(t) <= epsilon, lo, hi, num_iterations=num_iterations)
    return jnp.where(res.status == Status.BRACKET_TOO_SMALL, hi, res.good)


def tail_point(noise: NoiseFamily, tail: float) -> Array:
    r"""A point ``t >= 0`` with ``log P(T > t) <= log(tail)``.

    The family's closed form where it has one (``tail_point``); otherwise
    fixed-iteration bisection of ``log_sf`` on ``[0, 400 sd]`` (``sd = sqrt(variance)``),
    returning the end where ``log_sf(t) <= log(tail)`` holds.

    Args:
      noise: a noise family (:class:`~dpjax.noise.NoiseFamily`).
      tail: the probability allowed above ``t`` (a Python float, e.g. ``1e-40``, or a
        traced scalar).

    Returns:
      ``t``, shaped like the family's parameters.
    """
    if isinstance(noise, KnownTail):
        return noise.tail_point(tail)
    # a traced tail (the tilted engine's level as data) is logged in the program
    target = jnp.log(tail) if isinstance(tail, jax.core.Tracer) else math.log(tail)
    sd = jnp.sqrt(noise.variance)
    res = bisect_monotone(
        lambda t: noise.log_sf(t) <= target, TAIL_BRACKET * sd, jnp.zeros_like(sd),
        num_iterations=TAIL_ITERATIONS,
    )
    return res.good


__all__ = ["monotone_inverse", "privacy_loss_inverse", "tail_point"]
