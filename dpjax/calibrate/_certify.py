"""Certification: re-evaluate the profile at the returned parameters.

DESIGN.md: a calibration result is re-verified by an independent evaluation
of the exact profile before it is returned; when dpjax cannot certify, it
raises.  :func:`certify_scale` nudges a scale upward when the search's
feasible end fails the re-check only by rounding (privacy is monotone in the
scale) and reports which points still fail; a scale that is not a finite,
normal float64 (XLA flushes subnormals to zero: no noise) is never certified.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax.accounting._certified import (  # noqa: F401  (re-exported)
    MARGIN,
    TINY,
    log_target,
    reported_delta,
)
from dpjax.errors import CertificationError


def certify_scale(
    log_delta_at: Callable[[Array], Array], scale: Array, level: Array, max_nudges: int = 24
) -> tuple[Array, Array, Array]:
    r"""Least ``scale_k`` (``k <= max_nudges``) whose profile is ``<= level``, certified.

    ``scale_0 = scale``; nudge ``k >= 1`` is ``max(nextafter(scale), scale (1 + 2^{k - 53}))``
    (one ulp, then doubling: the scale a boundary needs is found to within a factor 2 of
    the rounding it has to absorb, up to ``2^{max_nudges - 53}`` relative).  The loop only
    runs while some point fails.  Returns ``(scale, log_delta, certified)`` (arrays);
    ``certified`` also requires a finite scale ``>= TINY`` (the smallest normal float64).
    """
    scale0 = jnp.asarray(scale)
    log_delta = log_delta_at(scale0)

    def good(s, ld):
        return (ld <= level) & jnp.isfinite(s) & (s >= TINY)

    def cond(carry):
        k, s, ld = carry
        return (k < max_nudges) & jnp.any(~good(s, ld))

    def body(carry):
        k, s, ld = carry
        ok = good(s, ld)
        step = 2.0 ** (k.astype(scale0.dtype) - 52.0)
        trial = jnp.maximum(jnp.nextafter(scale0, jnp.inf), scale0 * (1.0 + step))
        s = jnp.where(ok, s, trial)
        return k + 1, s, jnp.where(ok, ld, log_delta_at(s))

    _, scale, log_delta = jax.lax.while_loop(cond, body, (0, scale0, log_delta))
    return scale, log_delta, good(scale, log_delta)


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
        f"delta={float(d)!r} (profile re-evaluated to {float(got)!r}; parameters must also be "
        "finite normal float64 numbers, >= 2.2250738585072014e-308)"
    )


#: The one upward step :func:`certify_epsilon` may take before it raises:
#: ``epsilon -> epsilon (1 + 2^-30) + 2^-40``.
EPSILON_NUDGE = (2.0**-30, 2.0**-40)


def certify_epsilon(mechanism: str, profile_at: Callable, epsilon, delta) -> np.ndarray:
    r"""The certificate of an epsilon: ``profile_at(epsilon) <= delta`` re-evaluated, or raise.

    The same idea as calibration's certificate, at the boundary of every function
    that returns an epsilon: ``profile_at`` is the reported (upper-bound) profile of the
    very parameters the epsilon was computed for.  A point that fails is nudged up once
    (:data:`EPSILON_NUDGE`) and re-checked; if it still fails, or any epsilon is NaN,
    :class:`CertificationError` is raised.  ``+inf`` (no finite certificate) passes as
    it is: it is a valid upper bound.  Host function (concrete arrays).

    Args:
      mechanism: name for the error message.
      profile_at: ``epsilon -> delta`` (arrays), the certified upper bound profile.
      epsilon: the epsilons to certify.
      delta: the targets they were computed for (broadcast with ``epsilon``).

    Returns:
      ``epsilon`` (nudged where needed), as a float64 array.
    """
    eps, dlt = np.broadcast_arrays(np.asarray(epsilon, np.float64), np.asarray(delta, np.float64))
    if np.any(np.isnan(eps)):
        raise CertificationError(f"{mechanism}: the computed epsilon is NaN for delta={dlt!r}")
    finite = np.isfinite(eps)

    def failing(e):
        at = np.broadcast_to(np.asarray(profile_at(np.where(finite, e, 0.0)), np.float64), e.shape)
        return finite & ~(at <= dlt), at

    bad, at = failing(eps)
    if np.any(bad):
        rel, absolute = EPSILON_NUDGE
        eps = np.where(bad, eps * (1.0 + rel) + absolute, eps)
        bad, at = failing(eps)
    if np.any(bad):
        i = tuple(np.argwhere(np.atleast_1d(bad))[0])
        e, d, got = (np.atleast_1d(x)[i] for x in (eps, dlt, at))
        raise CertificationError(
            f"{mechanism}: could not certify epsilon={float(e)!r} for delta={float(d)!r} "
            f"(the profile re-evaluated there is {float(got)!r})"
        )
    return eps.copy()
