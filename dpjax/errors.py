"""Exceptions raised by dpjax."""

from __future__ import annotations


class InfeasibleTargetError(ValueError):
    """A privacy target that no parameter of the mechanism can meet.

    Raised, for example, for ``delta = 0`` with Gaussian noise (every Gaussian
    mechanism has ``delta(eps) > 0``), or ``epsilon = delta = 0`` with any
    additive noise.  The message says which target and why.
    """


class TrivialTargetError(ValueError):
    """A privacy target that holds without any noise, so no noise level is the answer.

    Raised, for example, by ``dpjax.calibrate(..., relation="add", sampling_rate=q)`` when
    ``delta >= 1 - e^epsilon (1 - q)^T``: adding a record to a Poisson-subsampled input
    changes any mechanism's output law by at most a factor ``1 / (1 - q)`` per use, so
    every noise level meets the target.  The message gives the bound.
    """


class CertificationError(RuntimeError):
    """dpjax could not certify parameters it computed (never silently returned).

    This signals a numerical failure, not bad input: the independent
    re-evaluation of the privacy profile at the returned parameters exceeded
    the target.  Please report it with the arguments that produced it.
    """
