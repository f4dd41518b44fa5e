"""Exceptions raised by dpjax."""

from __future__ import annotations


class InfeasibleTargetError(ValueError):
    """A privacy target that no parameter of the mechanism can meet.

    Raised, for example, for ``delta = 0`` with Gaussian noise (every Gaussian
    mechanism has ``delta(eps) > 0``), or ``epsilon = delta = 0`` with any
    additive noise.  The message says which target and why.
    """


class CertificationError(RuntimeError):
    """dpjax could not certify parameters it computed (never silently returned).

    This signals a numerical failure, not bad input: the independent
    re-evaluation of the privacy profile at the returned parameters exceeded
    the target.  Please report it with the arguments that produced it.
    """
