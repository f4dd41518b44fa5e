r"""Least-cost spherical mechanism meeting one ``(epsilon, delta)``: the ``spherical`` entry
of the mechanism registry (``dpjax.calibrate("spherical", ...)``, the spherical row of
``dpjax.design``).

The spherical programme (spherical-kl-optimal-mechanisms, Thm 4) minimises the KL
for a cost budget ``C = E|Z|^2`` at unit ``l2`` sensitivity; privacy is a property of
the solution, certified by the exact PLD of its cells (:mod:`.mechanism`).  To meet a
target we search the budget: bisection on ``log C`` in ``[0.8, 1.5] C_G``, ``C_G = m
sigma_G^2`` the Gaussian's budget at the same target, each step solving the
programme and accepting ``C`` only if the engine's certified ``delta(epsilon) <= delta
(1 - MARGIN)``.  The least accepted budget is returned (a budget whose programme does
not solve to tolerance counts as not accepted).

Discretisation (fixed over the search, so the solver compiles once): ``n`` shells per
unit of sensitivity; free shells up to radius ``sqrt(C_hi) + 5 sigma_hi`` (the
Gaussian's radial mass), the geometric tail's ratio matching the Gaussian's
log-density slope there, ``r = exp(-(N / n) / (n sigma_hi^2))`` (a fixed ``r = 0.9``
fails as ``m`` grows: the tail then carries the cost).  The KL-optimal mechanism is
not the least-variance one for a given ``(epsilon, delta)``: expect it near the
Gaussian, and below it only where the paper's regime (small budgets, many
compositions) applies.  Single release only.
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.calibration.result import Calibration
from dpjax.certificate import log_target
from dpjax.errors import InfeasibleTargetError
from dpjax.numerics import float64_kernel

NAME = "spherical"
#: Shells per unit of sensitivity.
SHELLS = 10
#: Bisection steps on ``log C``.
STEPS = 10
#: Budget bracket, relative to the Gaussian's ``m sigma_G^2``.
BRACKET = (0.8, 1.5)


def _plan(m: int, n: int, budget: float) -> tuple[int, float]:
    """``(N, r)``: free shells covering the radial mass of the Gaussian with ``E|Z|^2 =
    budget``, and the tail ratio matching its log-density slope at radius ``N / n``."""
    s = math.sqrt(budget / m)
    n_free = int(math.ceil(n * (math.sqrt(budget) + 5.0 * s)))
    return n_free, math.exp(-(n_free / n) / (n * s * s))


@float64_kernel
def calibrate_spherical(
    epsilon: float, delta: float, dim: int, l2: float, n: int = SHELLS, steps: int = STEPS
) -> Calibration:
    r"""Least certified cost budget of the spherical mechanism meeting ``(epsilon, delta)``.

    .. math:: \min C \quad\text{s.t.}\quad \delta_{Z_C}(\epsilon) \le \delta (1 - \mathrm{MARGIN}),

    ``Z_C`` the KL-optimal monotone radial noise of budget ``C = E|Z|^2`` (Theorem 4 of
    spherical-kl-optimal-mechanisms) and ``delta_{Z_C}`` its exact cell PLD at the worst
    shift (Lemma 1); bisection on ``log C`` (module docstring).

    Args:
      epsilon: target ``epsilon > 0``.
      delta: target ``delta`` in ``(0, 1)``.
      dim: dimension ``m = K``.
      l2: the ``l2`` sensitivity (the budget scales with ``l2^2``).
      n: shells per unit of sensitivity.
      steps: bisection steps on ``log C``.

    Returns:
      A :class:`Calibration` whose ``params`` are ``budget`` (``E|Z|^2`` at sensitivity
      ``l2``), ``n``, ``N``, ``r``.

    Raises:
      InfeasibleTargetError: no certified budget up to ``1.5`` times the Gaussian's.
    """
    from dpjax.calibration.gaussian import sigma_gaussian
    from dpjax.spherical import design as de

    if not (epsilon > 0 and 0 < delta < 1):
        raise InfeasibleTargetError(f"{NAME}: needs epsilon > 0 and 0 < delta < 1")
    m = int(dim)
    sigma = float(np.asarray(sigma_gaussian(epsilon, delta, 1.0)[0]))
    lo, hi = (f * m * sigma * sigma for f in BRACKET)
    big_n, r = _plan(m, n, hi)
    coeffs = de.coefficients_for(m, n, big_n, r)
    level = math.exp(float(log_target(delta)))

    def certified_delta(budget: float) -> float:
        try:
            mech = de.design_mechanism(coeffs, big_n, r, budget)[0]
        except (RuntimeError, ValueError):  # not solved to tolerance / budget unreachable
            return math.inf
        return mech.delta(epsilon)

    d_hi = certified_delta(hi)
    if not d_hi <= level:
        raise InfeasibleTargetError(
            f"{NAME}: no certified budget up to {BRACKET[1]} x the Gaussian's "
            f"(delta({epsilon}) = {d_hi:.3g} > {delta})"
        )
    best, d_best = hi, d_hi
    a, b = math.log(lo), math.log(hi)
    for _ in range(steps):
        mid = 0.5 * (a + b)
        d = certified_delta(math.exp(mid))
        if d <= level:
            b, best, d_best = mid, math.exp(mid), d
        else:
            a = mid
    budget = best * l2 * l2
    return Calibration(
        mechanism=NAME,
        params={
            "budget": np.float64(budget),
            "n": np.float64(n),
            "N": np.float64(big_n),
            "r": np.float64(r),
        },
        variance=np.float64(budget / m),
        mse=np.float64(budget),
        epsilon=np.float64(epsilon),
        delta=np.float64(delta),
        delta_at_params=np.float64(d_best),
        dim=m,
        condition="exact",
        sensitivity={"l2": l2},
        notes=(
            f"spherical: KL-optimal radial noise (monotone programme, JAX solver), least "
            f"budget by {steps}-step bisection, certified by the exact cell PLD; "
            f"n = {n} shells per unit sensitivity, N = {big_n}, r = {r:.4g}; rebuild with "
            f"`dpjax spherical design --dim {m} --cost {best:.6g} --n {n} --N {big_n} "
            f"--r {r:.6g}` (unit sensitivity; scale the noise by l2)",
        ),
    )
