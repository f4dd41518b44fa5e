r"""Exact (PLD) privacy profile of the i.n.i.d. Laplace mechanism with ``delta > 0``.

Corollary 6 of inid-noise-laplace-beats-gaussian bounds the profile by the
worst-case loss ``L = sum lambda_i / b_i``: ``delta(eps) <= 1 - e^{eps - L}``.
The exact profile (decoupled coordinates, worst shift ``d = lambda``) is that
of the heterogeneous composition of the K one-dimensional Laplace mechanisms
``(Lap(0, b_i), Lap(lambda_i, b_i))``; :mod:`dpjax.accounting.pld` composes
their pessimistic PLDs by FFT, so the values below are certified upper bounds
on the exact profile (and on any query with that profile, since each 1-D
Laplace pair at a shift ``|d_i| <= lambda_i`` is dominated by the shift
``lambda_i``).  Host functions (concrete inputs; each coordinate's PLD grid
depends on ``lambda_i / b_i``).
"""

from __future__ import annotations

import jax
import numpy as np

from dpjax.accounting import pld
from dpjax.certificate import MARGIN, certify_epsilon
from dpjax.inid.profiles import validate_profile
from dpjax.numerics import bisect_host


def _composed(profile, scales, bin_width: float):
    lam = validate_profile(profile)
    b = np.asarray(scales, dtype=np.float64)
    pos = lam > 0
    plds = [pld.from_laplace(float(bi), float(li), bin_width=bin_width)
            for li, bi in zip(lam[pos], b[pos], strict=True)]
    return pld.compose(plds) if len(plds) > 1 else plds[0]


def laplace_inid_delta(profile, scales, epsilon: float, bin_width: float = 1e-3) -> float:
    r"""Certified upper bound on ``delta(epsilon)`` of i.n.i.d. Laplace noise (PLD composition).

    The exact profile of the heterogeneous composition of the ``K`` pairs
    ``(Lap(0, b_i), Lap(lambda_i, b_i))`` (module docstring; tighter than Corollary 6 of
    inid-noise-laplace-beats-gaussian),

    .. math:: \delta(\epsilon) = \mathbb{E}\big[(1 - e^{\epsilon - L})_+\big], \qquad
              L = \textstyle\sum_i L_i ,

    ``L_i`` the privacy loss of coordinate ``i``, bounded above by the pessimistic PLD.

    Args:
      profile: the sensitivity profile ``lambda``.
      scales: the Laplace scales ``b``.
      epsilon: ``epsilon >= 0``.
      bin_width: the PLD grid's bin width.

    Returns:
      The certified ``delta(epsilon)``.
    """
    with jax.enable_x64(True):
        return float(pld.delta_for_epsilon(_composed(profile, scales, bin_width), epsilon))


def laplace_inid_epsilon(profile, scales, delta: float, bin_width: float = 1e-3) -> float:
    r"""Certified upper bound on ``epsilon(delta)`` of i.n.i.d. Laplace noise (PLD composition).

    The least ``epsilon`` with the composed profile of :func:`laplace_inid_delta` (the exact
    profile of the heterogeneous composition, tighter than Corollary 6 of
    inid-noise-laplace-beats-gaussian) at most ``delta``; certified at the boundary: the
    composed profile is re-evaluated at the returned epsilon
    (:func:`dpjax.certificate.certify_epsilon`, ``CertificationError`` if it exceeds
    ``delta``).

    Args:
      profile: the sensitivity profile ``lambda``.
      scales: the Laplace scales ``b``.
      delta: target ``delta``.
      bin_width: the PLD grid's bin width.

    Returns:
      The certified ``epsilon``.
    """
    with jax.enable_x64(True):
        composed = _composed(profile, scales, bin_width)
        eps = float(pld.epsilon_for_delta(composed, delta))
        def profile_at(e):
            return float(pld.delta_for_epsilon(composed, float(e)))

        return float(certify_epsilon("inid laplace", profile_at, eps, delta))


def laplace_exact_multiplier(
    profile, scales, epsilon: float, delta: float, num_iterations: int = 8,
    bin_width: float = 1e-3, lower: float = 0.5,
) -> tuple[float, float]:
    r"""Least ``c <= 1`` (to ``(1 - lower) 2^-num_iterations``) with ``c * scales`` private.

    How much of Corollary 6's slack (inid-noise-laplace-beats-gaussian) the exact profile
    recovers:

    .. math:: c^* = \min\{c \in [\text{lower}, 1] : \delta_{c b}(\epsilon) \le
              \delta (1 - \mathrm{MARGIN})\},

    ``delta_{cb}`` the composed PLD profile of :func:`laplace_inid_delta`, by bisection
    on ``c`` (:func:`dpjax.numerics.bisect_host`; one PLD composition per step, slow).
    ``scales`` must be private at ``c = 1`` (e.g. the Corollary 6 scales); ``lower`` is
    returned if it is already private.

    Args:
      profile: the sensitivity profile ``lambda``.
      scales: the Laplace scales ``b`` (private at ``c = 1``).
      epsilon: target ``epsilon``.
      delta: target ``delta``.
      num_iterations: number of halvings.
      bin_width: the PLD grid's bin width.
      lower: the least multiplier tried.

    Returns:
      ``(c, delta_at_c)``: the feasible end, certified by the pessimistic PLD.
    """
    target = delta * (1.0 - MARGIN)
    b = np.asarray(scales, dtype=np.float64)
    at_one = laplace_inid_delta(profile, b, epsilon, bin_width)
    if not at_one <= target:
        raise ValueError("the given scales are not private under the PLD profile")
    bad = float(lower)
    d_bad = laplace_inid_delta(profile, bad * b, epsilon, bin_width)
    if d_bad <= target:
        return bad, d_bad

    def private(c):
        d = laplace_inid_delta(profile, c * b, epsilon, bin_width)
        return d <= target, d

    found = bisect_host(private, 1.0, bad, num_iterations, good_aux=at_one)
    good = found.good
    d_good = found.aux
    return good, d_good
