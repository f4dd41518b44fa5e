r"""Exact privacy levels of finite mechanisms (Definitions 1-4 of bayesian-coordinate-dp).

A finite mechanism is a table ``P[x, y] = Pr{M(x) = y}`` over the points ``x`` of a
product space ``X_1 x ... x X_d`` (given as integer tuples) and finitely many
outputs ``y``.  Ratios of sums are at most the largest ratio of their terms, and
conditioning on ``x_i in S_i`` averages the singletons, so every supremum of the
definitions is attained at single outputs and single values:

.. math:: \varepsilon_{LDP} = \max_{y, x, x'} \log\frac{P[x, y]}{P[x', y]},\qquad
   c_i = \max_{y,\ x_{-i} = x'_{-i}} \log\frac{P[x, y]}{P[x', y]},\qquad
   \delta_i = \max_{y, s, s'} \log\frac{\Pr\{y \mid x_i = s\}}{\Pr\{y \mid x_i = s'\}}

(``s, s'`` of positive prior mass; ``inf`` where a numerator is positive and a
denominator 0).  By Theorem 1 ``delta`` is also the least vector for which every
test of ``x_i in S_i`` against ``S'_i`` has ``e^{delta_i} alpha + beta >= 1``;
:func:`hypothesis_test_check` verifies that form over all deterministic tests.
Host-side NumPy, exact up to float64 rounding.
"""

from __future__ import annotations

import itertools

import numpy as np


def _log_ratio_max(num: np.ndarray, den: np.ndarray) -> float:
    """``max log(num/den)`` over entries (``0/0`` skipped, ``p/0 = inf``)."""
    num, den = np.broadcast_arrays(num, den)
    both_zero = (num == 0) & (den == 0)
    if np.any((num > 0) & (den == 0)):
        return float("inf")
    keep = ~both_zero
    if not np.any(keep):
        return 0.0
    with np.errstate(divide="ignore"):
        return float(np.max(np.log(num[keep]) - np.log(den[keep])))


def _check_table(points, table):
    points = np.asarray(points)
    table = np.asarray(table, dtype=np.float64)
    if points.ndim != 2 or table.ndim != 2 or table.shape[0] != points.shape[0]:
        raise ValueError("need points (N, d) and a table (N, outputs)")
    if np.any(table < 0) or not np.allclose(table.sum(axis=1), 1.0, atol=1e-12):
        raise ValueError("each row of the mechanism table must be a probability vector")
    return points, table


def ldp_epsilon(table) -> float:
    """Exact LDP level of the table (Definition 1): ``max_y max_{x,x'} log P[x,y]/P[x',y]``.

    Args:
      table: ``(N, outputs)`` row-stochastic.

    Example:
      >>> round(ldp_epsilon([[0.75, 0.25], [0.25, 0.75]]), 12)  # randomized response, log 3
      1.098612288668
    """
    t = np.asarray(table, dtype=np.float64)
    return _log_ratio_max(t[:, None, :], t[None, :, :])


def cdp_vector(points, table) -> np.ndarray:
    """Exact CDP levels (Definition 3): ratios over pairs differing in coordinate ``i`` only.

    Args:
      points: ``(N, d)`` integer input points.
      table: ``(N, outputs)``.

    Example:
      >>> pts = [[0, 0], [0, 1], [1, 0], [1, 1]]
      >>> cdp_vector(pts, [[1, 0], [1, 0], [0, 1], [0, 1]]).tolist()  # reveals x_1
      [inf, 0.0]
    """
    points, table = _check_table(points, table)
    d = points.shape[1]
    out = np.zeros(d)
    for i in range(d):
        rest = np.delete(points, i, axis=1)
        same = np.all(rest[:, None, :] == rest[None, :, :], axis=-1)
        a, b = np.nonzero(same)
        out[i] = _log_ratio_max(table[a], table[b]) if a.size else 0.0
    return out


def conditional_laws(points, prior, table, i: int):
    """``Pr{y | x_i = s}`` for each value ``s`` of positive prior mass: ``(values, laws)``."""
    points, table = _check_table(points, table)
    prior = np.asarray(prior, dtype=np.float64)
    if prior.shape != (points.shape[0],) or np.any(prior < 0) or not np.isclose(prior.sum(), 1):
        raise ValueError("prior must be a probability vector over the points")
    values = np.unique(points[:, i])
    laws = []
    kept = []
    for s in values:
        sel = points[:, i] == s
        mass = prior[sel].sum()
        if mass > 0:
            kept.append(s)
            laws.append(prior[sel] @ table[sel] / mass)
    return np.asarray(kept), np.asarray(laws)


def bcdp_vector(points, prior, table) -> np.ndarray:
    r"""Exact BCDP levels (Definition 4): ``max_{y,s,s'} log Pr{y|x_i=s} / Pr{y|x_i=s'}``.

    Args:
      points: ``(N, d)`` integer input points.
      prior: ``(N,)`` prior probabilities.
      table: ``(N, outputs)``.

    Example:
      >>> pts = [[0, 0], [0, 1], [1, 0], [1, 1]]
      >>> tab = [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5], [0.5, 0.5]]  # Example 1, a=b=c=1/2
      >>> [round(v, 12) for v in bcdp_vector(pts, [0.25] * 4, tab).tolist()]
      [0.69314718056, 0.69314718056]
    """
    points, table = _check_table(points, table)
    out = np.zeros(points.shape[1])
    for i in range(points.shape[1]):
        _, laws = conditional_laws(points, prior, table, i)
        out[i] = _log_ratio_max(laws[:, None, :], laws[None, :, :])
    return out


def hypothesis_test_check(points, prior, table, deltas, tol: float = 1e-12) -> bool:
    r"""Theorem 1's form: ``e^{delta_i} alpha + beta >= 1`` for every test, every ``i``.

    Enumerates all subsets ``S_i, S'_i`` of the values of coordinate ``i`` (positive
    mass) and all rejection regions ``R`` of the outputs (``2^outputs``; keep the
    output space small), with ``alpha = Pr{R | S_i}``, ``beta = Pr{R^c | S'_i}``.

    Args:
      points: ``(N, d)``.
      prior: ``(N,)``.
      table: ``(N, outputs)``.
      deltas: the claimed BCDP vector.
      tol: slack for rounding.
    """
    points, table = _check_table(points, table)
    prior = np.asarray(prior, dtype=np.float64)
    deltas = np.asarray(deltas, dtype=np.float64)
    k = table.shape[1]
    if k > 16:
        raise ValueError("hypothesis_test_check enumerates 2^outputs regions: at most 16 outputs")
    regions = np.array(list(itertools.product([0.0, 1.0], repeat=k)))
    for i in range(points.shape[1]):
        values = [s for s in np.unique(points[:, i]) if prior[points[:, i] == s].sum() > 0]
        subsets = [c for r in range(1, len(values) + 1) for c in itertools.combinations(values, r)]
        laws = []
        for sub in subsets:
            sel = np.isin(points[:, i], sub)
            laws.append(prior[sel] @ table[sel] / prior[sel].sum())
        laws = np.asarray(laws)
        alpha = laws @ regions.T  # (subsets, regions)
        beta = 1.0 - alpha
        lhs = np.exp(deltas[i]) * alpha[:, None, :] + beta[None, :, :]
        if np.any(lhs < 1 - tol):
            return False
    return True


def compose(table_a, table_b) -> np.ndarray:
    """Two independent runs of mechanisms on the same input: outputs are pairs ``(y_a, y_b)``.

    Args:
      table_a: ``(N, k_a)``.
      table_b: ``(N, k_b)``.

    Returns:
      ``(N, k_a * k_b)`` with ``out[x, y_a * k_b + y_b] = A[x, y_a] B[x, y_b]``.
    """
    a = np.asarray(table_a, dtype=np.float64)
    b = np.asarray(table_b, dtype=np.float64)
    return (a[:, :, None] * b[:, None, :]).reshape(a.shape[0], -1)


def binary_cube(d: int) -> np.ndarray:
    """All points of ``{0, 1}^d`` as rows (first coordinate slowest)."""
    return np.array(list(itertools.product([0, 1], repeat=d)), dtype=np.int64)


def correlated_prior(d: int, q: float) -> np.ndarray:
    r"""The prior of Appendix B.1 on ``{0, 1}^d`` (rows of :func:`binary_cube`).

    With probability ``q`` all coordinates equal one ``Z ~ Bern(1/2)``, otherwise they
    are i.i.d. ``Bern(1/2)``; ``TV(pi_{x_{-i}|x_i=1}, pi_{x_{-i}|x_i=0}) = q``.

    Example:
      >>> correlated_prior(2, 1.0).tolist()
      [0.5, 0.0, 0.0, 0.5]
    """
    pts = binary_cube(d)
    const = np.all(pts == pts[:, :1], axis=1)
    return (1 - q) * 0.5**d + q * 0.5 * const


def example1(a: float = 0.5, b: float = 0.5, c: float = 0.5):
    """Example 1: ``(points, prior, table)`` with ``Pr{M = 1 | x} = a, b, 0, c``.

    ``x_1, x_2`` i.i.d. ``Bern(1/2)``; ``Pr{M(x)=1}`` is ``a`` at ``(0,0)``, ``b`` at
    ``(1,0)``, ``0`` at ``(0,1)`` and ``c`` at ``(1,1)``.
    """
    pts = binary_cube(2)  # (0,0), (0,1), (1,0), (1,1) as (x_1, x_2)
    p1 = {(0, 0): a, (1, 0): b, (0, 1): 0.0, (1, 1): c}
    one = np.array([p1[tuple(p)] for p in pts])
    return pts, np.full(4, 0.25), np.stack([1 - one, one], axis=1)


def example2():
    """Example 2: ``(points, prior, table)``; outputs ``(y_1, y_2)`` coded ``2 y_1 + y_2``.

    ``x`` uniform on ``{0,1}^3``; ``M(x) = (x_1 xor x_2, x_3)`` or ``(x_2, x_1 xor x_3)``,
    each with probability ``1/2``.
    """
    pts = binary_cube(3)
    table = np.zeros((8, 4))
    for j, (x1, x2, x3) in enumerate(pts):
        table[j, 2 * (x1 ^ x2) + x3] += 0.5
        table[j, 2 * x2 + (x1 ^ x3)] += 0.5
    return pts, np.full(8, 1 / 8), table


def randomized_response(points: np.ndarray, epsilon: float) -> np.ndarray:
    """k-ary randomized response on the distinct rows of ``points``: exactly ``epsilon``-LDP.

    Args:
      points: ``(N, m)`` inputs; the output is the index of the reported distinct row.
      epsilon: LDP level ``>= 0``.
    """
    _, idx = np.unique(points, axis=0, return_inverse=True)
    k = int(idx.max()) + 1
    keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    table = np.full((points.shape[0], k), (1 - keep) / max(k - 1, 1))
    table[np.arange(points.shape[0]), idx.ravel()] = keep
    return table


def mean_mechanism_table(c) -> tuple[np.ndarray, np.ndarray]:
    r"""``M_mean``'s release on ``{0, 1}^d`` with a finite channel: ``(points, table)``.

    Row ``k`` runs ``(c_k - c_{k-1})``-LDP randomized response on ``x_{k:d}`` (the
    structure of Mechanism 1 with a finite ``M_LDP``), the rows independent; ``c``
    must be non-decreasing.  The exact checkers then verify Theorem 2's argument
    (``c``-CDP, ``c_d``-LDP, Proposition 4) on the whole release.

    Args:
      c: non-decreasing cumulative budgets, ``d <= 4`` or so (the table has
        ``prod_k 2^{d-k+1}`` outputs).
    """
    c = np.asarray(c, dtype=np.float64)
    if np.any(np.diff(c) < 0) or np.any(c < 0):
        raise ValueError("c must be non-decreasing and >= 0")
    pts = binary_cube(c.size)
    inc = np.diff(np.concatenate([[0.0], c]))
    table = np.ones((pts.shape[0], 1))
    for k in range(c.size):
        row = randomized_response(pts[:, k:], inc[k]) if inc[k] > 0 else np.ones((pts.shape[0], 1))
        table = compose(table, row)
    return pts, table
