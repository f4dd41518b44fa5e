"""Certification: re-evaluate the profile at the returned parameters.

DESIGN.md: a calibration result is re-verified by an independent evaluation
of the exact profile before it is returned; when dpjax cannot certify, it
raises.  :func:`certify_scale` nudges a scale upward by a few ulps when the
bisection's feasible end fails the re-check only by rounding (privacy is
monotone in the scale), and reports which points still fail.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax.accounting._certified import MARGIN, log_target  # noqa: F401  (re-exported)
from dpjax.errors import CertificationError

_NUDGE = 1.0 + 2.0**-48  # ~ 36 ulps of float64

def certify_scale(
    log_delta_at: Callable[[Array], Array], scale: Array, level: Array, max_nudges: int = 8
) -> tuple[Array, Array, Array]:
    """Smallest ``scale * NUDGE**k`` (``k <= max_nudges``) whose profile is ``<= target``.

    Returns ``(scale, log_delta, certified)`` (arrays).
    """
    scale = jnp.asarray(scale)
    log_delta = log_delta_at(scale)

    def cond(carry):
        k, _, log_delta = carry
        return (k < max_nudges) & jnp.any(~(log_delta <= level))

    def body(carry):
        k, scale, log_delta = carry
        ok = log_delta <= level
        scale = jnp.where(ok, scale, scale * _NUDGE)
        return k + 1, scale, jnp.where(ok, log_delta, log_delta_at(scale))

    # usually zero iterations: the loop only runs while some point still fails
    _, scale, log_delta = jax.lax.while_loop(cond, body, (0, scale, log_delta))
    return scale, log_delta, log_delta <= level


def require_certified(mechanism: str, certified, epsilon, delta, delta_at) -> None:
    """Raise :class:`CertificationError` naming the first target that failed."""
    certified = np.asarray(certified)
    if np.all(certified):
        return
    idx = np.argwhere(~np.atleast_1d(certified))[0]
    e = np.broadcast_to(np.atleast_1d(epsilon), np.atleast_1d(certified).shape)[tuple(idx)]
    d = np.broadcast_to(np.atleast_1d(delta), np.atleast_1d(certified).shape)[tuple(idx)]
    got = np.broadcast_to(np.atleast_1d(delta_at), np.atleast_1d(certified).shape)[tuple(idx)]
    raise CertificationError(
        f"{mechanism}: could not certify the calibrated parameters for epsilon={float(e)!r}, "
        f"delta={float(d)!r} (profile re-evaluated to {float(got)!r})"
    )
