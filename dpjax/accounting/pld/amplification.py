r"""Privacy profiles of a Poisson-subsampled mechanism from the profiles of the mechanism.

Balle, Barthe & Gaboardi 2018 ("Privacy amplification by subsampling", Thm 2, advanced
joint convexity): for ``mu = (1 - q) mu_0 + q mu_1`` and ``mu' = (1 - q) mu_0 + q mu_1'``,

.. math:: H_{\alpha'}(\mu \,\|\, \mu') = q\, H_\alpha\big(\mu_1 \,\|\, (1 - \beta)\mu_0
          + \beta \mu_1'\big),\qquad \alpha' = 1 + q(\alpha - 1),\quad \beta = \alpha'/\alpha,

``H_a(P || Q) = sup_E P(E) - a Q(E)`` the hockey-stick divergence (``a = e^epsilon``).  A
use of a mechanism ``M`` on a Poisson subsample (rate ``q``) mixes, given the rest of the
sample, ``A = M(S)`` (the record left out) with ``B = M(S + x)``; by joint convexity the
conditioning on ``S`` costs nothing.  With ``delta_BA`` / ``delta_AB`` the profiles of ``M``
at a record added (``B`` against ``A``) and removed (``A`` against ``B``), for
``epsilon' >= 0``:

* **remove** (``(1 - q) A + q B`` against ``A``), exactly:
  ``q delta_BA(log(1 + (e^epsilon' - 1) / q))``;
* **add** (``A`` against ``(1 - q) A + q B``), exactly: ``q c delta_AB(epsilon' - log c)``
  with ``c = 1 - (e^epsilon' - 1)(1 - q) / q``, and ``0`` where ``c <= 0``;
* **replace-one** (``(1 - q) A + q B`` against ``(1 - q) A + q C``, ``C = M(S + x')``), upper
  bounds: convexity in the second argument gives
  ``q [(1 - beta) delta_1(epsilon) + beta delta_2(epsilon)]`` (``delta_1`` bounds a record
  against its absence, ``delta_2`` a record against its replacement), and dropping
  ``beta C`` from the second argument gives ``q H_{(1 - q)(alpha - 1)}(B || A)``; the smaller
  is kept.  No worst pair of contributions is needed: this is how bounded-support noise
  (truncated Laplace) and spherical noise are accounted under replace-one subsampling.
  Where the mechanism's profile at two records' difference is not computed (spherical noise
  is designed at one shift), :func:`two_steps` bounds it by group privacy.

The profiles are callables ``epsilon (NumPy array, >= 0) -> upper bounds on delta``; the
results feed :func:`dpjax.accounting.pld.profile_pair.from_profile`, which builds a PLD that
composes.  A profile at an exponent below 0 (``a = e^x < 1``) is taken from the identity
``H_a(P || Q) = 1 - a + a H_{1/a}(Q || P)`` with the profile of the other order.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpjax.numerics import float64_kernel

__all__ = ["SPLITS", "poisson_add", "poisson_remove", "poisson_replace_one", "sampled_loss",
           "subsampled_epsilon", "two_steps"]

Profile = Callable[[np.ndarray], np.ndarray]


@float64_kernel
def subsampled_epsilon(epsilon_prime, sampling_rate: float) -> np.ndarray:
    r"""``epsilon = log(1 + (e^{epsilon'} - 1) / q)``: the exponent of the mechanism whose
    hockey-stick gives the subsampled one's at ``epsilon'`` (module docstring).

    .. math:: \epsilon = \epsilon' + \log\big(1 - (1 - q) e^{-\epsilon'}\big) - \log q

    (the right-hand form above ``epsilon' = 30``: no overflow; ``log1p(expm1(epsilon') / q)``
    below, exactly ``0`` at ``epsilon' = 0``).

    Args:
      epsilon_prime: ``epsilon' >= 0`` (array).
      sampling_rate: ``q`` in ``(0, 1]``.

    Returns:
      ``epsilon``, float64 NumPy.

    Example:
      >>> float(subsampled_epsilon(np.log(1.0 + 0.1 * (np.e - 1.0)), 0.1))  # back to 1
      1.0
    """
    e = np.asarray(epsilon_prime, np.float64)
    q = float(sampling_rate)
    small = np.minimum(e, 30.0)  # log1p(expm1(e) / q): exactly 0 at 0, no overflow below 30
    return np.where(e < 30.0, np.log1p(np.expm1(small) / q),
                    e + np.log1p(-(1.0 - q) * np.exp(-e)) - np.log(q))


def sampled_loss(loss: float, sampling_rate: float) -> float:
    r"""``log(1 - q + q e^{loss})``: a loss of the mechanism seen through a Poisson sample
    (the remove order's top loss from the mechanism's; the inverse of
    :func:`subsampled_epsilon`).

    .. math:: \log(1 - q + q e^{L}) = L + \log\big(q + (1 - q) e^{-L}\big)

    (the right-hand form above ``L = 30``: no overflow for any finite ``L``, where
    ``log1p(q expm1(L))`` overflows past ``L ~ 709``; that form below, exactly ``0`` at
    ``L = 0``).  ``+inf`` stays ``+inf``.

    Args:
      loss: ``L >= 0`` (a float).
      sampling_rate: ``q`` in ``(0, 1]``.

    Returns:
      The subsampled loss (a float).

    Example:
      >>> sampled_loss(1000.0, 0.01) == 1000.0 + math.log(0.01 + 0.99 * math.exp(-1000.0))
      True
    """
    q, x = float(sampling_rate), float(loss)
    if x < 30.0:
        return math.log1p(q * math.expm1(x))
    return x + math.log(q + (1.0 - q) * math.exp(-x))


def _at(profile: Profile, reverse: Profile, x: np.ndarray) -> np.ndarray:
    """``H_{e^x}`` of an order whose profile is ``profile`` at ``x >= 0`` and, below 0,
    ``1 - e^x + e^x reverse(-x)`` (module docstring); ``1`` at ``x = -inf``."""
    x = np.asarray(x, np.float64)
    out = np.ones_like(x)
    up = x >= 0.0
    if np.any(up):
        out[up] = profile(x[up])
    down = np.isfinite(x) & ~up
    if np.any(down):
        a = np.exp(x[down])
        out[down] = 1.0 - a + a * np.asarray(reverse(-x[down]), np.float64)
    return out


@float64_kernel
def poisson_remove(profile_added: Profile, sampling_rate: float) -> Profile:
    r"""Profile of ``(1 - q) A + q B`` against ``A`` (a record removed), exact.

    .. math:: \delta'(\epsilon') = q\,\delta_{BA}\big(\log(1 + (e^{\epsilon'} - 1)/q)\big)

    (Balle, Barthe & Gaboardi 2018, Thm 2 with ``mu_1' = mu_0``).

    Args:
      profile_added: ``delta_BA``, the mechanism's profile of ``B = M(S + x)`` against
        ``A = M(S)``.
      sampling_rate: ``q`` in ``(0, 1]``.

    Returns:
      The subsampled profile, ``epsilon' (array >= 0) -> delta'``.

    Example:
      >>> rr = lambda e: np.maximum(0.0, 1.0 - np.exp(np.asarray(e) - 1.0))  # (1, 0)-ish
      >>> round(float(poisson_remove(rr, 0.5)(np.zeros(1))[0]), 6)  # q * TV
      0.31606
    """
    q = float(sampling_rate)
    return lambda e: q * np.asarray(profile_added(subsampled_epsilon(e, q)), np.float64)


@float64_kernel
def poisson_add(profile_removed: Profile, sampling_rate: float) -> Profile:
    r"""Profile of ``A`` against ``(1 - q) A + q B`` (a record added), exact.

    .. math:: \delta'(\epsilon') = q\,c\,\delta_{AB}(\epsilon' - \log c),\qquad
              c = 1 - (e^{\epsilon'} - 1)\,\frac{1 - q}{q}

    and ``0`` where ``c <= 0`` (Balle, Barthe & Gaboardi 2018, Thm 2 with ``mu_1 = mu_0``).

    Args:
      profile_removed: ``delta_AB``, the mechanism's profile of ``A = M(S)`` against
        ``B = M(S + x)``.
      sampling_rate: ``q`` in ``(0, 1]``.

    Returns:
      The subsampled profile, ``epsilon' (array >= 0) -> delta'``.

    Example:
      >>> rr = lambda e: np.maximum(0.0, 1.0 - np.exp(np.asarray(e) - 1.0))
      >>> float(poisson_add(rr, 0.5)(np.array([1.0]))[0])  # c <= 0: no loss above log 2
      0.0
    """
    q = float(sampling_rate)

    def bound(e):
        e = np.asarray(e, np.float64)
        c = 1.0 - np.expm1(e) * ((1.0 - q) / q)
        out = np.zeros_like(e)
        ok = c > 0.0
        if np.any(ok):
            out[ok] = q * c[ok] * np.asarray(profile_removed(e[ok] - np.log(c[ok])), np.float64)
        return out

    return bound


#: The splits ``t`` of :func:`two_steps` (``epsilon = t epsilon + (1 - t) epsilon``).
SPLITS = (0.3, 0.4, 0.5, 0.6, 0.7)


@float64_kernel
def two_steps(profile_one: Profile) -> Profile:
    r"""Upper bound on a mechanism's profile at twice the shift from its profile at one shift
    (group privacy through the midpoint: ``x`` and ``x'`` at distance ``2 Delta`` both lie
    within ``Delta`` of ``(x + x') / 2``).

    .. math:: \delta_2(\epsilon) \le \min_t\ \delta_1(t\epsilon)
              + e^{t\epsilon}\,\delta_1\big((1 - t)\epsilon\big)

    over the splits :data:`SPLITS` (``H_{ab}(P || R) <= H_a(P || Q) + a H_b(Q || R)``).

    Args:
      profile_one: ``delta_1``: bounds the profile at one shift, both orders, and at every
        smaller shift.

    Returns:
      The bound, ``epsilon (array >= 0) -> delta_2`` (at most 1).

    Example:
      >>> flat = lambda e: np.full(np.shape(e), 0.01)
      >>> float(two_steps(flat)(np.zeros(1))[0])  # TV: 0.01 + 0.01
      0.02
    """

    def bound(e):
        e = np.asarray(e, np.float64)
        best = np.ones_like(e)
        for t in SPLITS:
            first = np.asarray(profile_one(t * e), np.float64)
            second = np.asarray(profile_one((1.0 - t) * e), np.float64)
            best = np.minimum(best, first + np.exp(t * e) * second)
        return best

    return bound


@float64_kernel
def poisson_replace_one(profile_one: Profile, sampling_rate: float,
                        profile_two: Profile | None = None) -> Profile:
    r"""Upper bound on the profile of ``(1 - q) A + q B`` against ``(1 - q) A + q C``
    (a record replaced; both orders).

    .. math:: \delta'(\epsilon') \le q \min\Big\{(1 - \beta)\,\delta_1(\epsilon)
              + \beta\,\delta_2(\epsilon),\ H_{(1 - q)(\alpha - 1)}(B \,\|\, A)\Big\},
              \qquad \alpha = e^\epsilon = 1 + \frac{e^{\epsilon'} - 1}{q},\ \
              \beta = e^{\epsilon' - \epsilon}

    (module docstring; the first term only where ``profile_two`` is given).

    Args:
      profile_one: ``delta_1``: bounds the mechanism's profile of a record against its
        absence, in both orders (``max(delta_BA, delta_AB)``).
      sampling_rate: ``q`` in ``(0, 1]``.
      profile_two: ``delta_2``: bounds its profile of a record against another one (the
        mechanism's replace-one profile), or ``None``.

    Returns:
      The bound, ``epsilon' (array >= 0) -> delta'``, valid for both orders.

    Example:
      >>> rr = lambda e: np.maximum(0.0, 1.0 - np.exp(np.asarray(e) - 1.0))
      >>> rr2 = lambda e: np.maximum(0.0, 1.0 - np.exp(np.asarray(e) - 2.0))
      >>> round(float(poisson_replace_one(rr, 0.5, rr2)(np.zeros(1))[0]), 6)  # q delta_2(0)
      0.432332
    """
    q = float(sampling_rate)

    def bound(e):
        e = np.asarray(e, np.float64)
        eps = subsampled_epsilon(e, q)
        with np.errstate(divide="ignore"):  # epsilon' = 0: H_0 = 1
            inner = np.log1p(-q) + np.log(np.expm1(e)) - np.log(q)
        out = q * _at(profile_one, profile_one, inner)
        if profile_two is not None:
            beta = np.exp(e - eps)
            mixed = (-np.expm1(e - eps)) * np.asarray(profile_one(eps), np.float64)
            mixed = mixed + beta * np.asarray(profile_two(eps), np.float64)
            out = np.minimum(out, q * mixed)
        return np.clip(out, 0.0, 1.0)

    return bound
