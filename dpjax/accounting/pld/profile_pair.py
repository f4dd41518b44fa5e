r"""A PLD dominating every mechanism whose privacy profile is below given values.

If a mechanism satisfies ``delta(eps) <= d(eps)`` for all ``eps >= 0`` *in both orders of
the neighbours*, then the pair built here dominates it for every ``alpha = e^eps >= 0``, so
it composes with any other PLD (Zhu, Dong & Wang 2022, Sec. 3: dominating pairs compose;
their Prop. on the pair of a privacy profile).  Construction, in ``x = e^eps``:

1. the lower convex envelope ``D(x)`` of the points ``(0, 1)`` and ``(e^{eps_k},
   min_{j <= k} d_j)``: convex, non-increasing, and above the true profile (which is convex
   in ``x``, equals 1 at ``x = 0`` and lies below every point);
2. the atoms of the pair whose hockey-stick curve is the chord interpolation of ``D`` on
   ``eps_i = i h``: ``Q``-masses ``B_{i-1} - B_i`` from the chord slopes ``B_i``, ``P = e^{eps_i}
   Q``, the rest of ``P`` at loss 0 and ``D(e^{eps_top})`` at ``+infinity``.

Every loss is ``>= 0``, so ``H_{1/alpha}(Q || P) >= delta(0)`` covers ``alpha < 1`` too.  Used
for ``rho``-zCDP (Canonne, Kamath & Steinke 2020) and for sampling without replacement under
replace-one (Balle, Barthe & Gaboardi 2018, Thm 9: ``delta'(log(1 + g (e^eps - 1))) <= g
delta(eps)``).  Values are inflated by ``1e-9`` (relative) against rounding in the envelope.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax._batching import pad, padded_size
from dpjax.accounting.pld._pld import PLD, make
from dpjax.numerics import float64_kernel

__all__ = ["from_profile"]

_POINTS = 4001


def _lower_hull(x, y):
    """Vertices of the lower convex hull of points sorted by ``x`` (monotone chain)."""
    hx, hy = [], []
    for a, b in zip(x, y, strict=True):
        while len(hx) >= 2 and (hy[-1] - hy[-2]) * (a - hx[-2]) >= (b - hy[-2]) * (
            hx[-1] - hx[-2]
        ):
            hx.pop()
            hy.pop()
        hx.append(a)
        hy.append(b)
    return np.asarray(hx), np.asarray(hy)


@float64_kernel
def from_profile(delta_upper, epsilon_max: float, bin_width: float = 1e-4) -> PLD:
    r"""PLD dominating every mechanism with ``delta(eps) <= delta_upper(eps)`` (module docstring).

    .. math:: \delta_{PLD}(\epsilon) = \operatorname{chord}_h \operatorname{conv}
              \{(0, 1), (e^{\epsilon_k}, \min_{j \le k} d(\epsilon_j))\}(e^\epsilon)
              \ \ge\ d\text{'s profile}

    Args:
      delta_upper: ``eps (NumPy array, >= 0) -> upper bounds on delta`` valid for both orders.
      epsilon_max: top of the loss grid; ``delta_upper(epsilon_max)`` goes to ``+infinity``.
      bin_width: grid spacing ``h`` (the losses are ``0, h, 2h, ...``).

    Returns:
      The pessimistic :class:`~dpjax.accounting.pld.PLD`.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> import numpy as np
      >>> from dpjax.accounting.pld import delta_for_epsilon
      >>> rr = lambda e: np.maximum(0.0, (np.exp(1.0) - np.exp(e)) / (1 + np.exp(1.0)))
      >>> pld = from_profile(rr, 1.0, bin_width=1e-3)
      >>> float(delta_for_epsilon(pld, 0.0)) >= float(rr(np.zeros(1))[0])
      True
    """
    h = float(bin_width)
    top = max(int(math.ceil(float(epsilon_max) / h)), 1)
    coarse = np.linspace(0.0, top * h, min(_POINTS, top + 1))
    d = np.minimum.accumulate(np.clip(np.asarray(delta_upper(coarse), np.float64), 0.0, 1.0))
    if np.any(np.isnan(d)):
        raise ValueError("from_profile: the profile bound is NaN")
    hx, hy = _lower_hull(np.concatenate([[0.0], np.exp(coarse)]), np.concatenate([[1.0], d]))
    x = np.exp(np.arange(top + 1) * h)
    dd = np.minimum(np.interp(x, hx, hy) * (1.0 + 1e-9) + 1e-300, 1.0)
    slopes = np.maximum((dd[:-1] - dd[1:]) / np.diff(x), 0.0)
    slopes = np.minimum.accumulate(slopes)  # convex: non-increasing slope magnitudes
    q = np.maximum(slopes - np.append(slopes[1:], 0.0), 0.0)
    p_up = x[1:] * q
    inf_mass = dd[-1]
    p0 = 1.0 - inf_mass - float(np.sum(p_up))
    # a profile whose pair has all of P's mass at losses > 0 (D(1) + |D'(1)| = 1: e.g. a
    # bound linear near x = 1) leaves p0 = 0 exactly; the 1e-9 inflation of D and of its
    # slopes then takes up to 2e-9 of it, which is not an invalid bound (p0 is kept at 0)
    if p0 < -4e-9:
        raise ValueError("from_profile: the profile bound is not a valid privacy profile")
    pmf = np.concatenate([[max(p0, 0.0)], p_up])
    # zero mass above the top up to a power of two: the law is unchanged and every bound
    # of a search (a new top each) shares the compiled queries of one length
    pmf = pad(pmf, padded_size(pmf.size), fill=0.0)
    return make(h, 0, pmf, inf_mass, pessimistic=True)
