r"""Privacy of the flipped Huber mechanism (flipped-huber-mechanism, Sec. IV and VI-A).

Everything is computed for the standard shape: with ``b = alpha / gamma`` and
``D = Delta / gamma`` the 1-D profile depends on ``(epsilon, b, D)`` only
(scale family).  Symbols: ``Z = 2 (A + B)`` the normaliser of ``exp(-rho_b)``
(see :mod:`dpjax.noise.flipped_huber`), ``R`` the Mills ratio,
``h(x) = 1 - x R(x) > 0``.

* The privacy loss (eq. (25)) and its inverse (eq. (15)) are the noise family's
  (:mod:`dpjax.noise.flipped_huber.privacy_loss`).
* :func:`log_delta_flipped_huber` -- the exact 1-D profile of Theorem 3 (eq. (13)),
  each case rearranged into a sum of non-negative terms, in log space:

  1. ``b < D/2``, ``eps < (D - 2b) D / 2``:
     ``delta Z = 2W(b) + e^{-b^2/2} sqrt(2 pi) delta_N(eps; D)``, with
     ``W(b) = int_0^b e^{-bx}(1 - e^{-(x-b)^2/2}) dx`` and ``delta_N`` the
     Gaussian profile (eq. (29)) at ``mu = D``;
  2. ``b > D/2``, ``eps < min(2b - D, D) b`` (``x* = eps / (2b)``):
     ``delta Z = 2(1 - e^{-b|t_1|})/b + (e^eps - 1) e^{-b^2}(1/b - R(b))``;
  3. ``x* = sqrt(2(eps + bD)) - D/2 - b`` (``t_1 in [-b, 0)``, ``t_2 >= b``):
     ``delta Z = 2(1 - e^{-b|t_1|})/b + (e^{-b|t_1|} - e^{-b^2})(1/b - R(t_2))
     + e^{-b^2}(R(b) - R(t_2))``;
  4. ``x* = sqrt(2(eps - bD)) - D/2 + b``, ``s = t_2 - b``:
     ``delta Z = e^{-b^2}[(e^{b(D - s)} - 1)(1/b - R(b + s)) + R(b) - R(b + s)]``;
  5. ``eps >= (D + 2b) D / 2``: ``delta Z = e^{-b^2/2} sqrt(2 pi) delta_N(eps; D)``,

  where ``t_{1,2} = x* -+ D/2``.  (The algebra uses ``g(t_1) = e^eps g(t_2)``.)

The K-dimensional bounds (Theorem 8, zCDP of Theorem 9, and a note on the proof of
Lemma 5) live in :mod:`dpjax.accounting.flipped_huber_kdim`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting._flipped_huber_terms import (
    log_expm1,
    log_inv_b_minus_mills,
    log_neg_expm1,
    log_two_w_of,
)
from dpjax.accounting.flipped_huber_kdim import epsilon_from_zcdp_shifted, zcdp_flipped_huber
from dpjax.accounting.gaussian import (
    a_of_mu,
    a_of_sigma,
    log_delta_from_a,
    tail_step_args,
)
from dpjax.accounting.log_concave import log_delta_symmetric_log_concave
from dpjax.certificate import MARGIN, fail_closed, kernel_error, log_target, reported_delta
from dpjax.noise.flipped_huber import (
    centred_privacy_loss,
    log_normaliser,
    standard_log_sf,
)
from dpjax.numerics import float64_kernel, least_feasible, log_mills, log_mills_step, logaddexp
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2

#: Documented error constant of :func:`log_delta_flipped_huber`
#: (``|log delta_computed - log delta_true| <= ERROR (1 + |log delta|)``): largest measured
#: ratio 2.2e-15 against 200-digit mpmath (eq. (13) as printed) for b = alpha / gamma in
#: [0, 30], Delta / gamma in [1e-3, 1e6] and epsilon on every case of eq. (13), and against
#: the direct integral for b up to 200 (tests/accounting/test_fail_closed.py).
ERROR = kernel_error(2e-14)


class ShapeConstants(NamedTuple):
    """Quantities of the 1-D profile (eq. (13)) that depend on ``b`` only (hoisted out of scale
    searches).

    Attributes:
      b: the shape ``alpha / gamma``.
      log_z: ``log Z(b)`` (eq. (9)).
      log_mills_b: ``log R(b)``.
      log_inv_b_minus_mills_b: ``log(1/b - R(b))``.
      log_two_w: ``log 2W(b)`` (case 1, module docstring).
    """

    b: Array
    log_z: Array
    log_mills_b: Array
    log_inv_b_minus_mills_b: Array
    log_two_w: Array


@float64_kernel
def shape_constants(b: ArrayLike) -> ShapeConstants:
    """Precompute :class:`ShapeConstants` for :func:`log_delta_flipped_huber_standard`.

    Args:
      b: the shape ``b = alpha / gamma >= 0``.
    """
    b = jnp.asarray(b)
    bs = jnp.where(b > 0, b, 1.0)
    return ShapeConstants(
        b=b,
        log_z=log_normaliser(b),
        log_mills_b=log_mills(bs),
        log_inv_b_minus_mills_b=log_inv_b_minus_mills(bs, bs),
        log_two_w=log_two_w_of(b),
    )


@float64_kernel
def log_delta_flipped_huber_standard(
    epsilon: ArrayLike,
    b: ArrayLike,
    D: ArrayLike,
    constants: ShapeConstants | None = None,
    a: ArrayLike | None = None,
) -> Array:
    r"""``log delta(epsilon)`` of Theorem 3 for ``FH(b, 1)``, sensitivity ``D`` (module docstring).

    Args:
      epsilon: ``epsilon >= 0``.
      b: the shape ``alpha / gamma >= 0``.
      D: the sensitivity in units of ``gamma``, ``Delta / gamma > 0``.
      constants: :func:`shape_constants` of ``b``, to hoist the ``b``-only work out of a
        loop over ``D``.
      a: ``eps / D - D / 2`` (the Gaussian cases' argument), when the caller can form it
        more accurately than from the rounded ``D`` (:func:`log_delta_flipped_huber`).
    """
    if constants is None:
        constants = shape_constants(b)
    eps, b, D = jnp.broadcast_arrays(jnp.asarray(epsilon), jnp.asarray(b), jnp.asarray(D))
    pos = b > 0
    bs = jnp.where(pos, b, 1.0)
    # regions (same as _standard_inverse)
    lvl2 = jnp.minimum(2.0 * b - D, D) * b
    c2 = pos & (b > 0.5 * D) & (eps < lvl2)
    lo3 = 0.5 * (jnp.square(jnp.maximum(2.0 * b, D)) - 2.0 * b * D)
    nu1 = 0.5 * (jnp.square(jnp.maximum(D - b, 0.0)) + 2.0 * b * D)
    nu2 = 0.5 * (D + 2.0 * b) * D
    c1 = (b < 0.5 * D) & (eps < 0.5 * (D - 2.0 * b) * D)
    c3 = pos & ~c1 & ~c2 & (eps >= lo3) & (eps < nu1)
    c4 = pos & ~c1 & ~c2 & ~c3 & (eps >= nu1) & (eps < nu2)
    gauss_case = ~(c2 | c3 | c4)

    # case 3 / 4 geometry
    r = jnp.sqrt(2.0 * (eps + b * D))
    t2_3 = jnp.where(c3, r - b, bs + 1.0)
    t1_abs3 = jnp.where(c3, jnp.clip(b + D - r, 0.0, bs), 0.5 * bs)
    s = jnp.where(c4, jnp.sqrt(2.0 * jnp.maximum(eps - b * D, 0.0)), 0.0)

    # one Mills-ratio step serves the Gaussian profile (cases 1, 5) and cases 3, 4:
    #   Gaussian: a = eps/D - D/2 >= 0, log R(a + D) - log R(a);  cases 3/4: log R(t2) - log R(b)
    a = a_of_mu(eps, D) if a is None else jnp.broadcast_to(jnp.asarray(a), eps.shape)
    g_a, g_h = tail_step_args(a, D)
    step_a = jnp.where(gauss_case, g_a, bs)
    step_h = jnp.where(gauss_case, g_h, jnp.where(c3, jnp.maximum(t2_3 - bs, 0.0), s))
    step = log_mills_step(step_a, step_h)

    # Gaussian hockey stick Q(a) - e^eps Q(a + D) (eq. (29) at mu = D), the Gaussian kernel's
    # cancellation-free form (also at eps = 0 with D -> 0, where log Q(a) - log Q(a + D) cancels)
    log_gauss = -0.5 * b * b + HALF_LOG_2PI + log_delta_from_a(eps, a, D, step)
    log_case1 = logaddexp(constants.log_two_w, log_gauss)

    # case 2
    t1_abs2 = jnp.where(c2, 0.5 * D - eps / (2.0 * bs), 0.5)
    log_case2 = logaddexp(
        LOG_2 + log_neg_expm1(bs, t1_abs2) - jnp.log(bs),
        log_expm1(jnp.where(c2, eps, 0.0)) - bs * bs + constants.log_inv_b_minus_mills_b,
    )

    # case 3
    log_r_diff = constants.log_mills_b + log_neg_expm1(
        -jnp.minimum(step, 0.0)
    )  # log(R(b) - R(t2))
    log_case3 = logaddexp(
        logaddexp(
            LOG_2 + log_neg_expm1(bs, t1_abs3) - jnp.log(bs),
            -bs * t1_abs3 + log_neg_expm1(bs, bs - t1_abs3) + log_inv_b_minus_mills(bs, t2_3),
        ),
        -bs * bs + log_r_diff,
    )

    # case 4
    gap4 = jnp.where(c4, jnp.maximum(D - s, 0.0), 1.0)
    log_case4 = -bs * bs + logaddexp(
        log_expm1(bs, gap4) + log_inv_b_minus_mills(bs, bs + s), log_r_diff
    )

    log_dz = jnp.where(
        c1,
        log_case1,
        jnp.where(c2, log_case2, jnp.where(c3, log_case3, jnp.where(c4, log_case4, log_gauss))),
    )
    return fail_closed(log_dz - constants.log_z, eps, b, D, a)


@float64_kernel
def log_delta_flipped_huber(
    epsilon: ArrayLike, alpha: ArrayLike, gamma: ArrayLike, sensitivity: ArrayLike
) -> Array:
    r"""``log delta(epsilon)`` of the 1-D flipped Huber mechanism (Theorem 3, eq. (13)); exact.

    Args:
      epsilon: ``epsilon >= 0``.
      alpha: transition ``alpha >= 0``.
      gamma: scale ``gamma > 0``.
      sensitivity: ``Delta > 0``.

    Evaluated for the standard shape ``b = alpha/gamma`` at ``D = Delta/gamma``
    in a cancellation-free form (module docstring), with the Gaussian cases'
    ``a = eps gamma / Delta - Delta / (2 gamma)`` formed from the float inputs with
    compensated arithmetic (as in :mod:`dpjax.accounting.gaussian`); float64,
    jit/vmap-safe.  Error :data:`ERROR`.
    """
    epsilon, alpha, gamma, sens = jnp.broadcast_arrays(
        *(jnp.asarray(x) for x in (epsilon, alpha, gamma, sensitivity))
    )
    return log_delta_flipped_huber_standard(
        epsilon, alpha / gamma, sens / gamma, a=a_of_sigma(epsilon, gamma, sens)
    )


@float64_kernel
def delta_flipped_huber(
    epsilon: ArrayLike, alpha: ArrayLike, gamma: ArrayLike, sensitivity: ArrayLike
) -> Array:
    """``delta(epsilon)`` of the 1-D flipped Huber mechanism (eq. (13)), reported as a certified
    upper bound (:func:`dpjax.certificate.reported_delta` with :data:`ERROR`).

    Args:
      epsilon: ``epsilon >= 0``.
      alpha: transition ``alpha >= 0``.
      gamma: scale ``gamma > 0``.
      sensitivity: ``Delta > 0``.
    """
    return reported_delta(log_delta_flipped_huber(epsilon, alpha, gamma, sensitivity), ERROR)


@float64_kernel
def log_delta_flipped_huber_generic(
    epsilon: ArrayLike,
    alpha: ArrayLike,
    gamma: ArrayLike,
    sensitivity: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""The same profile through the generic Lemma 11 kernel (numerical ``x*``; eq. (28)).

    Independent of eq. (13) and of the closed-form inverse of eq. (15): it
    bisects the centred loss (eq. (25)) built from ``rho_alpha`` and uses the survival
    function of eq. (10).  Used as a cross-check.

    Args:
      epsilon: ``epsilon >= 0``.
      alpha: transition ``alpha >= 0``.
      gamma: scale ``gamma > 0``.
      sensitivity: ``Delta > 0``.
      num_iterations: halvings of the bisection for ``x*`` (static).
    """
    eps, alpha, gamma, d = jnp.broadcast_arrays(
        jnp.asarray(epsilon), jnp.asarray(alpha), jnp.asarray(gamma), jnp.asarray(sensitivity)
    )
    b, D = alpha / gamma, d / gamma
    upper = eps / D + b + D  # loss(x) = x D > eps beyond max(eps/D, b + D/2)
    return log_delta_symmetric_log_concave(
        eps,
        D,
        lambda y: standard_log_sf(y, b),
        lambda x: centred_privacy_loss(x, D, b, 1.0),
        upper * (1.0 + 1e-12) + 1e-300,
        num_iterations,
    )


@float64_kernel
def epsilon_flipped_huber(
    delta: ArrayLike,
    alpha: ArrayLike,
    gamma: ArrayLike,
    sensitivity: ArrayLike,
    num_iterations: int = 100,
) -> Array:
    r"""Least ``epsilon`` with the exact 1-D profile ``<= delta (1 - MARGIN)`` (certified end).

    Bisection (:func:`dpjax.numerics.least_feasible`) on ``[0, max(2 eps_N + 1, eps_Z)]``
    keeping the end where :func:`log_delta_flipped_huber` is ``<= delta (1 - MARGIN)``:
    ``0`` where it holds at 0, ``inf`` (no certificate) where it fails at the upper end.

    * ``eps_N = mu sqrt(2 log(1/delta)) + mu^2 / 2`` with ``mu = Delta / gamma``: the
      Chernoff bound on the Gaussian epsilon at ``sigma = gamma`` (the FH tails;
      ``delta_N(eps_N) <= Q(sqrt(2 log(1/delta))) <= delta / 2``), in closed form: a bracket
      end only needs to be large enough, and a nested Gaussian search here doubled the
      compiled program;
    * ``eps_Z``: the epsilon of Theorem 9's ``(xi, eta)``-zCDP bound
      (:func:`dpjax.accounting.flipped_huber_kdim.zcdp_flipped_huber`), which reaches the
      Laplace end (large ``alpha / gamma``), where the Laplace centre's losses exceed
      ``eps_N`` (with ``2 eps_N + 1`` alone such members got ``inf``).

    The returned end passed the test when the bisection evaluated it.  (A re-evaluation
    after the loop, in another compiled context, can differ by an ulp right at the boundary
    and turned a certified end into ``inf``; the callers' certificate,
    :func:`dpjax.certificate.certify_epsilon`, re-checks the answer with room for that
    rounding.)

    Args:
      delta: ``delta`` in ``[0, 1)`` (``inf`` at ``delta = 0``).
      alpha: transition ``alpha >= 0``.
      gamma: scale ``gamma > 0``.
      sensitivity: ``Delta > 0``.
      num_iterations: halvings of the bisection (static).
    """
    delta, alpha, gamma, d = jnp.broadcast_arrays(
        jnp.asarray(delta), jnp.asarray(alpha), jnp.asarray(gamma), jnp.asarray(sensitivity)
    )
    level = log_target(delta)
    b, D = alpha / gamma, d / gamma
    consts = shape_constants(b)
    xi, eta = zcdp_flipped_huber(alpha, gamma, d)
    laplace_end = epsilon_from_zcdp_shifted(xi, eta, delta * (1.0 - 2.0 * MARGIN))
    log_inv = jnp.maximum(-jnp.log(jnp.where(delta > 0, delta, 1.0)), 0.0)
    eps_n = D * jnp.sqrt(2.0 * log_inv) + 0.5 * D * D  # D = Delta / gamma: the tails' mu
    hi = jnp.maximum(2.0 * eps_n + 1.0, laplace_end * (1 + 1e-9))

    def ok(e):
        a = a_of_sigma(e, gamma, d)
        return log_delta_flipped_huber_standard(e, b, D, consts, a=a) <= level

    return jnp.where(delta > 0, least_feasible(ok, hi, num_iterations), jnp.inf)


__all__ = [
    "delta_flipped_huber",
    "epsilon_flipped_huber",
    "log_delta_flipped_huber",
    "log_delta_flipped_huber_generic",
    "log_delta_flipped_huber_standard",
]
