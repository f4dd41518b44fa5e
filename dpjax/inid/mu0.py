r"""``mu0``: the solution of problem (P2) by the bisection of Appendix B (Algorithm 1).

(P2) of inid-noise-laplace-beats-gaussian: the largest ``mu`` with

.. math:: \varphi_\epsilon(\mu) = Q\!\left(\frac{\epsilon}{\mu} - \frac{\mu}{2}\right)
          - e^{\epsilon} Q\!\left(\frac{\epsilon}{\mu} + \frac{\mu}{2}\right) \le \delta .

``varphi`` increases in ``mu`` (Lemma 11).  Appendix B brackets the root by
the roots of ``Q(eps/mu - mu/2) = a`` for ``a = delta`` (lower) and
``a = delta' = delta + e^eps Q(sqrt(2 eps))`` (upper; ``eps/mu + mu/2 >=
sqrt(2 eps)`` by AM-GM):

.. math:: \mathcal{R}_\epsilon(a) = \sqrt{Q^{-1}(a)^2 + 2\epsilon} - Q^{-1}(a),
          \qquad \mu_0 \in [\mathcal{R}_\epsilon(\delta), \mathcal{R}_\epsilon(\delta')] ,

and Algorithm 1 halves it arithmetically, returning the lower end.  Here the
feasibility test is the foundation's exact log-space profile
(:func:`dpjax.accounting.gaussian.log_delta_gaussian_mu`) against the
certified level ``delta (1 - MARGIN)`` (:mod:`dpjax.certificate`), the
bracket is computed for that level, and the number of halvings is fixed
(vmap-fair; Algorithm 1's ``until width <= mu_tol`` is reported as the final
width instead).  Where the bracket is unusable (``delta' >= 1``, i.e.
``delta`` above ~0.73, or rounding made an end fail its check) the answer
bisects instead over the foundation's bracket ``[1e-300, 1e300]`` in log
space (that of :func:`dpjax.calibration.gaussian.mu_gaussian`), in the same
loop (vmap-fair: one fixed-length bisection for every point).

``mu0 = Delta_2 / sigma_min`` of the foundation's Gaussian calibration;
Lemma 3: the i.n.i.d. Gaussian mechanism is (eps, delta)-DP iff
``sum lambda_i^2 / sigma_i^2 <= mu0^2`` (for decoupled coordinates).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array
from jax.typing import ArrayLike

from dpjax.accounting.gaussian import log_delta_gaussian_mu
from dpjax.calibration.gaussian import LOG_MU_MAX, LOG_MU_MIN
from dpjax.certificate import MARGIN, log_target
from dpjax.numerics import Q_inv, Status, bisect_bracket, float64_kernel, log_Q


class Mu0Result(NamedTuple):
    """Result of :func:`mu0`.

    Attributes:
      mu0: largest certified ``mu`` (``varphi_eps(mu0) <= delta (1 - MARGIN)``).
      status: :class:`dpjax.numerics.Status`: ``OPTIMAL`` when certified,
        ``INFEASIBLE`` (e.g. ``delta = 0``), ``BRACKET_TOO_SMALL`` or ``FAILED``.
      lower, upper: the Appendix B bracket ``[R_eps(delta), R_eps(delta')]``.
      width: final bracket width in ``mu`` (Algorithm 1's ``mu_tol``).
      used_bracket: ``True`` where the Appendix B bracket was used.
    """

    mu0: Array
    status: Array
    lower: Array
    upper: Array
    width: Array
    used_bracket: Array


@float64_kernel
def bracket_root(epsilon: ArrayLike, level: ArrayLike) -> Array:
    r"""``R_eps(a)``: the positive root of ``Q(eps/mu - mu/2) = a`` (Appendix B of
    inid-noise-laplace-beats-gaussian).

    .. math:: \mathcal{R}_\epsilon(a) = \sqrt{Q^{-1}(a)^2 + 2\epsilon} - Q^{-1}(a)

    evaluated as ``2 eps / (sqrt(z^2 + 2 eps) + z)`` when ``z = Q^{-1}(a) > 0``
    (no cancellation); ``inf`` for ``a >= 1``.

    Args:
      epsilon: ``epsilon >= 0``.
      level: the level ``a`` (broadcast with ``epsilon``).

    Returns:
      ``R_eps(a)``, broadcast over the inputs.
    """
    epsilon, level = jnp.asarray(epsilon), jnp.asarray(level)
    z = Q_inv(jnp.clip(level, 0.0, 1.0))  # one trace for any shape
    root = jnp.sqrt(z * z + 2.0 * epsilon)
    pos = z > 0
    stable = 2.0 * epsilon / jnp.where(pos, root + z, 1.0)
    r = jnp.where(pos, stable, root - z)
    return jnp.where(level >= 1.0, jnp.inf, r)


@float64_kernel
def appendix_b_bracket(epsilon: ArrayLike, delta: ArrayLike) -> tuple[Array, Array]:
    r"""The Appendix B bracket of ``mu0`` (inid-noise-laplace-beats-gaussian).

    .. math:: \mu_0 \in \big[\mathcal{R}_\epsilon(\delta_t),\
              \mathcal{R}_\epsilon(\delta_t + e^{\epsilon} Q(\sqrt{2\epsilon}))\big],
              \qquad \delta_t = \delta (1 - \mathrm{MARGIN})

    (the certified level; :func:`bracket_root` for ``R_eps``).

    Args:
      epsilon: ``epsilon >= 0``.
      delta: target ``delta`` (broadcast with ``epsilon``).

    Returns:
      ``(lower, upper)``: the bracket ends (``upper = inf`` where ``delta' >= 1``).
    """
    epsilon, delta = jnp.broadcast_arrays(jnp.asarray(epsilon), jnp.asarray(delta))
    level = delta * (1.0 - MARGIN)
    level_up = level + jnp.exp(epsilon + log_Q(jnp.sqrt(2.0 * epsilon)))
    both = bracket_root(epsilon, jnp.stack([level, level_up]))  # one trace of Q^{-1}
    return both[0], both[1]


@partial(jax.jit, static_argnames="num_iterations")
@float64_kernel
def mu0(epsilon: ArrayLike, delta: ArrayLike, num_iterations: int = 100) -> Mu0Result:
    r"""Largest ``mu`` solving (P2), by Algorithm 1 on the Appendix B bracket; certified.

    The largest ``mu`` with ``varphi_eps(mu) <= delta (1 - MARGIN)`` (eq. (16), Lemma 11,
    Algorithm 1 of inid-noise-laplace-beats-gaussian; module docstring).  Pure,
    jit/vmap-safe, broadcast over ``epsilon`` and ``delta``.  ``delta = 0`` is
    infeasible (``Status.INFEASIBLE``, ``mu0 = 0``): no Gaussian mechanism is pure DP.

    Args:
      epsilon: target ``epsilon >= 0``.
      delta: target ``delta`` in ``[0, 1)``.
      num_iterations: static number of halvings (arithmetic in the Appendix B bracket,
        else in ``log mu``).

    Returns:
      A :class:`Mu0Result`.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(mu0(0.5, 1e-6).mu0), 8)
      0.12410615
    """
    epsilon, delta = jnp.broadcast_arrays(jnp.asarray(epsilon), jnp.asarray(delta))
    level = log_target(delta)
    lo, hi = appendix_b_bracket(epsilon, delta)
    finite_hi = jnp.where(jnp.isfinite(hi), hi, 1.0)

    def feasible_mu(mu):  # broadcasts over a leading axis: traced once per call site
        safe = jnp.where(mu > 0, mu, 1.0)
        ok = log_delta_gaussian_mu(epsilon, safe) <= level
        return jnp.where(mu > 0, ok, True) & (delta > 0)

    # All bracket ends checked in one vectorised evaluation: the Appendix B ends and the
    # foundation's log bracket [1e-300, 1e300] (that of mu_gaussian).
    ends = jnp.stack([lo, finite_hi, jnp.exp(LOG_MU_MIN + 0 * lo), jnp.exp(LOG_MU_MAX + 0 * lo)])
    ok_ends = feasible_mu(ends)
    # Arithmetic halving resolves mu0 to ~1e-17 relative only if hi / lo is moderate;
    # R_eps(delta) = 0 at eps = 0 (and tiny for tiny eps): there the log bracket is used,
    # as it is for delta' >= 1 (delta above ~0.73) or where rounding fails an end.
    resolves = (lo > 0) & (finite_hi - lo <= lo * 2.0 ** (num_iterations - 56))
    used = jnp.isfinite(hi) & (hi > lo) & resolves & ok_ends[0] & ~ok_ends[1]
    status = jnp.where(
        used | (ok_ends[2] & ~ok_ends[3]),
        Status.OPTIMAL,
        jnp.where(~ok_ends[2], Status.INFEASIBLE, Status.BRACKET_TOO_SMALL),
    ).astype(jnp.int32)

    # One fixed-length bisection for every point (vmap-fair): over mu in the Appendix B
    # bracket (arithmetic midpoints, Algorithm 1) where it is used, else over log mu.
    def mu_of(x):
        return jnp.where(used, x, jnp.exp(x))

    good0 = jnp.where(used, lo, LOG_MU_MIN)
    bad0 = jnp.where(used, finite_hi, LOG_MU_MAX)
    found = bisect_bracket(lambda x: feasible_mu(mu_of(x)), good0, bad0, num_iterations)
    good = found.good
    bad = found.bad
    status = jnp.where((status == Status.OPTIMAL) & jnp.isnan(good), Status.FAILED, status)
    mu = jnp.where(status == Status.OPTIMAL, mu_of(good), 0.0)
    width = mu_of(bad) - mu_of(good)
    return Mu0Result(mu, status, lo, hi, width, used)
