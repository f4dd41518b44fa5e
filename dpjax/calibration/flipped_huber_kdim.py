r"""Flipped Huber in ``K`` dimensions, necessary and sufficient: calibration through the engine.

Sec. V-B / Algorithm 2 of flipped-huber-mechanism: ``K`` i.i.d. ``FH(alpha,
gamma^2)`` coordinates, per-coordinate sensitivity ``Delta`` (the corner
``d = Delta (1, ..., 1)`` of the l-infinity box is the worst shift, the 1-D
profile being increasing in ``|d_k|``), so the exact profile is the ``K``-fold
composition of the exact 1-D pair.  For each shape ``b = alpha / gamma`` of a
grid the least ``gamma`` is found by the engine's certified root finder (one
vectorised kernel over the shapes), the variance ``gamma^2 v(b)`` (eq. (11))
is minimised, and the grid is refined around the kink where the optimum sits
(:func:`dpjax.calibration.shape_search.calibrate_shape_scale`).  Every returned
``(alpha, gamma)`` is certified by the pessimistic engine.

Sec. V-B's number: for ``K = 5``, ``eps = 0.3``, ``delta = 1e-8`` the
certified least variance is ~555.5 (shape ``b ~ 3.4``), barely below Laplace's
pure-DP 2 (K/eps)^2 = 555.6; the paper's 502 is not private (see
``bench/bench_pld.py --fh``: at variance 502 the optimistic lower bound of
``delta(0.3)`` exceeds 4e-5 for every shape scanned).
"""

from __future__ import annotations

import numpy as np

from dpjax.calibration.composed_family import (  # noqa: F401 (this module's names too)
    BIN_WIDTH,
    SHAPES,
    SURVEY_MAX_DIM,
    bracket_upper,
    calibrate_composed,
    gaussian_end,
    laplace_zcdp_scale,
    with_gaussian_end,
)
from dpjax.calibration.flipped_huber import calibrate_flipped_huber_sufficient
from dpjax.noise.flipped_huber import FlippedHuber
from dpjax.noise.flipped_huber.standard import standard_variance_host
from dpjax.numerics import float64_kernel


def variance_by_shape(gamma, b):
    """``gamma^2 v(b)``: the variance of ``FH(b gamma, gamma^2)`` (eq. (11) of
    flipped-huber-mechanism) on host arrays (NumPy: nothing to compile).

    Args:
      gamma: the scale ``gamma`` (array).
      b: the shape ``alpha / gamma`` (array, broadcast).
    """
    return np.asarray(gamma) ** 2 * standard_variance_host(b)


@float64_kernel
def calibrate_flipped_huber_exact(epsilon, delta, dim: int, linf: float):
    r"""Least per-coordinate variance ``(alpha, gamma)`` of ``K``-dim flipped Huber, exactly.

    The exact profile is the ``K``-fold composition of the 1-D pair at the corner shift
    (Sec. V-B / Algorithm 2 of flipped-huber-mechanism), certified by the pessimistic PLD
    engine; per shape ``b = alpha / gamma`` the least ``gamma`` meeting it, then

    .. math:: \min_b\ \gamma^*(b)^2\, v(b) \qquad \text{(eq. (11))},

    one shape search per target (a progress bar on a terminal), each shape's root on
    ``log gamma`` bracketed above by ``max(1.05 sigma_G, min(1.3 b K Delta / eps, 1.1 b s_Z))``
    (``sigma_G`` the Gaussian calibration with ``Delta_2 = sqrt(K) Delta``, ``s_Z`` the zCDP
    Laplace scale of :func:`laplace_zcdp_scale`: both grow like ``sqrt(K)``, so the bracket
    ``[upper / 2, upper]`` (:data:`~dpjax.calibration.composed_family.BRACKET_RATIO`) holds
    the root at any ``K`` and no widening re-plans the grids).
    Up to ``K =`` :data:`SURVEY_MAX_DIM` the shapes are surveyed on a coarser grid and the
    finalists settled at :data:`BIN_WIDTH`; beyond, one stage at :data:`BIN_WIDTH` (a coarse
    grid's pessimism, ~``K h`` in the composed loss, would move the roots out of the
    finalists' bracket), the shapes sharing one compiled kernel (vmapped) and one grid plan;
    below ``TILT_BELOW`` the tilted search then runs on the finalists only.

    The Gaussian member ``b = 0`` is also taken in closed form: ``K`` i.i.d. ``N(0, gamma^2)``
    coordinates at the corner shift are the Gaussian mechanism with ``Delta_2 = sqrt(K)
    Delta``, whose exact profile (Balle & Wang 2018, "Improving the Gaussian Mechanism for
    Differential Privacy: Analytical Calibration and Optimal Denoising", arXiv:1805.06530,
    Thm. 8) certifies ``sigma_G`` (:func:`dpjax.calibration.gaussian.calibrate_sigma`); where
    ``sigma_G^2`` is below the engine's least variance (large ``K``: the engine's
    pessimistic grid costs ~4e-4 in variance at ``K = 10^4``) it is returned, with its
    closed-form certificate as ``delta_at``.

    Never worse than Theorem 8's member: the sufficient condition at the ``linf`` box
    (``Delta_1 = K Delta``, ``Delta_2 = sqrt(K) Delta``,
    :func:`dpjax.calibration.flipped_huber.calibrate_flipped_huber_sufficient`) is also
    calibrated; where its certified variance is lower its parameters are returned (a
    sufficient condition: they meet the exact profile too), certified by its Theorem 8
    bound (an upper bound on the exact profile).

    Args:
      epsilon: target ``epsilon`` (array).
      delta: target ``delta`` (array, broadcast with ``epsilon``).
      dim: number of coordinates ``K``.
      linf: the per-coordinate sensitivity ``Delta``.

    Returns:
      NumPy arrays ``(alpha, gamma, variance, delta_at, certified)`` over the broadcast
      targets (:func:`calibrate_flipped_huber_exact_source` also says where each came from).
    """
    return calibrate_flipped_huber_exact_source(epsilon, delta, dim, linf)[:5]


#: Where a result of :func:`calibrate_flipped_huber_exact_source` came from.
FROM_ENGINE, FROM_GAUSSIAN, FROM_THEOREM8 = "engine", "gaussian closed form", "theorem 8"


@float64_kernel
def calibrate_flipped_huber_exact_source(epsilon, delta, dim: int, linf: float):
    r""":func:`calibrate_flipped_huber_exact` and where each answer came from.

    Args:
      epsilon, delta, dim, linf: as for :func:`calibrate_flipped_huber_exact`.

    Returns:
      ``(alpha, gamma, variance, delta_at, certified, source, theorem8_variance)``: the
      first five as :func:`calibrate_flipped_huber_exact`, ``source`` a NumPy string array of
      :data:`FROM_ENGINE` (the shape search), :data:`FROM_GAUSSIAN` (the ``b = 0`` member in
      closed form) or :data:`FROM_THEOREM8` (Theorem 8's member was better), and the
      certified variance of Theorem 8's member (``inf`` where it has none).
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    # one Gaussian calibration per target: the b = 0 member in closed form (certified), and
    # the shape search's feasible upper end
    gauss = gaussian_end(epsilon, delta, dim, linf)
    # one target at a time: each gets grids sized for its own scale (a batch would size
    # every row for the smallest scale); power-of-two sizes let targets share kernels; no
    # engine row at or above the closed form's variance is re-checked by a full profile
    found = calibrate_composed(
        FlippedHuber.from_scale, variance_by_shape, epsilon, delta, dim, linf,
        label=f"flipped Huber, exact in {dim} dims", beat=gauss[3])
    # the b = 0 member by its exact closed form where it beats the engine's grid (large K)
    (shape, gamma, variance, delta_at, ok), closed = with_gaussian_end(found, gauss)
    out = np.stack([x.ravel() for x in (shape * gamma, gamma, variance, delta_at, ok)]).astype(
        float)
    source = np.where(closed.ravel(), FROM_GAUSSIAN, FROM_ENGINE).astype(object)
    thm8 = _theorem8_member(epsilon.ravel(), delta.ravel(), dim, linf)
    wins = (thm8[4] > 0) & (thm8[2] < np.where(out[4] > 0, out[2], np.inf))
    if np.any(wins):
        out[:, wins] = thm8[:, wins]
        source[wins] = FROM_THEOREM8
    alpha, gamma, variance, delta_at, ok = (x.reshape(epsilon.shape) for x in out)
    source = source.astype(str).reshape(epsilon.shape)
    return alpha, gamma, variance, delta_at, ok.astype(bool), source, thm8[2].reshape(
        epsilon.shape
    )


def _theorem8_member(epsilon, delta, dim, linf):
    """Rows ``(alpha, gamma, variance, delta_at, certified)`` of Theorem 8's calibration at the
    ``linf`` box (``Delta_1 = K Delta``, ``Delta_2 = sqrt(K) Delta``), ``delta_at`` its
    certified Theorem 8 bound (``inf`` variance where not certified)."""
    alpha, gamma, variance, delta_at, ok = (
        np.array(x, float).ravel()
        for x in calibrate_flipped_huber_sufficient(
            epsilon, delta, dim, dim * linf, np.sqrt(dim) * linf, linf
        )
    )
    ok = ok.astype(bool) & np.isfinite(variance) & (delta_at <= delta)
    return np.stack([alpha, gamma, np.where(ok, variance, np.inf), delta_at, ok])


@float64_kernel
def calibrate_flipped_huber_subsampled(epsilon, delta, compositions: int, sampling_rate: float,
                                       linf: float):
    r"""Least variance ``(alpha, gamma)`` of 1-D flipped Huber after ``T`` Poisson-subsampled uses.

    Each use releases ``f(D_q) + FH(alpha, gamma^2)`` on a Poisson subsample of rate ``q``;
    its pair under adding or removing a record is the mixture ``(1 - q) P + q P_shifted``
    against ``P`` (and the reverse), composed ``T`` times by the PLD engine (pessimistic
    discretisation, the worse direction), as for the Gaussian and Laplace mechanisms.  Per
    shape ``b = alpha / gamma`` the least ``gamma`` (:func:`~dpjax.calibration.shape_search.
    calibrate_shape_scale`, the same grid :data:`SHAPES` from the Gaussian member ``b = 0`` to
    the Laplace member ``b = 1e4``), then ``min_b gamma^*(b)^2 v(b)`` (eq. (11) of
    flipped-huber-mechanism).  The bracket of each shape's root is the unsubsampled one
    scaled by the subsampled Gaussian's (:func:`~dpjax.calibration.composed_family.
    bracket_upper`); a bracket that misses is widened by the search.
    Theorem 8 and the closed-form Gaussian do not apply to the subsampled pair: every
    answer is the engine's.

    Args:
      epsilon: target ``epsilon > 0`` (array).
      delta: target ``delta`` in ``(0, 1)`` (array, broadcast with ``epsilon``).
      compositions: number of uses ``T``.
      sampling_rate: Poisson rate ``q`` in ``(0, 1)``.
      linf: the sensitivity ``Delta``.

    Returns:
      NumPy arrays ``(alpha, gamma, variance, delta_at, certified)`` over the targets.
    """
    b, gamma, variance, delta_at, ok = calibrate_composed(
        FlippedHuber.from_scale, variance_by_shape, epsilon, delta, int(compositions), linf,
        float(sampling_rate), f"flipped Huber, {compositions} uses subsampled at q = "
        f"{sampling_rate}")
    return b * gamma, gamma, variance, delta_at, ok
