r"""Exact (PLD) accounting and calibration of i.n.i.d. allocations at K = 10^4 .. 10^6 by groups.

An i.n.i.d. allocation adds independent noise ``Z_i`` of scale ``s_i`` to coordinate ``i``
of a query with sensitivity profile ``lambda`` (inid-noise-laplace-beats-gaussian,
Definition 4; flipped-huber-mechanism, Sec. V for flipped Huber).  Its exact profile is the
heterogeneous composition of the ``K`` one-dimensional pairs ``(Z_i, Z_i + lambda_i)``, and
for a scale family ``Z_i = s_i Z(b_i)`` (shape ``b_i``) each pair is, after scaling, the pair
of the unit noise ``Z(b_i)`` at the shift ``t_i = lambda_i / s_i``.

Composing ``K = 10^6`` PLDs one by one is out of reach; composing by **groups** is not:

* coordinates are grouped by shape (exactly: equal ``b_i``) and by ratio ``t_i`` (exactly
  when there are at most ``num_groups`` distinct values; otherwise into ``num_groups``
  equal-count bins of ``log t``, each represented by its **largest** ratio);
* group ``g`` (``n_g`` coordinates, representative ``t_g``) contributes the ``n_g``-fold
  self-composition of one pair by FFT (``n_g`` a traced power:
  :func:`dpjax.accounting.pld.self_compose`), and the groups are composed with each other
  (:func:`dpjax.accounting.pld.compose`).

Rounding ``t_i`` up to ``t_g`` is pessimistic: for a symmetric log-concave noise (Laplace,
flipped Huber) the pair at a larger shift dominates the pair at a smaller one, so the
grouped profile is an upper bound on the exact one, and it is exact when the groups are.
The cost depends on the number of groups and the composed loss's spread, not on ``K``.
Host functions (the grids depend on the concrete ratios).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting import pld
from dpjax.certificate import MARGIN, certify_epsilon
from dpjax.inid.profiles import validate_profile
from dpjax.noise import make
from dpjax.numerics import bisect_host

FAMILIES = ("laplace", "flipped-huber")


class CoordinateGroups(NamedTuple):
    """Coordinates grouped for the PLD (module docstring).

    Attributes:
      ratio: ``(G,)`` representative shift ``t_g = max lambda_i / s_i`` of each group.
      shape: ``(G,)`` the group's noise shape ``b`` (``0`` for Laplace).
      count: ``(G,)`` number of coordinates ``n_g``.
      exact: whether every coordinate's ratio equals its group's (no rounding).
    """

    ratio: np.ndarray
    shape: np.ndarray
    count: np.ndarray
    exact: bool


def group_coordinates(profile, scales, shapes=None, num_groups: int = 16) -> CoordinateGroups:
    r"""Group the pairs ``(Z(b_i), Z(b_i) + t_i)``, ``t_i = lambda_i / s_i`` (module docstring).

    Args:
      profile: the sensitivity profile ``lambda`` (``K`` values ``>= 0``).
      scales: the noise scales ``s_i > 0`` (Laplace ``b``; flipped Huber ``gamma``), one per
        coordinate or one for all.
      shapes: flipped Huber shapes ``alpha_i / gamma_i`` (one per coordinate or one for all),
        or ``None`` for Laplace.
      num_groups: the most ratio groups per shape.

    Returns:
      The :class:`CoordinateGroups` (coordinates with ``lambda_i = 0`` leave no trace).

    Raises:
      ValueError: bad profile, scales or shapes, or more than ``num_groups`` distinct shapes.

    Example:
      >>> g = group_coordinates([1.0, 1.0, 2.0], [1.0, 1.0, 1.0])
      >>> g.ratio.tolist(), g.count.tolist(), g.exact
      ([1.0, 2.0], [2, 1], True)
    """
    lam = validate_profile(profile)
    s = np.broadcast_to(np.asarray(scales, np.float64), lam.shape)
    if not np.all(np.isfinite(s) & (s > 0)):
        raise ValueError("scales must be finite and > 0")
    b = np.zeros(lam.shape) if shapes is None else np.broadcast_to(
        np.asarray(shapes, np.float64), lam.shape)
    if not np.all(np.isfinite(b) & (b >= 0)):
        raise ValueError("shapes must be finite and >= 0")
    if num_groups < 1:
        raise ValueError(f"num_groups must be >= 1, got {num_groups}")
    pos = lam > 0
    t, b = lam[pos] / s[pos], b[pos]
    unique_shapes = np.unique(b)
    if unique_shapes.size > num_groups:
        raise ValueError(f"{unique_shapes.size} distinct shapes; at most num_groups = "
                         f"{num_groups} are grouped (give the allocation a few shapes)")
    ratio, shape, count, exact = [], [], [], True
    for shp in unique_shapes:
        ts = np.sort(t[b == shp])
        values, counts = np.unique(ts, return_counts=True)
        if values.size > num_groups:
            exact = False
            edges = np.linspace(0, ts.size, num_groups + 1).round().astype(np.int64)
            values = ts[edges[1:] - 1]  # the largest ratio of each equal-count bin
            counts = np.diff(edges)
        ratio.append(values)
        count.append(counts)
        shape.append(np.full(values.size, shp))
    return CoordinateGroups(np.concatenate(ratio), np.concatenate(shape),
                  np.concatenate(count).astype(np.int64), exact)


def default_bin_width(groups: CoordinateGroups) -> float:
    r"""``h = min(1e-3, sqrt(sum_g n_g t_g^2) / 400)``: 1/400 of the composed loss's spread scale.

    Args:
      groups: the :class:`CoordinateGroups`.
    """
    spread = math.sqrt(float(np.sum(groups.count * groups.ratio ** 2)))
    return min(1e-3, spread / 400.0)


def _unit_noise(shape: float):
    if shape == 0.0:
        return make("laplace", scale=1.0)
    return make("flipped-huber", alpha=float(shape), gamma=1.0)


def grouped_pld(groups: CoordinateGroups, bin_width: float | None = None):
    r"""The composed pessimistic PLD ``*_g PLD(Z(b_g), t_g)^{*n_g}`` (module docstring).

    Args:
      groups: the :class:`CoordinateGroups`.
      bin_width: the grid's bin width (default :func:`default_bin_width`).

    Returns:
      A :class:`dpjax.accounting.pld.PLD` (pessimistic: an upper bound on the profile).
    """
    h = default_bin_width(groups) if bin_width is None else float(bin_width)
    with jax.enable_x64(True):
        parts = []
        for t, shp, n in zip(groups.ratio, groups.shape, groups.count, strict=True):
            base = pld.from_noise(_unit_noise(float(shp)), float(t), bin_width=h)
            k = int(n)
            parts.append(base if k == 1 else
                         pld.self_compose(base, jnp.asarray(k), pld.self_compose_size(base, k)))
        return parts[0] if len(parts) == 1 else pld.compose(parts)


def grouped_delta(groups: CoordinateGroups, epsilon: float,
                  bin_width: float | None = None) -> float:
    r"""Certified upper bound on ``delta(epsilon)`` of the grouped allocation.

    .. math:: \delta(\epsilon) = \mathbb{E}_P\big[(1 - e^{\epsilon - L})_+\big],\qquad
              L = \textstyle\sum_g \sum_{k \le n_g} L_{g,k}

    (heterogeneous composition; Theorem 5's setting of inid-noise-laplace-beats-gaussian with
    the exact profile instead of Corollary 6's bound).

    Args:
      groups: the :class:`CoordinateGroups`.
      epsilon: ``epsilon >= 0``.
      bin_width: the grid's bin width (default :func:`default_bin_width`).
    """
    with jax.enable_x64(True):
        return float(pld.delta_for_epsilon(grouped_pld(groups, bin_width), float(epsilon)))


def grouped_epsilon(groups: CoordinateGroups, delta: float,
                    bin_width: float | None = None) -> float:
    r"""Certified ``epsilon(delta)`` of the grouped allocation (re-checked at the boundary).

    The least ``epsilon`` with :func:`grouped_delta` at most ``delta``
    (:func:`dpjax.certificate.certify_epsilon` re-evaluates the composed profile there).

    Args:
      groups: the :class:`CoordinateGroups`.
      delta: target ``delta`` in ``(0, 1)``.
      bin_width: the grid's bin width (default :func:`default_bin_width`).
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    with jax.enable_x64(True):
        composed = grouped_pld(groups, bin_width)
        eps = float(pld.epsilon_for_delta(composed, float(delta)))
        return float(certify_epsilon("grouped inid", lambda e: float(
            pld.delta_for_epsilon(composed, float(e))), eps, delta))


def calibrate_grouped(profile, scales, epsilon: float, delta: float, shapes=None,
                      num_groups: int = 16, num_iterations: int = 10,
                      bin_width: float | None = None) -> tuple[float, float, CoordinateGroups]:
    r"""Least multiplier ``c`` with ``c * scales`` ``(epsilon, delta)``-private, by groups.

    .. math:: c^* = \min\{c > 0 : \delta_{c s}(\epsilon) \le \delta (1 - \mathrm{MARGIN})\},

    ``delta_{cs}`` the grouped composed PLD profile (:func:`grouped_delta`; the groups' ratios
    scale as ``t_g / c``), by doubling to a private end and bisection
    (:func:`dpjax.numerics.bisect_host`, one grouped composition per step) to relative
    width ``2^-num_iterations``.  The returned ``c`` is the private end of the bracket.

    Args:
      profile: the sensitivity profile ``lambda``.
      scales: the allocation's relative scales (Laplace ``b_i``; flipped Huber ``gamma_i``).
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      shapes: flipped Huber shapes ``alpha_i / gamma_i`` (``None``: Laplace).
      num_groups: the most ratio groups per shape (:func:`group_coordinates`).
      num_iterations: bisection halvings.
      bin_width: the grid's bin width (default :func:`default_bin_width` at each ``c``).

    Returns:
      ``(c, delta_at_c, groups)``: the multiplier, the certified profile there, the groups at
      ``c = 1``.

    Raises:
      ValueError: bad targets or inputs.
      RuntimeError: no private multiplier below ``2^60``.
    """
    if not (epsilon > 0 and math.isfinite(epsilon)) or not 0.0 < delta < 1.0:
        raise ValueError(f"need epsilon > 0 finite and 0 < delta < 1, got ({epsilon}, {delta})")
    groups = group_coordinates(profile, scales, shapes, num_groups)
    target = delta * (1.0 - MARGIN)

    def private(c):
        d = grouped_delta(groups._replace(ratio=groups.ratio / c), epsilon, bin_width)
        return d <= target, d

    # bracket in log c: start at the c that makes the worst-case loss sum_g n_g t_g / c = eps
    # (pure DP for Laplace: private) and halve/double from there
    c_hi = float(np.sum(groups.count * groups.ratio)) / epsilon
    holds, d_hi = private(c_hi)
    for _ in range(60):
        if holds:
            break
        c_hi *= 2.0
        holds, d_hi = private(c_hi)
    if not holds:
        raise RuntimeError("no private multiplier found below 2^60 times the pure-DP one")
    c_lo = c_hi / 2.0
    ok_lo, d_lo = private(c_lo)
    while ok_lo and c_lo > 1e-300:
        c_hi, d_hi, c_lo = c_lo, d_lo, c_lo / 2.0
        ok_lo, d_lo = private(c_lo)
    # bisect in log c
    found = bisect_host(lambda x: private(math.exp(x)), math.log(c_hi), math.log(c_lo),
                             num_iterations, good_aux=d_hi)
    lg = found.good
    aux = found.aux
    return math.exp(lg), float(aux), groups


__all__ = ["FAMILIES", "CoordinateGroups", "calibrate_grouped", "default_bin_width",
           "grouped_delta", "grouped_epsilon", "grouped_pld", "group_coordinates"]
