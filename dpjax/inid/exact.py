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

from dpjax.certificate import MARGIN, certify_epsilon
from dpjax.inid.profiles import validate_profile


def _composed(profile, scales, bin_width: float):
    from dpjax.accounting import pld

    lam = validate_profile(profile)
    b = np.asarray(scales, dtype=np.float64)
    pos = lam > 0
    plds = [pld.from_laplace(float(bi), float(li), bin_width=bin_width)
            for li, bi in zip(lam[pos], b[pos], strict=True)]
    return pld.compose(plds) if len(plds) > 1 else plds[0]


def laplace_inid_delta(profile, scales, epsilon: float, bin_width: float = 1e-3) -> float:
    r"""Certified upper bound on ``delta(epsilon)`` of i.n.i.d. Laplace noise (PLD composition).

    .. math:: \delta(\epsilon) = H_{e^\epsilon}\Big(\textstyle\bigotimes_i \mathrm{Lap}(0, b_i)
              \,\Big\|\, \bigotimes_i \mathrm{Lap}(\lambda_i, b_i)\Big)

    the exact profile at the worst shift ``d = lambda`` (tighter than Corollary 6 of
    inid-noise-laplace-beats-gaussian), from the FFT composition of the K pessimistic 1-D
    PLDs.  Host function; runs in float64 (scoped x64).

    Args:
      profile: sensitivity profile ``lambda``.
      scales: Laplace scales ``b`` (one per coordinate).
      epsilon: ``epsilon >= 0``.
      bin_width: PLD grid spacing.

    Returns:
      The certified ``delta(epsilon)`` (e.g. ``0.1238`` for ``lambda = (1, 2)`` with the
      Theorem 5 scales at ``epsilon = 1``, ``b = (2.5874, 3.2599)``, queried at ``0.5``,
      where Corollary 6 gives ``1 - e^{0.5 - 1} = 0.3935``).
    """
    from dpjax.accounting import pld

    with jax.enable_x64(True):
        return float(pld.delta_for_epsilon(_composed(profile, scales, bin_width), epsilon))


def laplace_inid_epsilon(profile, scales, delta: float, bin_width: float = 1e-3) -> float:
    r"""Certified upper bound on ``epsilon(delta)`` of i.n.i.d. Laplace noise (PLD composition).

    .. math:: \epsilon(\delta) = \min\{\epsilon : \delta_{\text{PLD}}(\epsilon) \le \delta\}

    (the inverse of :func:`laplace_inid_delta`), certified at the boundary: the composed
    profile is re-evaluated at the returned epsilon
    (:func:`dpjax.certificate.certify_epsilon`).

    Args:
      profile: sensitivity profile ``lambda``.
      scales: Laplace scales ``b``.
      delta: target ``delta`` in ``(0, 1)``.
      bin_width: PLD grid spacing.

    Returns:
      The certified ``epsilon``.

    Raises:
      CertificationError: the re-evaluated profile exceeds ``delta``.
    """
    from dpjax.accounting import pld

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

    .. math:: c^* = \min\{c \in [\text{lower}, 1] :\ \delta_{\text{PLD}}(\epsilon;\ c\,b)
              \le \delta (1 - \text{MARGIN})\}

    How much of the Corollary 6 noise (inid-noise-laplace-beats-gaussian) the exact profile
    (:func:`laplace_inid_delta`) saves: bisection on ``c`` (``lower`` is returned if it is
    already private).  Slow: one PLD composition per step.

    Args:
      profile: sensitivity profile ``lambda``.
      scales: Laplace scales, private under the PLD profile at ``c = 1`` (e.g. the
        Corollary 6 scales).
      epsilon: target ``epsilon``.
      delta: target ``delta``.
      num_iterations: bisection steps.
      bin_width: PLD grid spacing.
      lower: the least multiplier tried.

    Returns:
      ``(c, delta_at_c)``: the feasible end, certified by the pessimistic PLD against
      ``delta (1 - MARGIN)``.

    Raises:
      ValueError: ``scales`` are not private at ``c = 1``.
    """
    target = delta * (1.0 - MARGIN)
    b = np.asarray(scales, dtype=np.float64)
    at_one = laplace_inid_delta(profile, b, epsilon, bin_width)
    if not at_one <= target:
        raise ValueError("the given scales are not private under the PLD profile")
    good, d_good = 1.0, at_one
    bad = float(lower)
    d_bad = laplace_inid_delta(profile, bad * b, epsilon, bin_width)
    if d_bad <= target:
        return bad, d_bad
    for _ in range(num_iterations):
        mid = 0.5 * (good + bad)
        d_mid = laplace_inid_delta(profile, mid * b, epsilon, bin_width)
        if d_mid <= target:
            good, d_good = mid, d_mid
        else:
            bad = mid
    return good, d_good
