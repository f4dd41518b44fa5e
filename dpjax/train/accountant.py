r"""The accountant of a plan: certified epsilon after any number of steps, from the same PLD.

Gaussian plans ask :func:`dpjax.account` for the dominating pair the plan was calibrated
on (noise multiplier ``sigma_eff``, Poisson rate ``q``, ``t`` compositions, add/remove,
``delta_noise``): the same PLD engine, so ``epsilon(T)`` is at most the target; Laplace
plans ask it for their one-dimensional subsampled Laplace pair (scale ``b_eff``, l1 shift 1;
:mod:`dpjax.train.laplace`).  Flipped
Huber plans use the RDP accountant they were calibrated with
(:func:`dpjax.train.flipped_huber.dp_sgd_epsilon_flipped_huber`).  The truncation share of the
padded sampler, ``(1 + e^epsilon) t p``, must fit in ``delta - delta_noise``; where it does
not (far beyond the planned steps) the epsilon is ``inf`` (fail closed).

The reported epsilon is a certified **upper** value.  :meth:`Accountant.bracket` adds a
lower value: the *optimistic* discretisation (losses rounded down) of the same subsampled
pair, composed by the engine (:func:`dpjax.accounting.bracket.epsilon_lower`, the
number of steps traced).  The pair must be one
that some example realises, so that this lower value is below the true epsilon of the
untruncated mechanism: the whitened Gaussian shift is (a clipped gradient of norm ``C_m`` in
every group), and so is the one-dimensional Laplace shift with one group (all of the l1 norm
on one coordinate); with several Laplace groups the realisable shift spreads over one
coordinate per group, which is less harmful (:mod:`dpjax.train.laplace`), and the lower
value takes the worst single group, ``min_m b_m / C_m``.  Padding changes
``delta(epsilon)`` by at most the truncation share, so the lower value is taken at
``delta + (1 + e^upper) t p``.
Flipped Huber shapes ``alpha > 0`` (RDP) have no lower value (``None``).
"""

from __future__ import annotations

import math

import jax
import numpy as np

import dpjax
from dpjax import _validate
from dpjax.accounting.bracket import EpsilonBracket, epsilon_lower
from dpjax.noise import Gaussian, Laplace
from dpjax.train.flipped_huber import dp_sgd_epsilon_flipped_huber
from dpjax.train.laplace import epsilon_spent

BRACKET_NOTE = (
    "lower: optimistic PLD of the same subsampled pair (dpjax.accounting.bracket.epsilon_lower), "
    "at delta plus the truncation share; upper: certified"
)
NO_LOWER_NOTE = "no lower value: flipped Huber (alpha > 0) is accounted by an RDP upper bound"


class Accountant:
    """Epsilon spent by a :class:`~dpjax.train.plan.PrivacyPlan` after ``t`` logical steps."""

    def __init__(self, plan):
        self.plan = plan
        self._cache: dict[int, float] = {}

    def epsilon(self, steps: int) -> float:
        """Certified upper epsilon at the plan's ``delta`` after ``steps`` logical steps.

        Args:
          steps: logical steps taken, ``>= 0`` (``0`` gives ``0``).

        Returns:
          ``epsilon`` (``inf`` when the truncation share no longer fits; module docstring).
        """
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            if hasattr(steps, "item") and float(steps) == int(steps) >= 0:
                steps = int(steps)
            else:
                raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
        if steps == 0:
            return 0.0
        _validate.positive_int(steps, "steps", maximum=_validate.MAX_COMPOSITIONS)
        if steps not in self._cache:
            self._cache[steps] = self._epsilon(steps)
        return self._cache[steps]

    def _epsilon(self, steps: int) -> float:
        p = self.plan
        if p.noise == "laplace":
            eps = epsilon_spent(p.noise_multiplier, p.sampling_rate, steps, p.noise_delta)
        elif p.noise == "gaussian" or p.fh_alpha == 0.0:  # FH(0, gamma) is N(0, gamma^2)
            eps = float(
                dpjax.account(
                    "gaussian", {"sigma": p.noise_multiplier}, compositions=steps,
                    sampling_rate=p.sampling_rate, delta=p.noise_delta,
                )
            )
        else:
            eps = dp_sgd_epsilon_flipped_huber(
                p.fh_alpha, p.fh_gamma, p.groups.dim, float(p.groups.clip_norms[0]),
                p.sampling_rate, steps, p.noise_delta,
            )
        if not math.isfinite(eps):
            return math.inf
        truncation = (1.0 + math.exp(min(eps, 700.0))) * steps * p.truncation_probability
        return eps if truncation <= p.delta - p.noise_delta else math.inf

    def bracket(self, steps: int) -> EpsilonBracket:
        """``lower <= epsilon(delta) <= upper`` after ``steps`` logical steps (module docstring).

        Args:
          steps: logical steps taken, ``>= 0``.

        Returns:
          An :class:`EpsilonBracket` (``upper`` is :meth:`epsilon`).
        """
        upper = self.epsilon(steps)
        p = self.plan
        if steps == 0:
            return EpsilonBracket(0.0, 0.0, BRACKET_NOTE)
        if p.noise == "flipped-huber" and p.fh_alpha != 0.0:
            return EpsilonBracket(None, upper, NO_LOWER_NOTE)
        if p.noise == "laplace":  # realisable: the worst single group (module docstring)
            family, scale = Laplace.from_scale, float(np.min(p.laplace_scale / p.groups.clip_norms))
        else:
            family, scale = Gaussian.from_scale, float(p.noise_multiplier)
        share = (1.0 + math.exp(min(upper, 700.0))) * int(steps) * p.truncation_probability
        dlt = min(p.delta + share, 0.5)
        # the engine's optimistic composition: the number of steps is traced, so a new step
        # count reuses the programs of its grid size (as epsilon() does)
        with jax.enable_x64(True):  # a public entry point: float64 whatever the caller's mode
            lower = float(epsilon_lower(family, scale, 0.0, 1.0, dlt, int(steps),
                                        p.sampling_rate))
        return EpsilonBracket(min(lower, upper), upper, BRACKET_NOTE)

    def report(self, steps: int, sampler=None) -> dict:
        """A JSON-ready end-of-training report (epsilon, delta, schedule, guarantee).

        Args:
          steps: logical steps taken.
          sampler: the sampler used (its ``guarantee`` line is reported), or ``None``.

        Returns:
          A dict.
        """
        p = self.plan
        b = self.bracket(steps)
        return {
            "steps": int(steps),
            "planned_steps": p.steps,
            "epsilon": b.upper,
            "epsilon_lower": b.lower,
            "bracket_note": b.note,
            "target_epsilon": p.epsilon,
            "delta": p.delta,
            "noise_delta": p.noise_delta,
            "sampling_rate": p.sampling_rate,
            "noise": p.noise,
            "guarantee": (sampler.guarantee if sampler is not None
                          else "Poisson sampling, as accounted (certified)"),
            "certificate": p.certificate,
        }
