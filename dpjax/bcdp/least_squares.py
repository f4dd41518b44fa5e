r"""Private least squares under LDP and BCDP (Algorithm 3, Theorem 3 of bayesian-coordinate-dp).

Each user ``x = [z; l]`` in ``[-1, 1]^d`` (features ``z``, label ``l`` last) sends two
independent releases ``hat x^{(1)}, hat x^{(2)} = M_mean(x, c/2)``; together they
are ``c``-CDP and ``c_max``-LDP, so the BCDP levels are those of ``M_mean`` with
``c`` (:func:`dpjax.bcdp.budget.mean_guarantees`).  The server minimises the
unbiased quadratic

.. math:: \hat f(\theta) = \frac1{2n}\sum_i \theta^\top \hat z^{(i,1)} \hat z^{(i,2)\top}
   \theta - 2\theta^\top \hat l^{(i,1)} \hat z^{(i,2)}
   = \tfrac12 \theta^\top A \theta - b^\top\theta

over the ball ``Theta = {|theta| <= R}``.  ``A`` (symmetrised) may be indefinite;
the minimiser over the ball is the trust-region subproblem, solved globally
(eigendecomposition and a bisection on the multiplier), so ``OPT`` is exact.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax.bcdp import mean as mm
from dpjax.numerics import bisect_bracket

#: bisection steps on the trust-region multiplier (resolves it to ~2^-100 relative)
_BISECTION_STEPS = 100


class LeastSquaresFit(NamedTuple):
    """Algorithm 3's output.

    Attributes:
      theta: the minimiser of ``hat f`` over the ball.
      quadratic: the symmetrised ``A`` of ``hat f``.
      linear: ``b`` of ``hat f``.
    """

    theta: Array
    quadratic: Array
    linear: Array


def minimize_quadratic_on_ball(a: Array, b: Array, radius) -> Array:
    r"""Global minimiser of ``theta^T a theta / 2 - b^T theta`` over ``|theta| <= radius``.

    With ``a = V diag(lam) V^T`` and ``beta = V^T b``, the minimiser is
    ``theta(mu) = V beta / (lam + mu)`` with ``mu = 0`` if that is interior and
    ``a`` is positive semi-definite, else the ``mu >= max(0, -lam_min)`` with
    ``|theta(mu)| = radius`` (bisection); in the "hard case" the missing norm is
    added along the least eigenvector.  Jittable.

    Args:
      a: symmetric ``(p, p)``.
      b: ``(p,)``.
      radius: ``R > 0``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> th = minimize_quadratic_on_ball(jnp.eye(2), jnp.array([3.0, 4.0]), 1.0)
      >>> [round(float(v), 6) for v in th]
      [0.6, 0.8]
    """
    lam, vec = jnp.linalg.eigh(a)
    beta = vec.T @ b
    lo = jnp.maximum(0.0, -lam[0])
    first = jnp.arange(lam.size) == 0

    def coefficients(mu, drop_first=False):
        coef = beta / jnp.maximum(lam + mu, 1e-300)
        return jnp.where(first & drop_first, 0.0, coef)

    # the multiplier: the least mu >= lo with |theta(mu)| <= R (the norm decreases in mu)
    hi = lo + jnp.linalg.norm(b) / radius + 1.0
    mu = bisect_bracket(lambda mu: ~(jnp.linalg.norm(coefficients(mu)) > radius), hi, lo,
                           _BISECTION_STEPS).good
    boundary = vec @ coefficients(mu)
    interior = (lam[0] > 0) & (jnp.linalg.norm(coefficients(0.0)) <= radius)
    # hard case: |theta(lo)| < R with lam_min <= 0: fill the norm along the least eigenvector
    rest = coefficients(lo, drop_first=True)
    hard = (~interior) & (lam[0] <= 0) & (jnp.linalg.norm(coefficients(lo)) < radius)
    fill = jnp.sqrt(jnp.maximum(radius**2 - jnp.sum(rest**2), 0.0))
    theta_hard = vec @ rest + fill * vec[:, 0]
    return jnp.where(interior, vec @ coefficients(0.0), jnp.where(hard, theta_hard, boundary))


def private_least_squares(key: Array, features: Array, labels: Array, c, radius: float,
                          channel="duchi") -> LeastSquaresFit:
    r"""Algorithm 3: two ``M_mean(x, c/2)`` releases per user, then ``OPT`` over the ball.

    Args:
      key: one PRNG key.
      features: ``(n, d - 1)`` in ``[-1, 1]``.
      labels: ``(n,)`` in ``[-1, 1]`` (the last coordinate of ``x``).
      c: cumulative budgets for the ``d`` coordinates (Theorem 2's vector; the
        label should be the least sensitive coordinate, exempt from Assumption 1).
      radius: ``R`` of ``Theta = {|theta| <= R}``.
      channel: ``"duchi"`` or ``"privunit"``.

    Returns:
      A :class:`LeastSquaresFit`.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> z = jnp.ones((50, 1)) * 0.5
      >>> fit = private_least_squares(jax.random.key(0), z, 0.5 * z[:, 0], [4.0, 4.0], 2.0)
      >>> fit.theta.shape
      (1,)
    """
    features = jnp.asarray(features)
    labels = jnp.asarray(labels, dtype=features.dtype)
    if features.ndim != 2 or labels.shape != features.shape[:1]:
        raise ValueError("need features (n, d-1) and labels (n,)")
    radius = float(radius)
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be finite and > 0, got {radius}")
    x = jnp.concatenate([features, labels[:, None]], axis=1)
    half = np.asarray(c, dtype=np.float64) / 2
    p = mm.plan(half, channel)
    k1, k2 = jax.random.split(key)
    x1 = mm.combine(mm.release(k1, x, p), p)
    x2 = mm.combine(mm.release(k2, x, p), p)
    n = x.shape[0]
    z1, l1, z2 = x1[:, :-1], x1[:, -1], x2[:, :-1]
    a = z1.T @ z2 / n
    a = 0.5 * (a + a.T)
    b = z2.T @ l1 / n
    return LeastSquaresFit(minimize_quadratic_on_ball(a, b, radius), a, b)


def theorem3_bound(c, n: int, radius: float) -> float:
    r"""The excess-risk rate of Theorem 3 (eq. (22)), absolute constant omitted.

    .. math:: (R^2 + R)\Big(\frac{\log d}{\sqrt n}(r^2 + r d) \wedge d\Big),\qquad
       r^2 = \sum_{i=1}^d \Big(\sum_{k\le i}\frac{(c_k/2 - c_{k-1}/2)^2}{d-k+1}\Big)^{-1},

    ``max_{theta in Theta} |theta|^2 + |theta| = R^2 + R`` for the ball.  ``r^2`` is
    Lemma 1's (85), the per-user error of ``M_mean(x, c/2)``: the budgets halved,
    which (22) as printed leaves out (a factor 4 inside its ``lesssim``).

    Args:
      c: cumulative budgets.
      n: users.
      radius: ``R``.

    Example:
      >>> round(theorem3_bound([2.0, 2.0], 10**6, 1.0), 6)
      0.01109
    """
    c = np.asarray(c, dtype=np.float64)
    d = c.size
    p = mm.plan(c / 2)
    total = np.cumsum(p.weights)
    with np.errstate(divide="ignore"):
        r2 = float(np.sum(np.where(total > 0, 1.0 / total, np.inf)))
    rate = np.log(d) / np.sqrt(n) * (r2 + np.sqrt(r2) * d)
    return float((radius**2 + radius) * min(rate, d))
