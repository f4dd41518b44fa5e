r"""Shell integrals of the spherical KL programme in closed form: volumes and costs.

The shells of spherical-kl-optimal-mechanisms (Definition 2) are
``{x in R^m : |x| in J_i}``, ``J_i = [i/n, (i+1)/n)``.  Everything here is a
one-dimensional radial integral, kept in logs (``V_m`` underflows and
``(i+1)^m`` overflows for large ``m``):

* ``V_m`` (eq. 27) and the constant ``A_m = 2^(m-3) (m-1) V_{m-1}`` of Theorem 4;
* ``v_i`` (eq. 26): ``V_m ((i+1)^m - i^m) / n^m``;
* ``c_i`` (eq. 24): ``m V_m int_{J_i} c~(rho) rho^(m-1) d rho``, in closed form for
  ``c~ = rho^a`` and by Gauss-Legendre quadrature for any other radial cost.

Host functions (NumPy, float64).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpjax.numerics import logsumexp_host
from dpjax.numerics.constants import LOG_2


def log_unit_ball_volume(m: int) -> float:
    r"""``log V_m = (m/2) log pi - log Gamma(m/2 + 1)``, the unit ball's volume (eq. 27).

    Eq. (27) of spherical-kl-optimal-mechanisms.

    Args:
      m: dimension, ``>= 0``.
    """
    return 0.5 * m * math.log(math.pi) - math.lgamma(0.5 * m + 1.0)


def log_A(m: int) -> float:
    r"""``log A_m``, ``A_m = 2^(m-3) (m-1) V_{m-1}`` (Theorem 4 of spherical-kl-optimal-mechanisms).

    Args:
      m: dimension, ``>= 2`` (``m = 1`` has its own exact kernel).

    Raises:
      ValueError: ``m < 2``.
    """
    if m < 2:
        raise ValueError("A_m is defined for m >= 2 (m = 1 has its own exact kernel)")
    return (m - 3) * LOG_2 + math.log(m - 1) + log_unit_ball_volume(m - 1)


def log_diff_powers(i, p: float) -> np.ndarray:
    r"""``log((i+1)^p - i^p)`` for integers ``i >= 0`` and ``p > 0``, without cancellation.

    .. math:: \log((i+1)^p - i^p) = p \log(i+1) + \log(-\mathrm{expm1}(p (\log i - \log(i+1))))

    Args:
      i: integer array, ``>= 0``.
      p: the power.
    """
    i = np.asarray(i, np.float64)
    hi = p * np.log1p(i)
    with np.errstate(divide="ignore"):
        ratio = np.where(i > 0, p * (np.log(np.maximum(i, 1.0)) - np.log1p(i)), -np.inf)
    return hi + np.log(-np.expm1(ratio))


def log_shell_volumes(m: int, n: int, count: int) -> np.ndarray:
    r"""``log v_i`` for ``i = 0..count-1`` (eq. (26) of spherical-kl-optimal-mechanisms).

    .. math:: \log v_i = \log V_m - m \log n + \log((i+1)^m - i^m)

    Args:
      m: dimension.
      n: shells per unit radius.
      count: number of shells.
    """
    return log_shell_volume_at(m, n, np.arange(count))


def log_shell_volume_at(m: int, n: int, i) -> np.ndarray:
    r"""``log v_i`` at shell indices ``i`` (eq. (26) of spherical-kl-optimal-mechanisms).

    Args:
      m: dimension.
      n: shells per unit radius.
      i: integer array of shell indices, ``>= 0``.
    """
    return log_unit_ball_volume(m) - m * math.log(n) + log_diff_powers(i, m)


def log_power_cost_at(m: int, n: int, i, power: float) -> np.ndarray:
    r"""``log c_i`` for the cost ``|x|^a`` at shell indices ``i`` (eq. (24), closed form).

    .. math:: c_i = \frac{m V_m}{(m + a)\, n^{m+a}} \big((i+1)^{m+a} - i^{m+a}\big)

    Args:
      m: dimension.
      n: shells per unit radius.
      i: integer array of shell indices.
      power: ``a > -m``.
    """
    a = float(power)
    return (math.log(m) + log_unit_ball_volume(m) - math.log(m + a)
            - (m + a) * math.log(n) + log_diff_powers(np.asarray(i), m + a))


def log_radial_cost_at(m: int, n: int, i, radial_cost: Callable, order: int = 16) -> np.ndarray:
    r"""``log c_i`` for a radial cost ``c~(rho)`` at shell indices ``i`` (eq. (24), quadrature).

    .. math:: c_i = m V_m \int_{i/n}^{(i+1)/n} \tilde c(\rho) \rho^{m-1} d\rho

    by an ``order``-point Gauss-Legendre rule per shell.

    Args:
      m: dimension.
      n: shells per unit radius.
      i: 1-D integer array of shell indices.
      radial_cost: vectorised NumPy function ``c~(rho) >= 0`` (``log 0 = -inf`` allowed).
      order: Gauss-Legendre nodes per shell.
    """
    i = np.asarray(i)
    x, wq = np.polynomial.legendre.leggauss(order)
    rho = (i[:, None] + 0.5 * (x[None, :] + 1.0)) / n
    with np.errstate(divide="ignore"):
        lc = np.log(np.asarray(radial_cost(rho), np.float64))
    terms = lc + (m - 1) * np.log(rho) + np.log(0.5 * wq / n)[None, :]
    return math.log(m) + log_unit_ball_volume(m) + logsumexp_host(terms, axis=1)


def log_cost_coefficients(
    m: int, n: int, count: int, power: float | None = 2.0,
    radial_cost: Callable | None = None, order: int = 16,
) -> np.ndarray:
    r"""``log c_i``, ``i = 0..count-1`` (eq. (24) of spherical-kl-optimal-mechanisms).

    For the cost ``|x|^power`` in closed form (:func:`log_power_cost_at`),
    for a radial cost by quadrature (:func:`log_radial_cost_at`).

    Args:
      m: dimension.
      n: shells per unit radius.
      count: number of shells.
      power: the power ``a`` of ``|x|^a`` (used when ``radial_cost`` is ``None``).
      radial_cost: vectorised NumPy function ``c~(rho) >= 0``, or ``None``.
      order: Gauss-Legendre nodes per shell for ``radial_cost``.
    """
    i = np.arange(count)
    if radial_cost is None:
        return log_power_cost_at(m, n, i, power)
    return log_radial_cost_at(m, n, i, radial_cost, order)


__all__ = [
    "log_A",
    "log_cost_coefficients",
    "log_diff_powers",
    "log_power_cost_at",
    "log_radial_cost_at",
    "log_shell_volume_at",
    "log_shell_volumes",
    "log_unit_ball_volume",
]
