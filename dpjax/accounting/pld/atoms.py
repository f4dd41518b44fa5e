r"""Constructor: the pessimistic PLD of a pair given as atoms of its privacy loss.

A discrete pair ``(P, Q)`` (e.g. the cells of the spherical mechanism, Lemma 1 of
spherical-kl-optimal-mechanisms, or randomized response) is its loss atoms
``(l_k, p_k)`` under ``P``; the ``Q``-masses are ``p_k e^{-l_k}``.  The PLD on the grid
``eps_i = (lower + i) h`` is the connect-the-dots discretisation of
:mod:`.discretise` (exact at the grid points, the chord of ``delta(e^eps)`` in between:
pessimistic), or rounding every loss down (``pessimistic=False``, a lower bound).
For one use the pair's profile needs no grid: :func:`delta_of_atoms` sums the hockey-stick
over the atoms themselves (exact, up to a certified rounding pad).
"""

from __future__ import annotations

import math

import numpy as np

from dpjax._batching import ladder
from dpjax.accounting.pld._pld import PLD, make
from dpjax.accounting.pld.discretise import connect_dots
from dpjax.numerics import float64_kernel

#: Least grid length of :func:`from_atoms` (zero mass on top of shorter grids): every pair
#: spanning fewer points shares one compiled composition and query program (at most 16 kB of
#: zeros; a search over scales, e.g. the truncated Laplace calibration, meets many lengths).
MIN_GRID = 2048


@float64_kernel
def from_atoms(losses, probabilities, bin_width: float = 1e-4, pessimistic: bool = True) -> PLD:
    r"""PLD of a pair given as atoms ``(l_k, p_k)`` of its loss under ``P`` (``l_k <= +inf``).

    The ``Q``-masses are ``p_k e^{-l_k}`` (carried scaled, ``p_k e^{eps_i - l_k}``, so that
    losses beyond ``709`` do not overflow); connect-the-dots on the grid
    spanning the finite atoms (exact at grid points, chord in between), or
    rounding down when ``pessimistic=False``.  Host function (concrete
    input).  Mass of ``+inf`` atoms goes to ``inf_mass``.

    Args:
      losses: the atoms' losses ``l_k`` (real or ``+inf``).
      probabilities: their ``P``-masses ``p_k >= 0``.
      bin_width: the loss-grid width ``h``.
      pessimistic: connect-the-dots upper bound (default) or rounding down.
    """
    losses = np.asarray(losses, np.float64).ravel()
    probs = np.asarray(probabilities, np.float64).ravel()
    if losses.shape != probs.shape:
        raise ValueError("losses and probabilities must have the same length")
    if np.any(probs < 0) or not np.all(np.isfinite(probs)):
        raise ValueError("probabilities must be finite and >= 0")
    if np.any(np.isnan(losses)) or np.any(losses == -np.inf):
        raise ValueError("losses must be real or +inf (an atom with L = -inf has P-mass 0)")
    fin = np.isfinite(losses)
    inf_mass = float(probs[~fin].sum())
    lf, pf = losses[fin], probs[fin]
    h = float(bin_width)
    if lf.size == 0:
        return make(h, 0, np.zeros(1), inf_mass, pessimistic=pessimistic)
    lower = math.floor(lf.min() / h)
    # grid sizes rounded up to few distinct values, at least MIN_GRID (zero mass on top):
    # few compiles downstream, and one for every small pair
    size = ladder(max(math.ceil(lf.max() / h) - lower + 1, MIN_GRID))
    grid = (lower + np.arange(size)) * h
    if not pessimistic:
        idx = np.clip(np.floor(lf / h).astype(np.int64) - lower, 0, size - 1)
        pmf = np.bincount(idx, weights=pf, minlength=size)
        return make(h, lower, pmf, inf_mass, pessimistic=False)
    # bins (eps_i, eps_{i+1}]: the bin of each atom; atoms at or below eps_0 -> "below"
    idx = np.ceil(lf / h - 1e-12).astype(np.int64) - lower - 1
    below = idx < 0
    idx = np.clip(idx, 0, size - 2) if size > 1 else np.zeros_like(idx)
    if size == 1:
        return make(h, lower, np.array([pf.sum()]), inf_mass, pessimistic=True)
    # scaled Q-mass of each atom in its bin: e^{eps_i} p_k e^{-l_k} = p_k e^{eps_i - l_k} <= p_k
    qsf = pf * np.exp(np.minimum(grid[idx] - lf, 0.0))
    p_bin = np.bincount(idx[~below], weights=pf[~below], minlength=size - 1).astype(np.float64)
    qs = np.bincount(idx[~below], weights=qsf[~below], minlength=size - 1).astype(np.float64)
    p_below = np.float64(pf[below].sum())
    zero = np.float64(0.0)
    pmf, _ = connect_dots(p_bin, qs, zero, zero, p_below, np.float64(h), xp=np)  # host: no compile
    return make(h, lower, pmf, inf_mass, pessimistic=True)


def delta_of_atoms(p_masses, q_masses, inf_mass, epsilon: float) -> float:
    r"""Certified ``delta(epsilon)`` of one use of a pair given as atoms: no grid, no compile.

    .. math:: \delta(\epsilon) = \sum_k \max(0,\ p_k - e^{\epsilon} q_k) + p_\infty

    the hockey-stick divergence ``E_{e^eps}(P || Q)`` of a discrete pair (``p_k``, ``q_k``
    the ``P``- and ``Q``-masses of atom ``k``, ``p_inf`` the ``P``-mass at loss
    ``+inf``), exact for the atoms as given.  Rounding is bounded and added, so the value
    is never below the exact sum: each ``e^eps q_k`` carries at most ``6u`` relative error
    (``u = 2^-53``; two exponentials, two products), added as ``8u e^eps q_k`` over the
    atoms whose term may be positive, and the sum of ``n`` terms gains at most
    ``(n + 4) u`` relative.  Host NumPy (concrete input); a NaN or a negative mass raises.

    Args:
      p_masses, q_masses: the atoms' masses under ``P`` and ``Q`` (same length, ``>= 0``).
      inf_mass: ``P``-mass outside the atoms (loss ``+inf``; counted whole).
      epsilon: the ``epsilon`` at which to evaluate (real).

    Returns:
      A float upper bound of ``delta(epsilon)``, within about ``n u`` of it relative.

    Example:
      >>> import math
      >>> rr = delta_of_atoms([0.75, 0.25], [0.25, 0.75], 0.0, 0.0)  # randomized response
      >>> round(rr, 12), delta_of_atoms([0.75, 0.25], [0.25, 0.75], 0.0, math.log(3.0)) < 1e-15
      (0.5, True)
    """
    p = np.asarray(p_masses, np.float64).ravel()
    q = np.asarray(q_masses, np.float64).ravel()
    rest = float(inf_mass)
    if p.shape != q.shape:
        raise ValueError("p_masses and q_masses must have the same length")
    if not (np.all(p >= 0) and np.all(q >= 0) and rest >= 0):
        raise ValueError("masses must be >= 0 (and not NaN)")
    if math.isnan(epsilon):
        raise ValueError("epsilon must be a number, got NaN")
    u = 2.0**-53
    eps = float(epsilon)
    with np.errstate(over="ignore", invalid="ignore"):
        # e^eps q_k in two factors, so that no factor overflows while the product is finite
        scaled = (q * math.exp(min(eps, 700.0))) * math.exp(max(eps - 700.0, 0.0))
    scaled = np.where(q > 0, scaled, 0.0)  # an atom with q_k = 0 counts whole, even at inf
    may_count = p >= scaled * (1.0 - 16.0 * u)
    total = float(np.sum(np.maximum(p - scaled, 0.0))) + 8.0 * u * float(np.sum(scaled[may_count]))
    if not math.isfinite(total):
        return 1.0
    return min(1.0, (total * (1.0 + (p.size + 4) * u) + rest) * (1.0 + 2.0 * u))


__all__ = ["delta_of_atoms", "from_atoms"]
