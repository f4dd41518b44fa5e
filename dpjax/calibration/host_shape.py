r"""Host-driven (shape, scale) searches of the closed-form 1-D families, certified exactly.

The 1-D calibrations of flipped Huber, OSGT and truncated Laplace minimise
``scale*(shape)^2 v(shape)`` over the shape, ``scale*`` the least private scale at that
shape (a monotone search: each family is a scale family).  Compiling that whole search
(a bisection inside a zooming grid, the profile inlined) cost seconds per family on a
first call.  Here it runs on the host in float64 NumPy, vectorised over every target
and every shape of a grid (:func:`dpjax.numerics.zoom_minimize_array`), with the profile written
through Lemma 11 of flipped-huber-mechanism (eq. (28)) for symmetric log-concave noise:

.. math:: \delta(\epsilon) = \overline G(x^* - \tfrac{D}{2})
          - e^{\epsilon}\,\overline G(x^* + \tfrac{D}{2}),

``G`` the noise in units of its scale, ``D`` the sensitivity in those units and ``x*``
the centred loss's inverse at ``epsilon`` (each family gives ``log G-bar`` on
``[0, inf)`` and ``x*`` in closed form).  That evaluation only *steers* the search; it
is independent of the certified kernels.  The result is then settled by the exact
profile (:func:`least_certified_scale`): at the chosen shape the scale is bisected
with the family's compiled exact kernel to the float resolution, and only a scale at
which that kernel was evaluated and met ``delta (1 - MARGIN)`` is returned
(:func:`dpjax.certificate.scale_is_certified`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpjax.numerics import bisect_host, float64_kernel, log1mexp_host, zoom_minimize_array
from dpjax.numerics.constants import LOG_2

#: Sensitivity (in noise units) below which :func:`log_delta_lemma11` takes the mass between
#: ``t_1`` and ``t_2`` by the midpoint rule (given the density).
MIDPOINT_BELOW = 1e-5


@float64_kernel
def log_delta_lemma11(
    epsilon, D, log_sf_upper: Callable, x_star, log_pdf_upper: Callable | None = None
) -> np.ndarray:
    r"""``log delta(epsilon)`` of symmetric log-concave noise by Lemma 11 (eq. (28)), in NumPy.

    .. math:: \log\delta = \log\overline G(t_1)
              + \log\big(1 - e^{\epsilon + \log\overline G(t_2) - \log\overline G(t_1)}\big),
              \qquad t_{1,2} = x^* \mp D/2,

    with ``G-bar(t) = 1 - G-bar(-t)`` for ``t < 0`` (symmetry).  Relative error about
    ``1e-16 (|log G-bar(t_1)| + epsilon) G-bar(t_1) / delta``: a steer for a search, not a
    certificate.  That error is the cancellation of ``G-bar(t_1) - G-bar(t_2)`` when ``D`` is
    small (``epsilon -> 0`` at tiny ``delta`` asks for ``D ~ delta``); given the density,
    ``D <=`` :data:`MIDPOINT_BELOW` uses the midpoint rule for that mass instead,

    .. math:: \log\delta = \log m + \log\big(1 - e^{\log\mathrm{expm1}(\epsilon)
              + \log\overline G(t_2) - \log m}\big),\qquad m = D\, g(x^*)

    (relative error ``O(D)`` at a kink of ``g``, ``O(D^2)`` elsewhere).

    Args:
      epsilon: ``epsilon >= 0`` (array).
      D: the sensitivity in units of the noise scale (broadcast).
      log_sf_upper: ``t >= 0 -> log P(G > t)`` (NumPy, elementwise).
      x_star: the centred loss's inverse at ``epsilon`` (broadcast).
      log_pdf_upper: ``t >= 0 -> log g(t)``, the density (optional: the small-``D`` branch).

    Returns:
      ``log delta`` (``0`` where the evaluation is NaN: fail closed).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from scipy.special import log_ndtr
      >>> eps, mu = 1.0, 1.0  # Gaussian: x* = eps / mu, delta = Q(eps/mu - mu/2) - e^eps Q(...)
      >>> round(float(np.exp(log_delta_lemma11(eps, mu, lambda t: log_ndtr(-t), eps / mu))), 6)
      0.126937
    """
    eps, D, x = (np.asarray(v, dtype=np.float64) for v in (epsilon, D, x_star))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t1, t2 = x - 0.5 * D, x + 0.5 * D
        up1 = log_sf_upper(np.abs(t1))
        l1 = np.where(t1 >= 0, up1, log1mexp_host(np.minimum(up1, -LOG_2)))
        l2 = log_sf_upper(t2)
        out = l1 + log1mexp_host(np.where(l2 == -np.inf, -np.inf, eps + l2 - l1))
        if log_pdf_upper is not None:
            log_m = np.log(D) + log_pdf_upper(np.abs(x))
            log_e = np.log(np.expm1(eps))  # -inf at epsilon = 0
            mid = log_m + log1mexp_host(np.where(l2 == -np.inf, -np.inf, log_e + l2 - log_m))
            out = np.where(D <= MIDPOINT_BELOW, mid, out)
    return np.where(np.isnan(out), 0.0, np.minimum(out, 0.0))


@float64_kernel
def search_shape(
    log_delta: Callable,
    log_variance: Callable,
    grid: np.ndarray,
    epsilon: np.ndarray,
    level: np.ndarray,
    log_m_range: tuple,
    num_rounds: int,
    num_iterations: int,
    value: Callable | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per target, the shape ``x`` of least variance at its largest private ``m = Delta / s``.

    .. math:: \min_x\ -2\log m^*(x) + \log v(x),\qquad
              m^*(x) = \max\{m : \log\delta(\epsilon; x, m) \le \text{level}\}

    (the variance ``s^2 v(x) = Delta^2 v(x) / m^2`` of a scale family; Sec. V of
    flipped-huber-mechanism): ``m*`` by bisection on ``log m``
    (:func:`dpjax.numerics.bisect_host`, increasing delta in ``m`` at fixed
    shape), the shape by a zooming grid (:func:`dpjax.numerics.zoom_minimize_array`),
    both over every target and grid point at once.

    Args:
      log_delta: ``(epsilon, x, log m) -> log delta`` (NumPy, broadcasting ``(n, 1)``
        targets against ``(n, m)`` shapes).
      log_variance: ``x -> log v(x)``.
      grid: ``(n, m)`` first-round shapes, increasing along each row.
      epsilon: ``(n,)`` targets.
      level: ``(n,)`` :func:`dpjax.certificate.log_target` of the targets.
      log_m_range: ``x -> (lo, hi)``: private ``log m`` (never evaluated) and a non-private
        one, shaped like ``x``.
      num_rounds: rounds of the zooming grid.
      num_iterations: halvings of ``log m`` per shape.
      value: optional ``(x, log m*) -> objective`` replacing the one above (e.g. with box
        constraints); ``inf`` marks an infeasible shape.

    Returns:
      ``(x, log m*, found)`` per target; ``found`` is false where no shape had a private
      ``m`` above ``lo``.
    """
    e, lv = epsilon[:, None], level[:, None]

    def objective(x):
        lo, hi = log_m_range(x)
        lm = bisect_host(lambda lm: (log_delta(e, x, lm) <= lv, None), lo, hi,
                               num_iterations).good
        out = -2.0 * lm + log_variance(x) if value is None else value(x, lm)
        return np.where(lm > lo, out, np.inf), lm

    with np.errstate(all="ignore"):
        x, best, lm = zoom_minimize_array(objective, grid, num_rounds)
    return x, lm, np.isfinite(best)


@float64_kernel
def least_certified_scale(
    log_delta_at: Callable[[np.ndarray], np.ndarray],
    scale,
    level,
    rel: float = 1e-9,
    widen: int = 8,
    max_iterations: int = 64,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The least scale near ``scale`` meeting ``level`` by the *exact* profile (bisection).

    Privacy is monotone in the scale.  Bracket ``[s (1 - r), s (1 + r)]``, each end
    widened by a factor 32 in ``r`` (at most ``widen`` times) until the exact profile
    fails at the lower and meets ``level`` at the upper end; then bisect until the ends
    are adjacent floats or ``max_iterations``:

    .. math:: s_{\mathrm{mid}} = (s_{\mathrm{lo}} + s_{\mathrm{hi}}) / 2,\qquad
              \log\delta(s_{\mathrm{hi}}) \le \text{level} < \log\delta(s_{\mathrm{lo}}).

    The returned scale is the upper end, where ``log_delta_at`` was evaluated and held:
    certified by construction (the caller applies
    :func:`dpjax.certificate.scale_is_certified` to the returned pair).

    Args:
      log_delta_at: ``scale (array) -> log delta`` by the certified exact kernel (one
        compiled program; called about 40 times).
      scale: the search's scale (array, ``> 0``).
      level: :func:`dpjax.certificate.log_target` of the targets (broadcast).
      rel: initial relative half-width of the bracket.
      widen: most widenings of each end.
      max_iterations: most bisection steps.

    Returns:
      ``(scale, log_delta_at_scale, bracketed)``: ``bracketed`` is false where no feasible
      upper end was found (the caller does not certify those).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> s, ld, ok = least_certified_scale(lambda s: -np.log(s), np.array([2.0]), np.log(0.25))
      >>> round(float(s[0]), 12), bool(ok[0])
      (4.0, True)
    """
    s = np.asarray(scale, dtype=np.float64)
    level = np.broadcast_to(np.asarray(level, dtype=np.float64), s.shape)
    hi, lo = s * (1.0 + rel), s * (1.0 - rel)
    ld_hi = np.asarray(log_delta_at(hi), dtype=np.float64)
    ok_hi = ld_hi <= level
    ok_lo = np.asarray(log_delta_at(lo), dtype=np.float64) > level
    r = rel
    for _ in range(widen):
        if np.all(ok_hi) and np.all(ok_lo):
            break
        r *= 32.0
        hi = np.where(ok_hi, hi, s * (1.0 + r))
        lo = np.where(ok_lo, lo, s / (1.0 + r))
        ld_new = np.asarray(log_delta_at(hi), dtype=np.float64)
        ld_hi = np.where(ok_hi, ld_hi, ld_new)
        ok_hi = ld_hi <= level
        ok_lo = ok_lo | (np.asarray(log_delta_at(lo), dtype=np.float64) > level)
    lo = np.where(ok_lo, lo, 0.0)  # never bracketed from below: bisect down from hi anyway
    for _ in range(max_iterations):
        mid = lo + 0.5 * (hi - lo)
        open_ = ok_hi & (mid > lo) & (mid < hi)
        if not np.any(open_):
            break
        ld_mid = np.asarray(log_delta_at(np.where(open_, mid, hi)), dtype=np.float64)
        fine = open_ & (ld_mid <= level)
        hi, ld_hi = np.where(fine, mid, hi), np.where(fine, ld_mid, ld_hi)
        lo = np.where(open_ & ~fine, mid, lo)
    return hi, ld_hi, ok_hi
