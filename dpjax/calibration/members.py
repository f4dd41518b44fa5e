r"""Which member of a two-parameter family a shape search returned.

A shape search minimises the variance over a shape ``s`` of a family whose ends are
themselves mechanisms (flipped Huber: ``b = alpha / gamma = 0`` is Gaussian, ``b -> inf``
Laplace; OSGT: ``k -> 0`` Gaussian, ``k -> inf`` Laplace; truncated Laplace:
``c -> 0`` uniform on ``[-A, A]``, ``c -> inf`` Laplace).  The limit members' least
variances are closed forms (:func:`gaussian_limit_variance`,
:func:`laplace_limit_variance`, :func:`uniform_limit_variance`);
:func:`name_by_variance` says which member won (:func:`name_member` names by the shape),
so a user reading the result knows whether the family's interior helped at all.
"""

from __future__ import annotations

import numpy as np

from dpjax.calibration.gaussian import calibrate_sigma
from dpjax.numerics import float64_kernel

#: Name of a shape strictly inside the searched range.
INTERIOR = "interior"


def name_member(
    shape, lower: float, upper: float, lower_name: str, upper_name: str, rtol: float = 0.35
) -> np.ndarray:
    r"""Name the family member of each returned shape (a NumPy array of strings).

    .. math:: \text{member}(s) = \begin{cases} \text{lower\_name} & s \le \ell (1 + r) \\
              \text{upper\_name} & s \ge u / (1 + r) \\ \text{interior} & \text{else}
              \end{cases}

    (``r = rtol``: a shape within one grid step of an end of the searched range is that
    end's member; the ends are chosen so that the variance there is within the search's
    resolution of the limit member's closed form.)

    Args:
      shape: returned shapes (array).
      lower: least shape searched (``0`` allowed: then only ``s == 0`` is the lower member).
      upper: largest shape searched.
      lower_name: name of the lower limit member (e.g. ``"gaussian"``).
      upper_name: name of the upper limit member (e.g. ``"laplace"``).
      rtol: relative width of the ends.

    Returns:
      Array of member names, shaped like ``shape``.

    Example:
      >>> name_member([0.0, 3.0, 1e9], 0.0, 1e9, "gaussian", "laplace").tolist()
      ['gaussian', 'interior', 'laplace']
    """
    s = np.asarray(shape, dtype=float)
    out = np.full(s.shape, INTERIOR, dtype=object)
    out[s <= lower * (1.0 + rtol)] = lower_name
    out[s >= upper / (1.0 + rtol)] = upper_name
    return out.astype(str)


@float64_kernel
def gaussian_limit_variance(epsilon, delta, l2) -> np.ndarray:
    r"""Variance ``sigma^2`` of the least Gaussian meeting ``(epsilon, delta)`` exactly.

    .. math:: \sigma = \min\{\sigma : Q(\tfrac{\epsilon\sigma}{\Delta_2}
              - \tfrac{\Delta_2}{2\sigma}) - e^{\epsilon} Q(\tfrac{\epsilon\sigma}{\Delta_2}
              + \tfrac{\Delta_2}{2\sigma}) \le \delta\}

    (:func:`dpjax.calibration.gaussian.calibrate_sigma`): the ``b = 0`` end of flipped
    Huber (and Theorem 8 at ``alpha = 0``) and the ``k = 0`` end of OSGT.

    Args:
      epsilon: ``epsilon >= 0`` (array).
      delta: ``delta`` in ``(0, 1)`` (broadcast).
      l2: ``Delta_2 > 0``.

    Returns:
      The variance.
    """
    sigma = calibrate_sigma(epsilon, delta, l2)[0]
    with np.errstate(over="ignore"):  # sigma past 1e154 (epsilon 0, delta 1e-300): +inf
        return np.square(sigma)


@float64_kernel
def laplace_limit_variance(epsilon, delta, sensitivity) -> np.ndarray:
    r"""Variance ``2 b^2`` of the least Laplace scale meeting ``(epsilon, delta)`` exactly.

    The exact Laplace profile at shift ``m = Delta / b`` is
    ``delta(eps) = 1 - e^{(eps - m)/2}`` for ``eps < m`` (0 beyond), so

    .. math:: b = \frac{\Delta}{\epsilon - 2\log(1 - \delta)},\qquad \mathrm{Var} = 2b^2,

    the Laplace end of flipped Huber (``b -> inf``, Def. 7 of flipped-huber-mechanism),
    OSGT (``k -> inf``, App. F(c)) and truncated Laplace (``c -> inf``).  ``delta = 0``
    gives pure ``epsilon``-DP, ``b = Delta / epsilon`` (also Theorem 8's Laplace end).

    Args:
      epsilon: ``epsilon >= 0`` (array).
      delta: ``delta`` in ``[0, 1)`` (broadcast).
      sensitivity: ``Delta > 0`` (``Delta_1`` for pure DP in ``K`` dimensions).

    Returns:
      The variance (``inf`` where ``epsilon = delta = 0``).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> float(laplace_limit_variance(1.0, 0.0, 1.0))
      2.0
    """
    m = np.asarray(epsilon, float) - 2.0 * np.log1p(-np.asarray(delta, float))
    with np.errstate(divide="ignore", over="ignore"):
        return 2.0 * np.square(np.asarray(sensitivity, float) / m)


@float64_kernel
def uniform_limit_variance(delta, sensitivity) -> np.ndarray:
    r"""Variance ``A^2 / 3`` of the least uniform noise on ``[-A, A]`` meeting ``delta``.

    Shifted by ``Delta <= 2A`` the loss is ``0`` on the overlap and ``+inf`` on the rest,
    so ``delta(eps) = Delta / (2A)`` at every ``epsilon``:

    .. math:: A = \frac{\Delta}{2\delta},\qquad \mathrm{Var} = \frac{A^2}{3},

    the ``c = A / lambda -> 0`` end of truncated Laplace (Geng, Ding, Guo & Kumar 2020).

    Args:
      delta: ``delta`` in ``(0, 1/2]`` (array).
      sensitivity: ``Delta > 0`` (broadcast).

    Returns:
      The variance.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> float(uniform_limit_variance(0.25, 1.0))  # A = 2
      1.3333333333333333
    """
    a = np.asarray(sensitivity, float) / (2.0 * np.asarray(delta, float))
    with np.errstate(over="ignore"):  # inf past float64 (delta ~ 1e-300)
        return np.square(a) / 3.0


def name_by_variance(
    variance, limits: dict, rtol: float = 1e-5, below: float = 1e-9
) -> np.ndarray:
    r"""Name the member that won: a limit member whose closed-form variance the result meets.

    .. math:: \text{member} = \arg\min_{n:\ -b \le V / V_n - 1 \le r} |V / V_n - 1|
              \quad(\text{else } \texttt{"interior"})

    A family's shape search returns the limit member ``n`` when the least variance it
    found is that member's own (``V_n``, in closed form: :func:`gaussian_limit_variance`,
    :func:`laplace_limit_variance`, :func:`uniform_limit_variance`), within ``r = rtol``
    above (the search's resolution near an end) and ``b = below`` under it (rounding); an
    interior shape that beats every end by more than ``b`` is ``"interior"``.

    Args:
      variance: the calibrated variances (array).
      limits: member name -> its variance at the same targets (broadcast).
      rtol: relative tolerance ``r`` above a limit's variance.
      below: relative tolerance ``b`` below it.

    Returns:
      Array of member names shaped like ``variance``.

    Example:
      >>> name_by_variance([1.0, 2.0, 3.0], {"gaussian": 2.0, "laplace": 3.0}).tolist()
      ['interior', 'gaussian', 'laplace']
    """
    v = np.asarray(variance, float)
    out = np.full(v.shape, INTERIOR, dtype=object)
    best = np.full(v.shape, np.inf)
    for name, lim in limits.items():
        with np.errstate(all="ignore"):
            rel = v / np.broadcast_to(np.asarray(lim, float), v.shape) - 1.0
        gap = np.abs(rel)
        win = (rel <= rtol) & (rel >= -below) & (gap < best)
        out[win], best = name, np.where(win, gap, best)
    return out.astype(str)
