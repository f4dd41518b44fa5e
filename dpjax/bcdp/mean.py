r"""The multi-query mean mechanism ``M_mean`` (Mechanism 1 of bayesian-coordinate-dp).

Coordinates are processed in the order that sorts the cumulative budgets ``c``
(non-decreasing).  Row ``k`` (``k = 1..d``) releases ``Y^k = M_LDP(x_{k:d}, c_k -
c_{k-1}, sqrt(d - k + 1))``; the server combines, for coordinate ``i``, the rows
``k <= i`` that saw it with weights ``w_k = (c_k - c_{k-1})^2 / (d - k + 1)``
(Figure 2, eq. (65)):

.. math:: \hat v_i = \sum_{k \le i} w_k Y^k_i \Big/ \sum_{k \le i} w_k .

Rows with a zero increment are not released (weight 0); a coordinate whose
cumulative budget is 0 gets the estimate 0.  All released rows of all users are
drawn in one vectorised call (one PRNG key): the rows are masked copies of the
user's vector, so ``d`` does not change the compiled program's structure.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax.bcdp import channels as ch
from dpjax.numerics.lazy_scipy import special as sps


class MeanPlan(NamedTuple):
    """Host-side constants of ``M_mean`` for one budget vector (processing order).

    Attributes:
      order: coordinate indices in processing order.
      increments: ``c_k - c_{k-1}`` per row.
      weights: ``w_k`` (0 for rows not released).
      params: stacked :class:`~dpjax.bcdp.channels.ChannelParameters` of the rows.
      hemisphere: whether the channel is Duchi's (static for the sampler).
      active: indices of the released rows (positive increment; static for the sampler).
    """

    order: np.ndarray
    increments: np.ndarray
    weights: np.ndarray
    params: ch.ChannelParameters
    hemisphere: bool
    active: np.ndarray


def plan(c, channel="duchi", sampling: bool = True) -> MeanPlan:
    """Constants of ``M_mean`` for the cumulative budgets ``c`` (any order, finite, ``>= 0``).

    Args:
      c: cumulative budgets (e.g. :func:`dpjax.bcdp.budget.theorem2_budget` ``.c``).
      channel: ``"duchi"``, ``"privunit"`` or a :class:`~dpjax.bcdp.channels.Channel`.
      sampling: build what the sampler needs (PrivUnit2's inverse-CDF tables);
        ``False`` for variance bounds alone.

    Example:
      >>> p = plan([0.5, 0.2])
      >>> p.order.tolist(), [round(w, 6) for w in p.weights.tolist()]
      ([1, 0], [0.02, 0.09])
    """
    chan = ch.get_channel(channel)
    c = np.atleast_1d(np.asarray(c, dtype=np.float64))
    if c.ndim != 1 or c.size == 0 or np.any(~np.isfinite(c) | (c < 0)):
        raise ValueError(f"budget vector c must be a non-empty finite vector >= 0, got {c}")
    order = np.argsort(c, kind="stable")
    inc = np.diff(np.concatenate([[0.0], c[order]]))
    d = c.size
    dims = d - np.arange(d)
    active = inc > 0
    params = chan.parameters(np.where(active, inc, 1.0), dims, np.sqrt(dims), table=sampling)
    weights = np.where(active, inc**2 / dims, 0.0)
    return MeanPlan(order, inc, weights, params, chan.name == "duchi", np.flatnonzero(active))


def _check_cube(x) -> None:
    if isinstance(x, jax.core.Tracer):
        return
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)) or np.any(np.abs(arr) > 1):
        raise ValueError("user data must lie in the cube [-1, 1]^d")


def release(key: Array, x: Array, mean_plan: MeanPlan) -> Array:
    r"""The released rows ``Y^k`` of every user: shape ``(n, d, d)``, processing order.

    ``out[j, k, i]`` is row ``k``'s report on (sorted) coordinate ``i >= k`` of
    user ``j`` (0 for ``i < k`` and for rows not released; only the released rows,
    those with a positive increment, are drawn).  Pure JAX given the plan; jit/vmap
    over ``key``, ``x`` and the plan's ``weights`` and ``params`` (only ``order``,
    ``active`` and ``hemisphere`` fix the program).

    Args:
      key: one PRNG key.
      x: user data ``(n, d)`` in ``[-1, 1]^d``, coordinates in the given order.
      mean_plan: from :func:`plan`.
    """
    x = jnp.asarray(x)
    _check_cube(x)
    d = x.shape[-1]
    if d != mean_plan.order.size:
        raise ValueError(f"data has {d} coordinates, the budget vector {mean_plan.order.size}")
    xs = x[..., mean_plan.order]
    active = np.asarray(mean_plan.active)  # only the released rows are drawn
    out = jnp.zeros(x.shape[:-1] + (d, d), dtype=x.dtype)
    if active.size == 0:
        return out
    mask = (np.arange(d)[None, :] >= active[:, None]).astype(x.dtype)  # row k sees i >= k
    v = xs[..., None, :] * mask
    prm = jax.tree.map(lambda p: p[active], ch.as_arrays(mean_plan.params, x.dtype))
    y = ch.sample(key, v, prm, jnp.asarray(mask), hemisphere=mean_plan.hemisphere)
    return out.at[..., active, :].set(y)


def combine(rows: Array, mean_plan: MeanPlan) -> Array:
    r"""Each user's estimate ``hat v`` (eq. (65)) from its rows, in the given coordinate order.

    Args:
      rows: ``(..., d, d)`` from :func:`release`.
      mean_plan: the plan the rows were drawn with.
    """
    w = jnp.asarray(mean_plan.weights, dtype=rows.dtype)
    total = jnp.cumsum(w)
    est = jnp.einsum("k,...ki->...i", w, rows) / jnp.where(total > 0, total, 1.0)
    inverse = np.argsort(mean_plan.order)
    return est[..., inverse]


def mean_mechanism(key: Array, x: Array, c, channel="duchi") -> Array:
    r"""``M_mean(x, c)`` for every user: the per-user unbiased estimates, shape ``(n, d)``.

    ``c_max``-LDP and ``c``-CDP (proof of Theorem 2 of bayesian-coordinate-dp); see
    :func:`dpjax.bcdp.budget.mean_guarantees` for the BCDP levels.

    Args:
      key: one PRNG key.
      x: user data ``(n, d)`` in ``[-1, 1]^d``.
      c: cumulative budgets (given coordinate order).
      channel: ``"duchi"`` or ``"privunit"``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> x = jnp.ones((2000, 3))
      >>> est = mean_mechanism(jax.random.key(0), x, [1.0, 2.0, 2.0])
      >>> est.shape, bool(jnp.all(jnp.abs(est.mean(0) - 1) < 0.5))
      ((2000, 3), True)
    """
    p = plan(c, channel)
    return combine(release(key, x, p), p)


class MeanEstimate(NamedTuple):
    """The server's estimate of the users' mean.

    Attributes:
      mean: ``(1/n) sum_j hat v^{(j)}`` (unbiased for the empirical mean).
      variance: its estimated per-coordinate variance, ``s^2 / n`` with ``s^2``
        the unbiased sample variance of the users' estimates.
      projected: the mean projected onto ``[-1, 1]^d`` (``Pi`` of eq. (17)).
    """

    mean: Array
    variance: Array
    projected: Array


def server_estimate(estimates: Array) -> MeanEstimate:
    """Average the users' ``M_mean`` outputs (``(n, d)``) into the server's estimate.

    Args:
      estimates: per-user estimates, ``n >= 2`` rows.

    Example:
      >>> est = server_estimate(jnp.array([[0.0, 1.0], [2.0, 1.0]]))
      >>> est.mean.tolist(), est.variance.tolist()
      ([1.0, 1.0], [1.0, 0.0])
    """
    estimates = jnp.asarray(estimates)
    n = estimates.shape[0]
    if n < 2:
        raise ValueError("the server estimate needs at least 2 users")
    mean = estimates.mean(axis=0)
    var = estimates.var(axis=0, ddof=1) / n
    return MeanEstimate(mean, var, jnp.clip(mean, -1.0, 1.0))


def _privunit_t2(params: ch.ChannelParameters) -> np.ndarray:
    """``E <W, u>^2`` of PrivUnit2 (Beta moments of ``s = (1 + t)/2`` on the cap and off it)."""
    m = np.asarray(params.dim, dtype=np.float64)
    h = np.maximum((m - 1) / 2, 0.5)
    tau = (1 + np.asarray(params.gamma)) / 2

    def tail_moment(k):  # E[s^k ; s >= tau] under Beta(h, h)
        return np.exp(sps.betaln(h + k, h) - sps.betaln(h, h)) * sps.betainc(h, h + k, 1 - tau)

    cap = np.asarray(params.cap_mass)
    m1c, m2c = tail_moment(1) / cap, tail_moment(2) / cap
    m1o = (0.5 - tail_moment(1)) / (1 - cap)
    m2o = ((h + 1) / (2 * (2 * h + 1)) - tail_moment(2)) / (1 - cap)
    p = np.asarray(params.keep_prob)
    t2 = p * (4 * m2c - 4 * m1c + 1) + (1 - p) * (4 * m2o - 4 * m1o + 1)
    return np.where(m > 1, t2, 1.0)


def coordinate_second_moment(params: ch.ChannelParameters, hemisphere: bool) -> np.ndarray:
    r"""``sup_v max_j E Z_j^2`` of a channel call: the worst per-coordinate variance bound.

    Duchi: ``B^2 / m`` exactly (``Z Z^T`` is even, so its mean is the uniform
    sphere's).  PrivUnit2: ``|Z|^2 max(E t^2, (1 - E t^2)/(m - 1))`` with ``t =
    <W, u>`` (its moments from incomplete beta functions).

    Args:
      params: the call's constants.
      hemisphere: ``True`` for Duchi's channel.
    """
    with np.errstate(over="ignore"):  # a norm past 1e154 (a coordinate delta of 1e-300): +inf
        norm2 = np.asarray(params.norm) ** 2
    m = np.asarray(params.dim, dtype=np.float64)
    if hemisphere:
        return norm2 / m
    t2 = _privunit_t2(params)
    return norm2 * np.maximum(t2, np.where(m > 1, (1 - t2) / np.maximum(m - 1, 1), 0.0))


def variance_bound(c, n: int, channel="duchi") -> np.ndarray:
    r"""Upper bound on ``Var(hat v_i)`` of the server's mean, per coordinate (given order).

    .. math:: \operatorname{Var}\hat v_i \le \frac1n \sum_{k\le i}
       \Big(\frac{w_k}{\sum_{l \le i} w_l}\Big)^2 \sup_v E (Y^k_i)^2 ,

    exact worst case over the users' data for the rows' channel laws
    (:func:`coordinate_second_moment`); ``inf`` for a coordinate with no budget.

    Args:
      c: cumulative budgets.
      n: number of users.
      channel: ``"duchi"`` or ``"privunit"``.
    """
    p = plan(c, channel, sampling=False)
    m2 = np.where(p.weights > 0, coordinate_second_moment(p.params, p.hemisphere), 0.0)
    w = p.weights
    total = np.cumsum(w)
    num = np.cumsum(w**2 * m2)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.where(total > 0, num / total**2, np.inf) / int(n)
    out = np.empty_like(var)
    out[p.order] = var
    return out


def mse_rate(c, n: int) -> float:
    r"""The MSE rate of eq. (17) (Theorem 2), absolute constant omitted.

    .. math:: \frac1n \sum_{i=1}^d \Big(\sum_{k=1}^i \frac{(c_k - c_{k-1})^2}{d-k+1}\Big)^{-1}
       \wedge d \qquad (c \text{ sorted}).

    Args:
      c: cumulative budgets.
      n: number of users.

    Example:
      >>> round(mse_rate([1.0, 1.0], 100), 6)  # d^2 / (n eps^2)
      0.04
    """
    p = plan(c, "duchi", sampling=False)
    total = np.cumsum(p.weights)
    with np.errstate(divide="ignore"):
        s = float(np.sum(np.where(total > 0, 1.0 / total, np.inf))) / int(n)
    return min(s, float(p.order.size))
