r"""Inverse-CDF sampling of the angle to a pole on ``S^{m-1}`` within a cap (PrivUnit2).

For ``W`` uniform on ``S^{m-1}`` and a unit vector ``u``, the angle ``beta = arccos <W, u>``
has the density and distribution function

.. math:: f_m(\beta) = \frac{\sin^{m-2}\beta}{B(\tfrac12, \tfrac{m-1}2)},\qquad
   F_m(\beta) = I_{\sin^2(\beta/2)}\big(\tfrac{m-1}2, \tfrac{m-1}2\big),
   \qquad \beta \in [0, \pi]

(``(1 + <W, u>)/2 ~ Beta((m-1)/2, (m-1)/2)``).  PrivUnit2 draws ``<W, u>`` from the
cap ``{beta <= b}`` or from its complement, which under ``beta -> pi - beta`` is the
cap ``{beta <= pi - b}`` around ``-u``.  So one primitive suffices: ``beta`` on
``[0, b]`` with density proportional to ``f_m``, by its inverse distribution function.

* Host, once per channel constants (:func:`cap_tables`): the knots
  ``beta_j = F_m^{-1}(y_j F_m(b))`` at a fixed grid :data:`GRID` of fractions ``y_j``
  of the region's mass (geometric towards both ends, from ``2^-60`` and to
  ``1 - 2^-53``, steps of ``1/64`` between), by SciPy's ``betaincinv`` in float64,
  and ``log f_m(beta_j)``.  Between neighbouring knots ``log f_m`` changes by at most
  :data:`MAX_LOG_STEP` (checked; a ``ValueError`` otherwise), except on the two end
  intervals, which no float64 ``U[0, 1)`` draw reaches (``y = 0`` returns the pole).
* Device, per report (:func:`sample_angle`): ``y ~ U[0, 1)``; the knot interval
  ``y_j <= y < y_{j+1}`` (one ``searchsorted`` on the grid shared by every row); then
  ``beta`` solves

  .. math:: \int_{\beta_j}^{\beta} f_m = (y - y_j)\, F_m(b)

  by :data:`NEWTON_STEPS` Newton steps from the log-linear interpolant of ``f_m``, the
  integral by an :data:`ORDER`-point Gauss-Legendre rule on ``[beta_j, beta]``.  With
  ``log f_m`` varying by at most 1 on an interval the rule is exact to rounding and
  the start is within ``1e-2`` of the interval width, so three quadratically
  convergent steps reach rounding.  A fixed amount of work, no rejection, no host call.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax.numerics import gauss_legendre
from dpjax.numerics.lazy_scipy import special as sps

#: fractions of a region's mass at which the knots sit (shared by every row)
GRID = np.unique(np.concatenate([
    [0.0], 2.0 ** -np.arange(60, 6, -1), np.arange(1, 64) / 64.0,
    1.0 - 2.0 ** -np.arange(7, 54), [1.0]]))
#: Gauss-Legendre nodes of the integral between a knot and the iterate
ORDER = 8
#: Newton steps from the log-linear start
NEWTON_STEPS = 3
#: the largest change of ``log f_m`` allowed between neighbouring knots
MAX_LOG_STEP = 1.0


def _angles(h: float, mass: np.ndarray) -> np.ndarray:
    """``F_m^{-1}(mass)`` for ``h = (m-1)/2``, from the nearer end of ``[0, pi]``."""
    low = mass <= 0.5
    x = sps.betaincinv(h, h, np.where(low, mass, 1.0 - mass))
    ang = 2.0 * np.arcsin(np.sqrt(np.clip(x, 0.0, 1.0)))
    return np.where(low, ang, np.pi - ang)


def _region(m: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Knot angles and log densities of ``f_m`` on ``[0, b]`` at :data:`GRID`."""
    h = (m - 1) / 2
    mass = sps.betainc(h, h, np.sin(b / 2) ** 2)
    rest = sps.betainc(h, h, np.cos(b / 2) ** 2)  # 1 - mass, without cancellation
    if not mass > 0:
        raise ValueError(f"the cap region of angle {b} on S^{m - 1:g} has no mass in float64")
    # the cumulative masses; above 1/2 through their complement (1 - y) mass + rest
    cum = GRID * mass
    upper = (1.0 - GRID) * mass + rest
    low = cum <= 0.5
    ang = np.where(low, _angles(h, np.where(low, cum, 0.5)),
                   np.pi - _angles(h, np.where(low, 0.5, upper)))
    ang[-1] = b
    ang = np.clip(np.maximum.accumulate(ang), 0.0, b)
    if m == 2:  # the angle is uniform on [0, pi]
        log_dens = np.full_like(ang, -np.log(np.pi))
    else:
        with np.errstate(divide="ignore"):
            log_dens = (m - 2) * np.log(np.sin(ang)) - sps.betaln(0.5, h)
    # the end intervals (mass 2^-60 and 2^-53 of the region) are never drawn: a U[0, 1)
    # draw in float64 is a multiple of 2^-52 below 1 - 2^-52
    step = np.abs(np.diff(log_dens[1:-1]))
    if not np.all(step <= MAX_LOG_STEP):
        raise ValueError(f"cap table for m = {m}, b = {b}: log-density step {step.max():.3g} "
                         f"above {MAX_LOG_STEP}")
    return ang, log_dens


def cap_tables(dim, gamma) -> np.ndarray:
    r"""Knot tables of the cap ``<W, u> >= gamma`` and of its complement (module docstring).

    Args:
      dim: dimensions ``m >= 1`` (array).
      gamma: cap thresholds in ``[0, 1)``, broadcastable with ``dim``.

    Returns:
      float64 array of shape ``broadcast + (2, 2, len(GRID))``: ``[..., region, field,
      knot]`` with region 0 the cap (angle from ``u``), 1 the complement (angle from
      ``-u``), field 0 the angle and 1 ``log f_m`` there.  Rows with ``m = 1`` are 0.

    Example:
      >>> t = cap_tables(3, 0.0)  # m = 3: <W, u> uniform on [-1, 1], so cos(beta_j) = 1 - y_j
      >>> bool(np.allclose(np.cos(t[0, 0]), 1.0 - GRID, atol=1e-14))
      True
    """
    m, g = np.broadcast_arrays(np.asarray(dim, dtype=np.float64),
                               np.asarray(gamma, dtype=np.float64))
    out = np.zeros(m.shape + (2, 2, GRID.size))
    for idx in np.ndindex(m.shape):
        if m[idx] < 2:
            continue
        b = float(np.arccos(g[idx]))
        out[idx + (0,)] = _region(float(m[idx]), b)
        out[idx + (1,)] = _region(float(m[idx]), np.pi - b)
    return out


def sample_angle(uniform: Array, dim: Array, mass: Array, tables: Array, row: Array,
                 region: Array) -> Array:
    r"""The angle ``beta`` on ``[0, b]`` with density ``f_m / F_m(b)``, by inverse CDF.

    Args:
      uniform: ``U[0, 1)`` draws, the batch shape.
      dim: ``m`` per element (the batch shape).
      mass: ``F_m(b)``, the region's mass, per element.
      tables: :func:`cap_tables` output reshaped to ``(rows, 2, 2, len(GRID))``.
      row: index into ``tables`` per element (int, the batch shape).
      region: 0 (the cap) or 1 (its complement) per element.

    Returns:
      ``beta``, the batch shape (the knot exactly when ``y`` is a grid point).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> t = jnp.asarray(cap_tables(3, 0.0)).reshape(1, 2, 2, -1)
      >>> u = jnp.array([0.1, 0.5, 0.9])
      >>> beta = sample_angle(u, jnp.full(3, 3.0), jnp.full(3, 0.5), t, jnp.zeros(3, int),
      ...                     jnp.zeros(3, int))
      >>> [round(float(v), 12) for v in jnp.cos(beta)]  # m = 3: <W, u> uniform on the cap [0, 1]
      [0.9, 0.5, 0.1]
    """
    dtype = uniform.dtype
    grid = jnp.asarray(GRID, dtype=dtype)
    k = GRID.size
    j = jnp.clip(jnp.searchsorted(grid, uniform, side="right") - 1, 0, k - 2)
    flat = jnp.asarray(tables, dtype=dtype).reshape(-1)
    base = (row * 2 + region) * 2 * k + j
    b_lo, b_hi = flat[base], flat[base + 1]
    l_lo, l_hi = flat[base + k], flat[base + k + 1]
    at_pole = ~jnp.isfinite(l_lo)  # the knot y = 0 (reached only by y = 0)
    l_lo = jnp.where(at_pole, l_hi, l_lo)
    ref = jnp.where(at_pole, b_hi, b_lo)  # where l_lo was taken
    width = b_hi - b_lo
    # the mass to add beyond b_lo, in units of f_m(ref): r = (y - y_j) F_m(b) / f_m(ref)
    dy = uniform - grid[j]
    r = jnp.exp(jnp.log(jnp.where(dy > 0, dy, 1.0)) + jnp.log(mass) - l_lo)
    r = jnp.where(dy > 0, r, 0.0)
    # start: the log-linear interpolant f = f(b_lo) exp(s (beta - b_lo)) inverted
    s = jnp.where(width > 0, (l_hi - l_lo) / jnp.where(width > 0, width, 1.0), 0.0)
    small = jnp.abs(s * r) < 1e-8
    safe_s = jnp.where(small, 1.0, s)
    start = jnp.where(small, r * (1 - s * r / 2),
                      jnp.log1p(jnp.maximum(safe_s * r, -1 + 1e-16)) / safe_s)
    beta = b_lo + jnp.clip(start, 0.0, width)
    m2 = (dim - 2).astype(dtype)
    log_sin_ref = jnp.log(jnp.sin(jnp.where(ref > 0, ref, 1.0)))
    nodes, weights = (jnp.asarray(a, dtype=dtype) for a in gauss_legendre(ORDER, 0.0, 1.0))

    def rel_density(psi, m2, ref):  # f_m(psi) / f_m(ref)
        return jnp.where(m2 == 0, 1.0, jnp.exp(m2 * (jnp.log(jnp.sin(psi)) - ref)))

    for _ in range(NEWTON_STEPS):
        span = beta - b_lo
        psi = b_lo[..., None] + span[..., None] * nodes
        integral = span * jnp.sum(weights * rel_density(psi, m2[..., None],
                                                        log_sin_ref[..., None]), axis=-1)
        dens = rel_density(beta, m2, log_sin_ref)
        step = (integral - r) / jnp.where(dens > 0, dens, 1.0)
        beta = jnp.clip(beta - step, b_lo, b_hi)
    return jnp.where(r > 0, beta, b_lo)
