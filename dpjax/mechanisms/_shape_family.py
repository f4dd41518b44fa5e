r"""The PLD engine's answers for a Gaussian-to-Laplace shape family, from a parameter dict.

Flipped Huber ``FH(alpha, gamma^2)`` and OSGT ``O(vartheta, rho^2)`` are scale families
(:meth:`from_scale`): scale ``gamma`` / ``rho``, shape ``alpha / gamma`` / ``vartheta / rho``
(flipped-huber-mechanism, Def. 7 and App. F(c)).  :data:`SCALE_AND_SHAPE` names, per family,
the scale parameter and the one that is ``shape * scale``; :func:`engine_answer` evaluates the
certified profile or epsilon of ``T`` (possibly Poisson-subsampled) uses of one pair
(:func:`dpjax.accounting.pld.engine.profile` / :func:`~dpjax.accounting.pld.engine.epsilon`).
"""

from __future__ import annotations

import numpy as np

from dpjax.accounting.pld import engine
from dpjax.calibration.composed_family import BIN_WIDTH

#: ``{name: (scale parameter, parameter = shape * scale)}``
SCALE_AND_SHAPE = {"flipped-huber": ("gamma", "alpha"), "osgt": ("rho", "vartheta")}


def engine_answer(what: str, family, params: dict, x, linf: float, uses: int,
                  sampling_rate: float | None) -> np.ndarray:
    """The engine's ``profile`` (``x`` = epsilons) or ``epsilon`` (``x`` = deltas) of one pair.

    Args:
      what: ``"profile"`` or ``"epsilon"``.
      family: the noise class (its ``name`` and ``from_scale``).
      params: the family's parameters (one value each).
      x: the epsilons or deltas.
      linf: the sensitivity.
      uses: the 1-D pairs composed.
      sampling_rate: Poisson rate ``q < 1`` of every use, or ``None``.

    Raises:
      ValueError: several parameter values at once.
    """
    scale_name, other = SCALE_AND_SHAPE[family.name]
    scale, along = (np.asarray(params[n], np.float64) for n in (scale_name, other))
    if scale.ndim or along.ndim:
        raise ValueError(f"{family.name}: over several uses, give one ({other}, {scale_name}) "
                         "at a time")
    fn = engine.profile if what == "profile" else engine.epsilon
    return np.asarray(fn(family.from_scale, float(scale), float(along) / float(scale), linf, x,
                         uses, sampling_rate, BIN_WIDTH))


__all__ = ["SCALE_AND_SHAPE", "engine_answer"]
