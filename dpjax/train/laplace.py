r"""Laplace noise in DP-SGD: l1 clipping, one-dimensional dominating pair, the PLD engine.

Group ``m`` (``K_m`` coordinates) is clipped per example to l1 norm ``C_m`` and gets
i.i.d. ``Lap(0, b_m)`` noise per coordinate, added to the *sum* of clipped gradients.
One example shifts the noised sum by ``v`` with ``||v_m||_1 <= C_m``; in units of the
scales the shift has l1 norm at most

.. math:: \mu = \sum_m C_m / b_m ,

and every step is dominated by the one-dimensional Laplace pair
``(Lap(0, 1), Lap(mu, 1))`` (lemma below).  ``T`` Poisson-subsampled steps are then
dominated by ``T`` compositions of the subsampled pair (add and remove adjacency; Zhu,
Dong & Wang 2022, Thms 10, 11), which :func:`dpjax.calibrate` (``"laplace"``, ``l1 = 1``,
``sampling_rate = q``, ``compositions = T``) accounts through the PLD engine (the
minimum with pure DP amplified by subsampling; both certified): it returns the least
certified scale ``b_eff`` per unit of l1 sensitivity, and the plan keeps
``1 / mu >= b_eff``.

**Lemma** (product Laplace noise, l1 shift).  For ``v`` in ``R^K`` with ``||v||_1 <= c``,
``H_a(Lap(0, 1)^K || Lap(v, 1)) <= H_a(Lap(0, 1) || Lap(c, 1))`` for every ``a >= 0``
(hockey-stick divergence; both orders, by the reflection ``x -> v - x``).  *Proof.*  By
induction on ``K`` and the composition of dominating pairs it suffices to take ``K = 2``,
``v = (s, t)``, ``s, t >= 0``, ``c = s + t`` (the 1-D profile increases with the shift).
Under ``P = Lap(0, 1)^2`` the likelihood ratio is ``e^{2U - c}`` with
``U = min(X_1^+, s) + min(X_2^+, t)``; in one dimension it is ``e^{2V - c}`` with
``V = min(X^+, c)``.  Both ratios have mean 1, and ``H_a = E (1 - a e^{2U - c})_+`` is the
expectation of a convex function of the ratio, so ``e^{2U} <=_cx e^{2V}`` (convex order)
proves the claim.  With ``s <= t``: ``4 e^u P(V > u) = 2`` on ``[0, c)``, while
``4 e^u P(U > u)`` is ``3 + u`` on ``[0, s)``, ``2 + s`` on ``[s, t)`` and ``1 + c - u``
on ``[t, c)``: the survival functions cross once (``U`` above, then below), so the cut
criterion of Karlin & Novikoff (Shaked & Shanthikumar 2007, Thm 3.A.44) gives the convex
order.  ``tests/train/test_laplace.py`` checks the inequality against an independent
discretisation of the two privacy-loss distributions.

Allocation over groups (Sec. VI-C of inid-noise-laplace-beats-gaussian): ``"inid"``
minimises the total variance ``sum_m 2 K_m b_m^2`` under ``sum_m C_m / b_m = mu``: eq. (12)
with weights ``K_m`` (Theorem 5), ``b_m \propto (C_m / K_m)^{1/3}``
(:func:`dpjax.train.groups.allocate`); ``"spr"`` gives every coordinate an equal share,
``b_m = K b_eff C_m / K_m`` (per-coordinate l1 sensitivity ``C_m / K_m``).  One group:
``b = b_eff C``.
"""

from __future__ import annotations

import dpjax


def calibrate_multiplier(q: float, t: int, epsilon: float, noise_delta: float):
    """``(b_eff, calibration)``: the least certified Laplace scale per unit l1 sensitivity
    for ``t`` Poisson-subsampled steps at rate ``q`` (module docstring).

    Args:
      q: sampling rate in ``(0, 1]``.
      t: steps.
      epsilon: target epsilon.
      noise_delta: the delta of the noise.

    Returns:
      ``b_eff`` and the :class:`~dpjax.calibration.result.Calibration` behind it.
    """
    cal = dpjax.calibrate("laplace", epsilon, noise_delta, sampling_rate=q, compositions=t,
                          l1=1.0)
    return float(cal.params["scale"]), cal


def epsilon_spent(b_eff: float, q: float, steps: int, delta: float) -> float:
    """Certified epsilon of ``steps`` subsampled steps of the dominating pair (scale
    ``b_eff``, shift 1): :func:`dpjax.account` (``"laplace"``, ``l1 = 1``)."""
    return float(dpjax.account("laplace", {"scale": b_eff}, compositions=steps,
                               sampling_rate=q, delta=delta, l1=1.0))
