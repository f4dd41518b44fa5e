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

import jax
import numpy as np

from dpjax._batching import call_padded
from dpjax._progress import progress
from dpjax.calibration.flipped_huber import calibrate_flipped_huber_sufficient
from dpjax.calibration.gaussian import sigma_gaussian
from dpjax.calibration.scale_search import COARSEN
from dpjax.calibration.shape_search import calibrate_shape_scale
from dpjax.noise.flipped_huber import FlippedHuber, standard_variance
from dpjax.numerics import float64_kernel

#: Loss-grid bin width of the engine for flipped Huber calibration.
BIN_WIDTH = 1e-4
#: Shape grid ``b = alpha / gamma`` (refined around the best point): ``b = 0`` is the
#: Gaussian member, ``b = 1e4`` the Laplace member (``FH(b, gamma^2)`` is Laplace of scale
#: ``gamma / b`` up to a mass ``~e^{-b^2/2}`` beyond ``alpha``; always a finalist).
SHAPES = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 12.0, 20.0, 1e4)


#: Largest ``K`` whose shape search surveys on a :data:`COARSEN` times coarser grid first: the
#: coarse grid's pessimism grows with ``K`` (~``K h`` in the composed loss), and beyond ~100
#: it moves the finalists' roots out of their bracket (re-planned grids, new compiles).
SURVEY_MAX_DIM = 100


#: The unit variance ``v(b)`` of eq. (11), compiled once.
_standard_variance = jax.jit(standard_variance)


def laplace_zcdp_scale(epsilon, delta, dim: int, linf: float) -> np.ndarray:
    r"""Laplace scale meeting ``(epsilon, delta)`` after ``K`` uses through zCDP (a bracket end).

    .. math:: s = \Delta\sqrt{\frac{K}{2\rho}},\qquad
              \rho = \big(\sqrt{\log(1/\delta) + \epsilon} - \sqrt{\log(1/\delta)}\big)^2

    ``Delta / s``-DP Laplace is ``(Delta / s)^2 / 2``-zCDP, ``K`` uses add, and ``rho``-zCDP
    is ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP (Bun & Steinke 2016, "Concentrated
    Differential Privacy: Simplifications, Extensions, and Lower Bounds", arXiv:1605.02065,
    Prop. 1.4, Lemma 2.3, Prop. 1.3), solved for ``rho``.  It grows like ``sqrt(K)``, where
    the pure-DP scale ``K Delta / epsilon`` grows like ``K``: ``FH(b, gamma^2)`` is Laplace of
    scale ``gamma / b`` up to a mass ``~e^{-b^2/2}``, so ``gamma = b s`` brackets the least
    ``gamma`` of a large shape ``b`` from above (checked by the engine like any bracket).

    Args:
      epsilon: target ``epsilon > 0`` (array).
      delta: target ``delta`` in ``(0, 1)`` (array).
      dim: number of coordinates ``K``.
      linf: per-coordinate sensitivity ``Delta``.

    Returns:
      The scale ``s`` (NumPy array of the broadcast targets' shape).

    Example:
      >>> s = laplace_zcdp_scale(1.0, 1e-6, 10_000, 1.0)
      >>> round(float(s), 1)  # ~1.3 sigma_Gaussian, not 1e4 = K / eps
      535.0
    """
    log_inv = -np.log(np.asarray(delta, float))
    rho = np.square(np.sqrt(log_inv + np.asarray(epsilon, float)) - np.sqrt(log_inv))
    return linf * np.sqrt(dim / (2.0 * rho))


def _variance(gamma, b):
    """``gamma^2 v(b)`` (eq. (11)) on host arrays."""
    return np.asarray(gamma) ** 2 * call_padded(_standard_variance, b)


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
    ``[upper / 4, upper]`` holds the root at any ``K`` and no widening re-plans the grids).
    Up to ``K =`` :data:`SURVEY_MAX_DIM` the shapes are surveyed on a coarser grid and the
    finalists settled at :data:`BIN_WIDTH`; beyond, one stage at :data:`BIN_WIDTH` (a coarse
    grid's pessimism, ~``K h`` in the composed loss, would move the roots out of the
    finalists' bracket), the shapes sharing one compiled kernel (vmapped) and one grid plan.

    The Gaussian member ``b = 0`` is also taken in closed form: ``K`` i.i.d. ``N(0, gamma^2)``
    coordinates at the corner shift are the Gaussian mechanism with ``Delta_2 = sqrt(K)
    Delta``, whose exact profile (Balle & Wang 2018, "Improving the Gaussian Mechanism for
    Differential Privacy: Analytical Calibration and Optimal Denoising", arXiv:1805.06530,
    Thm. 8) certifies ``sigma_G`` (:func:`dpjax.calibration.gaussian.sigma_gaussian`); where
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
    gauss = call_padded(sigma_gaussian, epsilon, delta, np.sqrt(dim) * linf)
    sg = gauss[0].reshape(-1, 1)

    up_laplace = laplace_zcdp_scale(epsilon, delta, dim, linf).reshape(-1, 1)

    def upper(b):  # b: (targets, shapes)
        pure = 1.3 * b * dim * linf / epsilon.reshape(-1, 1)
        return np.maximum(1.05 * sg, np.minimum(pure, 1.1 * b * up_laplace))

    # one target at a time: each gets grids sized for its own scale (a batch would size
    # every row for the smallest scale); power-of-two sizes let targets share kernels
    out = np.empty((5, epsilon.size))
    with progress(epsilon.size, f"flipped Huber, exact in {dim} dims") as step:
        for k, (e, d) in enumerate(zip(epsilon.ravel(), delta.ravel(), strict=True)):
            out[:, k] = _one_target(e, d, dim, linf, lambda b, k=k: upper(b)[k])
            step()
    # the b = 0 member by its exact closed form where it beats the engine's grid (large K)
    closed = np.asarray(gauss[2], bool).ravel() & (sg.ravel() ** 2 < out[2])
    out[:, closed] = np.stack([np.zeros_like(sg.ravel()), sg.ravel(), sg.ravel() ** 2,
                               np.asarray(gauss[1], float).ravel(),
                               np.ones_like(sg.ravel())])[:, closed]
    source = np.where(closed, FROM_GAUSSIAN, FROM_ENGINE).astype(object)
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


def _one_target(e, d, dim, linf, upper, sampling_rate=None):
    """``(alpha, gamma, variance, delta_at, certified)`` of one target (``dim`` uses of the
    1-D pair, each Poisson-subsampled at ``sampling_rate`` if given)."""
    res = calibrate_shape_scale(
        FlippedHuber.from_scale,
        _variance,
        np.asarray(SHAPES),
        linf,
        e,
        d,
        dim,
        upper,
        BIN_WIDTH,
        coarsen=COARSEN if dim <= SURVEY_MAX_DIM else 1,
        sampling_rate=sampling_rate,
    )
    return res.shape * res.scale, res.scale, res.variance, res.delta_at, res.certified


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
    (:func:`calibrate_flipped_huber_exact`, ``T`` uses) scaled by ``sigma_RDP / sigma_G``
    (the subsampled Gaussian's RDP sigma over the unsubsampled one: subsampling shrinks
    every member's scale by about the same factor) and at least ``1.05 sigma_RDP`` (the
    Gaussian member's certified RDP scale); a bracket that misses is widened by the search.
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
    from dpjax.accounting.rdp.subsampled_gaussian import gaussian_rdp_sigma

    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    uses, q = int(compositions), float(sampling_rate)
    full = np.asarray(call_padded(sigma_gaussian, epsilon, delta, np.sqrt(uses) * linf)[0],
                      float).reshape(-1, 1)
    rdp = np.asarray([gaussian_rdp_sigma(e, d, q, uses, linf)
                      for e, d in zip(epsilon.ravel(), delta.ravel(), strict=True)],
                     float).reshape(-1, 1)
    shrink = np.clip(rdp / full, 1e-12, 1.0)
    up_laplace = laplace_zcdp_scale(epsilon, delta, uses, linf).reshape(-1, 1)

    def upper(b):  # b: (targets, shapes)
        pure = 1.3 * b * uses * linf / epsilon.reshape(-1, 1)
        plain = np.maximum(1.05 * full, np.minimum(pure, 1.1 * b * up_laplace))
        return np.maximum(1.05 * rdp, shrink * plain)

    out = np.empty((5, epsilon.size))
    with progress(epsilon.size, f"flipped Huber, {uses} uses subsampled at q = {q}") as step:
        for k, (e, d) in enumerate(zip(epsilon.ravel(), delta.ravel(), strict=True)):
            out[:, k] = _one_target(e, d, uses, linf, lambda b, k=k: upper(b)[k], q)
            step()
    alpha, gamma, variance, delta_at, ok = (x.reshape(epsilon.shape) for x in out)
    return alpha, gamma, variance, delta_at, ok.astype(bool)
