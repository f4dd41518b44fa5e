r"""Privacy budgets of Bayesian coordinate DP: Theorem 2's vector, Proposition 4, Proposition 6.

All of bayesian-coordinate-dp.  ``q`` bounds the total-variation dependence of
coordinate ``i`` on the others (Assumption 1 / eq. (13)).  Host-side float64: these
decide privacy levels, so every returned level is re-derived from the vector
actually returned (never from the target) and checked against the target.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dpjax import _validate
from dpjax.errors import CertificationError
from solvers import LinearProgram, solve

#: relative slack subtracted from the per-coordinate budgets against rounding
_SLACK = 1e-12


def check_deltas(deltas, name: str = "coordinate deltas") -> np.ndarray:
    """The coordinate privacy levels as a float64 vector; ``ValueError`` unless real numbers
    (not strings or booleans), finite and > 0."""
    d = np.atleast_1d(_validate.positive(deltas, name))
    if d.ndim != 1:
        raise ValueError(f"{name} must be a non-empty 1-D vector, got {_validate.shown(deltas)}")
    return d


def _single(value, name: str, check) -> float:
    arr = check(value, name)
    if arr.ndim:
        raise ValueError(f"{name} must be a single number, got {_validate.shown(value)}")
    return float(arr)


def check_correlation(q) -> float:
    """``q`` as a float; ``ValueError`` unless a real number in ``[0, 1]``."""
    q = _single(q, "correlation q", _validate.nonnegative)
    if q > 1.0:
        raise ValueError(f"correlation q must be in [0, 1], got {q!r}")
    return q


def _check_epsilon(epsilon) -> float:
    return _single(epsilon, "epsilon", _validate.positive)


def cdp_to_bcdp(c, q, ldp: float | None = None) -> np.ndarray:
    r"""BCDP levels implied by ``c``-CDP under dependence ``q`` (Proposition 4).

    .. math:: \delta_i = c_i + \log(1 + q_i(e^{\sum_{j\ne i} c_j} - 1)) \quad\text{(part 1)},
       \qquad \delta'_i = \min\{c_i + \log(1 + q_i (e^{\varepsilon} - 1)), \varepsilon\}
       \quad\text{(part 2, the mechanism } \varepsilon\text{-LDP)}.

    Args:
      c: the CDP vector (``>= 0``).
      q: dependence bounds ``q_i`` in ``[0, 1]`` (scalar or one per coordinate).
      ldp: the mechanism's LDP level ``epsilon`` if known (part 2), else ``None``.

    Returns:
      The BCDP vector.

    Example:
      >>> cdp_to_bcdp([0.5, 1.0], 0.0).tolist()  # independent coordinates: delta = c
      [0.5, 1.0]
    """
    c = np.atleast_1d(_validate.nonnegative(c, "the CDP vector c"))
    q = np.broadcast_to(_validate.nonnegative(q, "correlation q"), c.shape)
    if np.any(q > 1):
        raise ValueError(f"correlation q must be in [0, 1], got {_validate.shown(q)}")
    if ldp is None:
        rest = c.sum() - c
        return c + np.log1p(q * np.expm1(rest))
    ldp = _single(ldp, "ldp", _validate.nonnegative)
    return np.minimum(c + np.log1p(q * np.expm1(ldp)), ldp)


class BudgetVector(NamedTuple):
    """Theorem 2's budget vector and what it guarantees (coordinates in the given order).

    Attributes:
      c: the cumulative budgets ``c_i`` (``M_mean`` uses ``c_k - c_{k-1}`` for row ``k``
        after sorting by ``c``).
      ldp: the LDP level guaranteed (``max c = c_d``).
      bcdp: the BCDP level guaranteed for each coordinate (Proposition 4, part 2;
        the least sensitive coordinate by Proposition 3).
      order: the processing order (indices sorting the deltas, stable).
    """

    c: np.ndarray
    ldp: float
    bcdp: np.ndarray
    order: np.ndarray


def theorem2_budget(deltas, epsilon, q, zeta=None) -> BudgetVector:
    r"""The budget vector ``c`` of Theorem 2 (eq. (16)) of bayesian-coordinate-dp.

    With ``delta`` sorted non-decreasingly and ``tilde delta_i = min(delta_i, epsilon)``:

    .. math:: c_d = \min\{\log((e^{\zeta\tilde\delta_1} + q - 1)/q),\ \tilde\delta_d\},\quad
       c_i = c_d \text{ if } c_d \le \tilde\delta_i \text{ else }
       \tilde\delta_i - \log(1 + q e^{c_d} - q).

    ``M_mean`` with this ``c`` is ``c_d``-LDP (so ``epsilon``-LDP) and ``delta``-BCDP
    when every coordinate but the least sensitive one satisfies Assumption 1 with
    ``q``.  The guaranteed levels are recomputed from the returned ``c``
    (Proposition 4, part 2) and checked against ``tilde delta``; the budgets below
    ``c_d`` carry a ``1e-12`` relative slack against rounding.

    Args:
      deltas: per-coordinate BCDP targets ``delta_i > 0``, any order.
      epsilon: the LDP target ``> 0``.
      q: the dependence bound of Assumption 1, in ``[0, 1]``.
      zeta: the free parameter in ``(0, 1]`` (default ``(1 + q)/2``, Appendix B.1).

    Returns:
      A :class:`BudgetVector`, coordinates in the given order.

    Raises:
      ValueError: invalid inputs.
      CertificationError: a guaranteed level exceeds its target (never expected).

    Example:
      >>> b = theorem2_budget([0.2, 2.0, 2.0], 2.0, 0.0)
      >>> [round(x, 12) for x in b.c.tolist()], b.ldp
      ([0.2, 2.0, 2.0], 2.0)
    """
    d = check_deltas(deltas)
    epsilon = _check_epsilon(epsilon)
    q = check_correlation(q)
    zeta = (1 + q) / 2 if zeta is None else _single(zeta, "zeta", _validate.positive)
    if not 0 < zeta <= 1:
        raise ValueError(f"zeta must be in (0, 1], got {zeta}")
    order = np.argsort(d, kind="stable")
    dt = np.minimum(d[order], epsilon)
    if q == 0:
        cd = dt[-1]
    else:
        first = (np.log(np.expm1(zeta * dt[0]) + q) - np.log(q)) * (1 - _SLACK)
        cd = min(first, dt[-1])
    loss = np.log1p(q * np.expm1(cd))
    c_sorted = np.where(cd <= dt, cd, (dt - loss) * (1 - _SLACK))
    c_sorted[-1] = cd
    c_sorted = np.maximum(c_sorted, 0.0)
    c = np.empty_like(c_sorted)
    c[order] = c_sorted
    bcdp = mean_guarantees(c, q, order)
    if np.any(bcdp > np.minimum(d, epsilon)):
        raise CertificationError(f"Theorem 2 budget exceeds its targets: {bcdp} > {d}")
    return BudgetVector(c, float(cd), bcdp, order)


def mean_guarantees(c, q, order=None) -> np.ndarray:
    r"""BCDP levels of ``M_mean`` run with the cumulative budgets ``c`` (any order).

    ``M_mean`` is ``c``-CDP and ``max c``-LDP (proof of Theorem 2), so by
    Proposition 4 (part 2) coordinate ``i`` is ``min(c_i + log(1 + q(e^{c_max} - 1)),
    c_max)``-BCDP; the last coordinate of the processing order is exempt from
    Assumption 1 and gets ``c_max`` (Proposition 3).

    Args:
      c: cumulative budgets ``>= 0``.
      q: dependence bound in ``[0, 1]``.
      order: the processing order (default: stable sort of ``c``).

    Example:
      >>> mean_guarantees([0.1, 1.0], 1.0).tolist()  # fully dependent: everything is max c
      [1.0, 1.0]
    """
    c = np.atleast_1d(np.asarray(c, dtype=np.float64))
    order = np.argsort(c, kind="stable") if order is None else np.asarray(order)
    top = float(c.max())
    out = cdp_to_bcdp(c, check_correlation(q), ldp=top)
    out[order[-1]] = top
    return out


def corollary1_bound(n, d, k, delta, epsilon, q) -> float:
    r"""The simplified MSE rate of Corollary 1 (eqs. (18)-(19)), constant omitted.

    ``k`` coordinates at level ``delta``, ``d - k`` at ``epsilon > 2 delta``, ``zeta = 1/2``:

    .. math:: \frac1n\Big(\frac{dk}{\delta^2} + \frac{(d-k)^2}{\varepsilon^2}\Big)
       \ \text{if } q \le \frac{e^{\delta/2}-1}{e^\varepsilon-1},\quad\text{else}\quad
       \frac1n\Big(\frac{dk}{\delta^2} + \frac{(d-k)^2}{\frac{d-k}{d}\delta^2
       + (c_d - \delta/2)^2}\Big),\ c_d = \log\frac{e^{\delta/2}+q-1}{q}.

    Args:
      n: users.
      d: dimension.
      k: number of sensitive coordinates (``1 <= k < d``).
      delta: their level.
      epsilon: the others' level and the LDP level.
      q: dependence bound.

    Example:
      >>> round(corollary1_bound(1, 2, 1, 0.5, 2.0, 0.0), 6)
      8.25
    """
    q = check_correlation(q)
    if not (1 <= k < d and 0 < 2 * delta < epsilon):
        raise ValueError("Corollary 1 needs 1 <= k < d and epsilon > 2 delta > 0")
    if q <= np.expm1(delta / 2) / np.expm1(epsilon):
        return (d * k / delta**2 + (d - k) ** 2 / epsilon**2) / n
    cd = np.log(np.expm1(delta / 2) + q) - np.log(q)
    return (d * k / delta**2 + (d - k) ** 2 / ((d - k) / d * delta**2 + (cd - delta / 2) ** 2)) / n


class CDPBudget(NamedTuple):
    """A ``c``-CDP budget chosen by Proposition 6's linear programme.

    Attributes:
      c: per-coordinate CDP levels (given order).
      ldp: the LDP level by composition, ``sum c``.
      bcdp: BCDP levels guaranteed by Proposition 4 (part 1) for this ``c``.
      status: the LP solver's status code (0: optimal).
    """

    c: np.ndarray
    ldp: float
    bcdp: np.ndarray
    status: int


def proposition6_matrix(deltas, q) -> np.ndarray:
    r"""``A_delta`` of Proposition 6 (eq. (53)): ``A c <= 1`` implies the Proposition 4 targets.

    .. math:: A_{ii} = 1/\delta_i,\qquad A_{ij} = 1/\log(1 + (e^{\delta_i} - 1)/q_i)\ (j \ne i)

    (``0`` off the diagonal when ``q_i = 0``).  The appendix's proof prints
    ``e^{delta_1 - 1}`` for ``g(0)``; the chord argument needs ``g(0) = log(1 +
    (e^{delta_1} - 1)/q_1)``, which is eq. (53) as stated.

    Args:
      deltas: BCDP targets ``> 0``.
      q: dependence bounds in ``[0, 1]`` (scalar or per coordinate).

    Example:
      >>> proposition6_matrix([1.0, 2.0], 0.0).tolist()
      [[1.0, 0.0], [0.0, 0.5]]
    """
    d = check_deltas(deltas)
    q = np.broadcast_to(np.asarray(q, dtype=np.float64), d.shape)
    if np.any((q < 0) | (q > 1)):
        raise ValueError("correlation q must be in [0, 1]")
    safe_q = np.where(q > 0, q, 1.0)
    off = np.where(q > 0, 1.0 / np.log1p(np.expm1(d) / safe_q), 0.0)
    a = np.repeat(off[:, None], d.size, axis=1)
    np.fill_diagonal(a, 1.0 / d)
    return a


def proposition6_budget(deltas, q, epsilon=None, weights=None, solver="cvxpy") -> CDPBudget:
    r"""Choose a ``c``-CDP budget by the linear sufficient condition of Proposition 6.

    Solves ``max w^T c  s.t.  A_delta c <= 1,  c >= 0`` (and ``sum c <= epsilon`` when
    an LDP target is given) through :mod:`solvers` (:class:`solvers.LinearProgram`,
    cvxpy backend).  The solution is scaled down by ``1 - 1e-9`` against solver
    tolerance and then *checked*: the BCDP levels of Proposition 4 (part 1) are
    recomputed from the returned ``c`` and must meet ``delta``.

    Args:
      deltas: BCDP targets ``> 0``.
      q: dependence bounds in ``[0, 1]``.
      epsilon: optional LDP target (``sum c <= epsilon``).
      weights: utility weights ``w >= 0`` (default ones: total budget).
      solver: a :mod:`solvers` backend with the ``cvxpy_model`` hook.

    Returns:
      A :class:`CDPBudget`.

    Raises:
      CertificationError: the LP failed or its point misses a target.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> b = proposition6_budget([0.5, 1.0], 0.0)
      >>> [round(x, 6) for x in b.c.tolist()]
      [0.5, 1.0]
    """
    d = check_deltas(deltas)
    a = proposition6_matrix(d, q)
    bound = np.ones(d.size)
    if epsilon is not None:
        a = np.vstack([a, np.ones(d.size)])
        bound = np.append(bound, _check_epsilon(epsilon))
    w = np.ones(d.size) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != d.shape or np.any(~np.isfinite(w) | (w < 0)):
        raise ValueError("weights must be finite, >= 0, one per coordinate")
    sol = solve(LinearProgram.create(w, a, bound, upper=d), solver, tol=1e-7)
    c = np.maximum(np.asarray(sol.x, dtype=np.float64), 0.0) * (1 - 1e-9)
    if not np.all(np.isfinite(c)):
        raise CertificationError(f"Proposition 6 LP failed (status {int(sol.status)})")
    bcdp = cdp_to_bcdp(c, q)
    if np.any(bcdp > d) or (epsilon is not None and c.sum() > float(epsilon)):
        raise CertificationError(f"Proposition 6 LP point misses its targets: {bcdp} > {d}")
    return CDPBudget(c, float(c.sum()), bcdp, int(sol.status))
