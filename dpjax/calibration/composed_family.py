r"""Least-variance member of a Gaussian-to-Laplace family after ``T`` uses, through the engine.

Flipped Huber ``FH(b gamma, gamma^2)`` (flipped-huber-mechanism, Def. 7) and OSGT
``O(k rho, rho^2)`` (Sadeghi & Korki 2022; App. F(c) of flipped-huber-mechanism) are scale
families whose shape runs from the Gaussian (shape 0: ``N(0, scale^2)``) to the Laplace
(shape ``b -> inf``: Laplace of scale ``scale / b``, up to a mass ``~e^{-b^2/2}``).  After
``T`` uses of the 1-D pair (a ``K``-dim query at the ``linf`` corner is ``K`` uses; each use
Poisson-subsampled at rate ``q`` if asked), the least variance member is

.. math:: \min_b\ \mathrm{Var}(s^*(b), b),\qquad
          s^*(b) = \min\{s : \delta_T(\epsilon; s, b) \le \delta\},

``delta_T`` the PLD engine's certified profile
(:func:`dpjax.calibration.shape_search.calibrate_shape_scale`: a survey of :data:`SHAPES`
from the Gaussian member ``b = 0`` to the Laplace member ``b = 1e4``, refined around the best,
finalists settled at the fine bin width).  Each shape's root is bracketed by
``[upper / BRACKET_RATIO, upper]``, ``upper`` from :func:`bracket_upper` (both ends' scales
grow like ``sqrt(T)``); a bracket that misses is widened by the search.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpjax._progress import progress
from dpjax.accounting.rdp.subsampled_gaussian import gaussian_rdp_sigma
from dpjax.calibration.gaussian import calibrate_sigma
from dpjax.calibration.scale_search import COARSEN
from dpjax.calibration.shape_search import calibrate_shape_scale
from dpjax.numerics import float64_kernel

#: Loss-grid bin width of the engine for these calibrations.
BIN_WIDTH = 1e-4
#: Shape grid (refined around the best point): ``0`` is the Gaussian member, ``1e4`` the
#: Laplace member (always a finalist).
SHAPES = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 12.0, 20.0, 1e4)
#: Largest ``T`` whose shape search surveys on a :data:`COARSEN` times coarser grid first: the
#: coarse grid's pessimism grows with ``T`` (~``T h`` in the composed loss), and beyond ~100
#: it moves the finalists' roots out of their bracket (re-planned grids, new compiles).
SURVEY_MAX_DIM = 100
#: Each shape's survey bracket is ``[upper / BRACKET_RATIO, upper]`` (``upper`` from
#: :func:`bracket_upper`) without subsampling: the least scales sit at 0.59-1.2 of ``upper``
#: over the settings measured (flipped Huber and OSGT, ``T = 5 .. 10^6``, ``eps = 0.05 .. 10``,
#: ``delta = 1e-3 .. 1e-12``; above ``upper`` the fallback ``3 upper`` takes them;
#: ``bench/results/kdim_bracket_2026-12-01.txt``), and the grids are sized for the low end,
#: so a ratio of 4 sized them for scales half as large as any root.  Under Poisson subsampling
#: ``upper`` is a rougher guess (the Gaussian's shrink factor for every member):
#: :data:`SUBSAMPLED_BRACKET_RATIO`.
BRACKET_RATIO = 2.0
#: The survey bracket's ratio under Poisson subsampling (:data:`BRACKET_RATIO`).
SUBSAMPLED_BRACKET_RATIO = 4.0


def laplace_zcdp_scale(epsilon, delta, dim: int, linf: float) -> np.ndarray:
    r"""Laplace scale meeting ``(epsilon, delta)`` after ``K`` uses through zCDP (a bracket end).

    .. math:: s = \Delta\sqrt{\frac{K}{2\rho}},\qquad
              \rho = \big(\sqrt{\log(1/\delta) + \epsilon} - \sqrt{\log(1/\delta)}\big)^2

    ``Delta / s``-DP Laplace is ``(Delta / s)^2 / 2``-zCDP, ``K`` uses add, and ``rho``-zCDP
    is ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP (Bun & Steinke 2016, "Concentrated
    Differential Privacy: Simplifications, Extensions, and Lower Bounds", arXiv:1605.02065,
    Prop. 1.4, Lemma 2.3, Prop. 1.3), solved for ``rho``.  It grows like ``sqrt(K)``, where
    the pure-DP scale ``K Delta / epsilon`` grows like ``K``: a member of large shape ``b`` is
    Laplace of scale ``scale / b`` up to a mass ``~e^{-b^2/2}``, so ``scale = b s`` brackets
    its least scale from above (checked by the engine like any bracket).

    Args:
      epsilon: target ``epsilon > 0`` (array).
      delta: target ``delta`` in ``(0, 1)`` (array).
      dim: number of coordinates (uses) ``K``.
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


def bracket_upper(epsilon, delta, uses: int, linf: float,
                  sampling_rate: float | None = None) -> Callable[[np.ndarray], np.ndarray]:
    r"""``upper(b)``: a scale expected to be feasible for each shape ``b`` (targets x shapes).

    Without subsampling ``max(1.05 sigma_G, min(1.3 b T Delta / eps, 1.1 b s_Z))``
    (``sigma_G`` the Gaussian calibration with ``Delta_2 = sqrt(T) Delta``, ``s_Z``
    :func:`laplace_zcdp_scale`).  With Poisson rate ``q``: that times
    ``sigma_RDP / sigma_G`` (subsampling shrinks every member's scale by about the Gaussian's
    factor) and at least ``1.05 sigma_RDP`` (the subsampled Gaussian's RDP sigma,
    :func:`dpjax.accounting.rdp.subsampled_gaussian.gaussian_rdp_sigma`).

    Args:
      epsilon, delta: the targets (arrays).
      uses: number of uses ``T``.
      linf: the sensitivity ``Delta``.
      sampling_rate: ``q`` in ``(0, 1)`` or ``None``.

    Returns:
      The function ``upper(b)``, ``b`` of shape ``(targets, shapes)``.
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    full = np.asarray(calibrate_sigma(epsilon, delta, np.sqrt(uses) * linf)[0],
                      float).reshape(-1, 1)
    up_laplace = laplace_zcdp_scale(epsilon, delta, uses, linf).reshape(-1, 1)
    eps = epsilon.reshape(-1, 1)
    floor, shrink = full, np.ones_like(full)
    if sampling_rate is not None:
        floor = np.asarray([gaussian_rdp_sigma(e, d, sampling_rate, uses, linf)
                            for e, d in zip(epsilon.ravel(), delta.ravel(), strict=True)],
                           float).reshape(-1, 1)
        shrink = np.clip(floor / full, 1e-12, 1.0)

    def upper(b):
        plain = np.maximum(1.05 * full, np.minimum(1.3 * b * uses * linf / eps,
                                                   1.1 * b * up_laplace))
        return np.maximum(1.05 * floor, shrink * plain)

    return upper


@float64_kernel
def gaussian_end(epsilon, delta, uses: int, linf: float):
    r"""The family's shape-0 member in closed form: ``T`` uses of ``N(0, s^2)`` at shift ``Delta``.

    Both families' shape 0 is exactly the Gaussian (``FH(0, s^2) = O(0, s^2) = N(0, s^2)``),
    and ``T`` i.i.d. uses at shift ``Delta`` are the Gaussian mechanism with
    ``Delta_2 = sqrt(T) Delta``, whose exact profile (Balle & Wang 2018, "Improving the
    Gaussian Mechanism for Differential Privacy: Analytical Calibration and Optimal
    Denoising", arXiv:1805.06530, Thm. 8) certifies ``sigma_G``
    (:func:`dpjax.calibration.gaussian.calibrate_sigma`) without the engine's grid (whose
    pessimism costs ~4% in variance at ``T = 10^6``).  Not for subsampled uses.

    Args:
      epsilon, delta: the targets (arrays, broadcast).
      uses: number of uses ``T``.
      linf: the sensitivity ``Delta``.

    Returns:
      NumPy arrays ``(sigma, delta_at, certified, beat)`` over the broadcast targets, ``beat``
      the variance ``sigma^2`` where certified (``inf`` elsewhere): pass it to
      :func:`calibrate_composed` so that no engine row at or above it is re-checked.
    """
    sigma, delta_at, ok = (np.asarray(x) for x in calibrate_sigma(
        epsilon, delta, np.sqrt(uses) * linf))
    ok = ok.astype(bool)
    return sigma.astype(float), delta_at.astype(float), ok, np.where(ok, sigma**2.0, np.inf)


def with_gaussian_end(found, gauss):
    """``found = (shape, scale, variance, delta_at, certified)`` of :func:`calibrate_composed`
    with the closed-form Gaussian member (:func:`gaussian_end`) where it is certified and has
    the smaller variance (or the search certified nothing); also that mask.

    Args:
      found: the search's five arrays (the targets' shape).
      gauss: :func:`gaussian_end` at the same targets.

    Returns:
      ``((shape, scale, variance, delta_at, certified), closed)``.
    """
    sigma, delta_at, ok, beat = gauss
    closed = ok & (beat < np.where(found[4], found[2], np.inf))
    member = (np.zeros_like(sigma), sigma, beat, delta_at, ok)
    out = tuple(np.where(closed, m, np.asarray(f, float)) for m, f in zip(member, found,
                                                                         strict=True))
    return (*out[:4], out[4].astype(bool)), closed


@float64_kernel
def calibrate_composed(noise_fn: Callable, variance_fn: Callable, epsilon, delta, uses: int,
                       linf: float, sampling_rate: float | None = None, label: str = "",
                       shapes=SHAPES, beat=None):
    r"""Least-variance ``(shape, scale)`` after ``T`` uses of the 1-D pair (module docstring).

    One shape search per target (a progress bar on a terminal), each with grids sized for
    its own scale.

    Args:
      noise_fn: ``noise_fn(scale, shape)`` -> the noise (a ``ScaleFamily.from_scale``).
      variance_fn: ``variance_fn(scale, shape)`` -> the variance (host arrays).
      epsilon: target ``epsilon > 0`` (array).
      delta: target ``delta`` in ``(0, 1)`` (array, broadcast with ``epsilon``).
      uses: number of uses ``T`` (``K T`` for ``T`` uses of a ``K``-dim query).
      linf: the sensitivity ``Delta``.
      sampling_rate: Poisson rate ``q`` in ``(0, 1)`` of every use, or ``None``.
      label: what the progress bar says.
      shapes: the shape grid.
      beat: per target, the variance of a member the caller certifies otherwise, or ``None``
        (:func:`~dpjax.calibration.shape_search.calibrate_shape_scale`: no row at or above
        it is re-checked or returned).

    Returns:
      NumPy arrays ``(shape, scale, variance, delta_at, certified)`` over the targets.
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    if beat is not None:
        beat = np.broadcast_to(np.asarray(beat, float), epsilon.shape)
    upper = bracket_upper(epsilon, delta, uses, linf, sampling_rate)
    out = np.empty((5, epsilon.size))
    with progress(epsilon.size, label or f"{uses} uses") as step:
        for k, (e, d) in enumerate(zip(epsilon.ravel(), delta.ravel(), strict=True)):
            res = calibrate_shape_scale(
                noise_fn, variance_fn, np.asarray(shapes), linf, e, d, uses,
                lambda b, k=k: upper(b)[k], BIN_WIDTH,
                coarsen=COARSEN if uses <= SURVEY_MAX_DIM else 1, sampling_rate=sampling_rate,
                lower_ratio=BRACKET_RATIO if sampling_rate is None else SUBSAMPLED_BRACKET_RATIO,
                beat=None if beat is None else beat.ravel()[k],
            )
            out[:, k] = res.shape, res.scale, res.variance, res.delta_at, res.certified
            step()
    shape, scale, variance, delta_at, ok = (x.reshape(epsilon.shape) for x in out)
    return shape, scale, variance, delta_at, ok.astype(bool)


__all__ = ["BIN_WIDTH", "BRACKET_RATIO", "SHAPES", "SUBSAMPLED_BRACKET_RATIO", "SURVEY_MAX_DIM",
           "bracket_upper", "calibrate_composed", "gaussian_end", "laplace_zcdp_scale",
           "with_gaussian_end"]
