r"""The certificate: how dpjax turns a float64 evaluation into a certified number.

One module owns certification for the whole library ("certified, not
approximate"): the margin every target keeps (:data:`MARGIN`, :func:`log_target`), each
kernel's documented float error (:func:`kernel_error`), how reported values are padded
into upper bounds (:func:`reported_delta`, :func:`reported_epsilon`, :func:`fail_closed`),
and the re-checks at the boundary of every function that returns parameters or an epsilon
(:func:`certify_scale`, :func:`certify_epsilon`, :func:`require_certified`), which raise
:class:`dpjax.errors.CertificationError` rather than return what they cannot certify.
Searches that run without XLA (the closed-form Gaussian and Laplace calibrations) use the
NumPy twins beside their originals (:func:`log_target_host`, :func:`reported_delta_host`,
:func:`certify_scale_host`): the same rules, checked equal by tests/test_certificate.py.
It sits low in the dependency order (it imports only :mod:`dpjax.numerics` and
:mod:`dpjax.errors`), so accounting and calibration both use it.

Every closed-form profile kernel documents its float error: a constant ``c``
such that

.. math:: |\log\hat\delta - \log\delta| \le \mathrm{err}(\log\delta)
          = c\,(1 + |\log\delta|)

(the relative error of ``delta``; the ``|log delta|`` part is the rounding of
a logarithm as large as 745 itself), measured against 60+ digit mpmath over
the kernel's whole domain and declared with :func:`kernel_error`.  Two rules
follow.

* **Targets keep a margin.**  Calibrations and inverse profiles aim at
  ``delta (1 - MARGIN)`` (:func:`log_target`).  :func:`kernel_error` refuses an
  error that is not well below ``MARGIN``, so an answer certified against the
  margin is private for the exact profile, not only for its float64
  evaluation: ``delta_true <= delta (1 - MARGIN) e^{err} < delta``
  (``err <= 746 c <= MARGIN / 4``).
* **Reported values are upper bounds, not nearest floats.**  A delta is
  reported as :func:`reported_delta` (``exp(log delta + err)`` rounded up,
  never an underflowed 0, never NaN) and a closed-form epsilon as
  :func:`reported_epsilon` (rounded up by its documented relative error).

So ``profile(account(delta=d)) <= d``: the epsilon is certified at
``d (1 - MARGIN)`` and the reported profile there is at most
``d (1 - MARGIN) e^{err} (1 + 2^-52) <= d``.

Calibration certificates: a calibration result is re-verified by an independent evaluation
of the exact profile before it is returned; when dpjax cannot certify, it
raises.  :func:`certify_scale` nudges a scale upward when the search's
feasible end fails the re-check only by rounding (privacy is monotone in the
scale) and reports which points still fail; a scale that is not a finite,
normal float64 (XLA flushes subnormals to zero: no noise) is never certified.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.errors import CertificationError
from dpjax.numerics import float64_kernel

MARGIN = 1e-10
#: Smallest positive normal float64; XLA flushes anything smaller to zero.
TINY = float(np.finfo(np.float64).tiny)
LOG_TINY = math.log(TINY)


#: ``|log delta|`` of any delta a float64 can hold (``log 2.2e-308 ~ -708``), with room.
_LOG_RANGE = 745.0


def kernel_error(c: float) -> float:
    r"""Declare a kernel's documented error constant ``c`` (module docstring).

    .. math:: |\log\hat\delta - \log\delta| \le c\,(1 + |\log\delta|),\qquad
              c\,(1 + 745) \le \text{MARGIN} / 4

    The certification margin must exceed every kernel's error with room for the
    re-evaluation's rounding; a constant that breaks this fails at import of the kernel's
    module.

    Args:
      c: the error constant, measured against high-precision mpmath.

    Returns:
      ``c`` as a float.

    Raises:
      ValueError: ``c`` is negative or too large for :data:`MARGIN`.
    """
    if not 0.0 <= c * (1.0 + _LOG_RANGE) <= MARGIN / 4:
        raise ValueError(
            f"kernel error constant {c!r}: c (1 + {_LOG_RANGE}) must lie in [0, MARGIN / 4]"
        )
    return float(c)


@float64_kernel
def error_bound(log_delta: ArrayLike, c: float) -> Array:
    r"""The documented bound on ``|log delta_hat - log delta|`` of a kernel with constant ``c``.

    .. math:: \mathrm{err}(\log\delta) = c\,(1 + |\log\delta|)

    Args:
      log_delta: the computed ``log delta``.
      c: the kernel's error constant (:func:`kernel_error`).

    Returns:
      The bound, shape of ``log_delta``.
    """
    return c * (1.0 + jnp.abs(jnp.asarray(log_delta)))


@jax.jit
def log_target(delta: ArrayLike) -> Array:
    r"""``log(delta (1 - MARGIN))``: the level a certified answer must reach (``-inf`` for 0).

    .. math:: \log\big(\delta(1 - \text{MARGIN})\big) = \log\delta + \mathrm{log1p}(-\text{MARGIN})

    Args:
      delta: target ``delta`` in ``[0, 1)``.

    Returns:
      The log-level, shape of ``delta``.

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> math.exp(float(log_target(1e-6))) < 1e-6
      True
    """
    return jnp.log(jnp.asarray(delta)) + jnp.log1p(-MARGIN)


def log_target_host(delta) -> np.ndarray:
    r""":func:`dpjax.certificate.log_target` in NumPy, for host searches (no compiled program).

    .. math:: \log\big(\delta(1 - \text{MARGIN})\big) = \log\delta + \mathrm{log1p}(-\text{MARGIN})

    Args:
      delta: target ``delta`` in ``[0, 1)``.

    Returns:
      The log-level as a float64 array (``-inf`` for 0).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.certificate import log_target
      >>> bool(log_target_host(1e-6) == float(log_target(1e-6)))
      True
    """
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(delta, dtype=np.float64)) + math.log1p(-MARGIN)


@float64_kernel
@jax.jit
def reported_delta(log_delta: ArrayLike, error: float) -> Array:
    r"""The delta to report from ``log delta`` computed by a kernel with error constant ``error``.

    .. math:: \hat\delta = \min\big(1,\ \mathrm{nextafter}(e^{\log\delta
              + c (1 + |\log\delta|)}, +\infty)\big),

    an upper bound on the exact value.  Fails closed: NaN gives 1; a finite ``log delta``
    too small for a normal float64 gives :data:`TINY` (a true delta that underflows is
    positive, so it is never reported as 0); only ``-inf`` (an exact zero of the kernel's
    formula, e.g. pure DP) gives 0.

    Args:
      log_delta: ``log delta`` from the kernel.
      error: the kernel's error constant ``c``.

    Returns:
      The reported delta in ``[0, 1]``, shape of ``log_delta``.

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> float(reported_delta(-1000.0, 1e-14))  # exp(-1000) underflows; reported as TINY
      2.2250738585072014e-308
      >>> float(reported_delta(math.log(1e-6), 1e-14)) > 1e-6
      True
    """
    log_delta = jnp.asarray(log_delta)
    finite = jnp.isfinite(log_delta)
    shifted = log_delta + error_bound(jnp.where(finite, log_delta, 0.0), error)
    normal = shifted > LOG_TINY
    up = jnp.nextafter(jnp.exp(jnp.where(normal, shifted, 0.0)), jnp.inf)
    out = jnp.where(normal, jnp.minimum(up, 1.0), jnp.where(log_delta == -jnp.inf, 0.0, TINY))
    return jnp.where(jnp.isnan(log_delta), 1.0, out)


def reported_delta_host(log_delta, error_bound) -> np.ndarray:
    r""":func:`dpjax.certificate.reported_delta` in NumPy, given a bound on ``log delta``'s error.

    .. math:: \hat\delta = \min\big(1,\ \mathrm{nextafter}(e^{\log\delta + e}, +\infty)\big)

    with ``e`` the bound (an upper bound on the exact value when ``|log delta - log
    delta_true| <= e``).  Fails closed as :func:`dpjax.certificate.reported_delta`: NaN
    gives 1, a finite value below the normal range gives ``TINY``, only ``-inf`` gives 0.

    Args:
      log_delta: ``log delta`` from a host kernel.
      error_bound: the bound ``e >= 0`` (broadcast; ``inf`` reports 1).

    Returns:
      The reported delta in ``[0, 1]`` as a float64 array.

    Example:
      >>> import math
      >>> float(reported_delta_host(-1000.0, 1e-10))
      2.2250738585072014e-308
      >>> bool(reported_delta_host(math.log(1e-6), 1e-12) > 1e-6)
      True
    """
    log_delta, error_bound = np.broadcast_arrays(
        np.asarray(log_delta, dtype=np.float64), np.asarray(error_bound, dtype=np.float64)
    )
    with np.errstate(all="ignore"):
        shifted = log_delta + np.where(np.isfinite(log_delta), error_bound, 0.0)
        normal = shifted > LOG_TINY
        up = np.nextafter(np.exp(np.where(normal, shifted, 0.0)), np.inf)
    out = np.where(normal, np.minimum(up, 1.0), np.where(log_delta == -np.inf, 0.0, TINY))
    return np.where(np.isnan(log_delta) | np.isnan(error_bound), 1.0, out)


@float64_kernel
@jax.jit
def reported_epsilon(epsilon: ArrayLike, error: float) -> Array:
    r"""An epsilon from a closed form with relative error ``error``, rounded up.

    .. math:: \hat\epsilon = \mathrm{nextafter}\big(\epsilon (1 + \text{error}), +\infty\big)

    Args:
      epsilon: the computed epsilon.
      error: its relative error bound.

    Returns:
      The reported epsilon: an exact 0 stays 0, NaN gives ``+inf`` (no certificate),
      ``inf`` stays ``inf``.
    """
    epsilon = jnp.asarray(epsilon)
    up = jnp.nextafter(epsilon * (1.0 + error), jnp.inf)
    return jnp.where(jnp.isnan(epsilon), jnp.inf, jnp.where(epsilon == 0, 0.0, up))


@float64_kernel
def fail_closed(log_delta: ArrayLike, *inputs: ArrayLike) -> Array:
    r"""``log delta`` clipped to ``<= 0``, and ``0`` (``delta = 1``) where it or an input is NaN.

    .. math:: \min(\log\delta, 0),\qquad 0 \text{ if any of } \log\delta, \text{inputs is NaN}

    The last line of every profile kernel: a NaN from an overflow, an invalid operation or
    the caller becomes the trivial bound ``delta = 1``, never a small one (a branch selected
    by comparisons on a NaN input could otherwise look finite).

    Args:
      log_delta: the kernel's ``log delta``.
      *inputs: the kernel's inputs (broadcast against ``log_delta``).

    Returns:
      The fail-closed ``log delta``.
    """
    log_delta = jnp.asarray(log_delta)
    bad = jnp.isnan(log_delta)
    for x in inputs:
        bad = bad | jnp.isnan(jnp.asarray(x))
    return jnp.where(bad, 0.0, jnp.minimum(log_delta, 0.0))


@float64_kernel
def scale_is_certified(scale, log_delta, level):
    r"""Whether ``scale`` is certified: its profile meets ``level`` and it is a normal float64.

    .. math:: \log\delta(s) \le \text{level},\qquad \text{TINY} \le s < \infty

    (NaN fails both).  Operators only, so NumPy (host searches) and JAX arrays (traced
    searches, :func:`certify_scale`) get the same test.

    Args:
      scale: the scales.
      log_delta: the certified profile evaluated at exactly those scales.
      level: the target level (:func:`log_target`).

    Returns:
      Boolean array, broadcast over the inputs.

    Example:
      >>> import jax, numpy as np; jax.config.update("jax_enable_x64", True)
      >>> scale_is_certified(np.array([1.0, 1e-320, np.inf]), -20.0, -13.8).tolist()
      [True, False, False]
    """
    return (log_delta <= level) & (scale >= TINY) & (scale < np.inf)


def certify_scale(
    log_delta_at: Callable[[Array], Array], scale: Array, level: Array, max_nudges: int = 24
) -> tuple[Array, Array, Array]:
    r"""Least ``scale_k`` (``k <= max_nudges``) whose profile is ``<= level``, certified.

    .. math:: s_0 = s,\qquad s_k = \max\big(\mathrm{nextafter}(s),\ s\,(1 + 2^{k - 53})\big)

    (one ulp, then doubling: the scale a boundary needs is found to within a factor 2 of the
    rounding it has to absorb, up to ``2^{max_nudges - 53}`` relative; privacy is monotone
    in the scale).  The loop only runs while some point fails; its first pass evaluates
    ``s_0`` itself, so the compiled program holds one copy of the profile, not two.

    Args:
      log_delta_at: ``scale -> log delta`` (arrays), the certified profile at the target.
      scale: the search's feasible end.
      level: the target level (:func:`log_target`).
      max_nudges: most nudges tried.

    Returns:
      ``(scale, log_delta, certified)`` (arrays); ``certified`` also requires a finite
      scale ``>= TINY`` (the smallest normal float64).
    """
    scale0 = jnp.asarray(scale)

    def good(s, ld):
        return scale_is_certified(s, ld, level)

    def cond(carry):
        k, s, ld = carry
        return (k < max_nudges) & jnp.any(~good(s, ld))

    def body(carry):
        # pass k = -1 evaluates s_0 (every point starts failing, log delta = inf), pass k
        # the k-th nudge of the points still failing
        k, s, ld = carry
        ok = good(s, ld)
        step = 2.0 ** (k.astype(scale0.dtype) - 52.0)
        nudged = jnp.maximum(jnp.nextafter(scale0, jnp.inf), scale0 * (1.0 + step))
        s = jnp.where(ok, s, jnp.where(k < 0, scale0, nudged))
        return k + 1, s, jnp.where(ok, ld, log_delta_at(s))

    out = jax.eval_shape(log_delta_at, scale0)
    start = (jnp.asarray(-1, jnp.int32), scale0, jnp.full(out.shape, jnp.inf, out.dtype))
    _, scale, log_delta = jax.lax.while_loop(cond, body, start)
    return scale, log_delta, good(scale, log_delta)


def certify_scale_host(
    log_delta_at: Callable[[np.ndarray], np.ndarray], scale, level, max_nudges: int = 24
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r""":func:`dpjax.certificate.certify_scale` as a NumPy loop (no compiled program).

    .. math:: s_0 = s,\qquad s_k = \max\big(\mathrm{nextafter}(s),\ s\,(1 + 2^{k - 53})\big)

    The same nudges and the same test (:func:`dpjax.certificate.scale_is_certified`) as
    :func:`dpjax.certificate.certify_scale`.

    Args:
      log_delta_at: ``scale -> log delta`` (NumPy), a certified host profile.
      scale: the search's feasible end (NumPy array).
      level: the target level (:func:`log_target_host`).
      max_nudges: most nudges tried.

    Returns:
      ``(scale, log_delta, certified)`` as NumPy arrays.

    Example:
      >>> s, ld, ok = certify_scale_host(lambda s: -s, np.array([1.0]), np.array([-1.0]))
      >>> s.tolist(), ok.tolist()
      ([1.0], [True])
    """
    scale0 = np.asarray(scale, dtype=np.float64)
    with jax.enable_x64(True):
        s, ld = scale0, np.asarray(log_delta_at(scale0), dtype=np.float64)
        for k in range(max_nudges + 1):
            ok = scale_is_certified(s, ld, level)
            if k == max_nudges or np.all(ok):
                break
            trial = np.maximum(np.nextafter(scale0, np.inf), scale0 * (1.0 + 2.0 ** (k - 52.0)))
            s = np.where(ok, s, trial)
            ld = np.where(ok, ld, np.asarray(log_delta_at(s), dtype=np.float64))
    return s, ld, np.asarray(ok)


def require_certified(mechanism: str, certified, epsilon, delta, delta_at) -> None:
    """Raise :class:`CertificationError` naming the first target that failed.

    Args:
      mechanism: name for the error message.
      certified: boolean array, one per target.
      epsilon: the targets' epsilons (broadcast with ``certified``).
      delta: the targets' deltas.
      delta_at: the profile re-evaluated at the returned parameters.

    Raises:
      CertificationError: some entry of ``certified`` is ``False``.
    """
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

    .. math:: \hat\delta(\epsilon) \le \delta,\qquad \text{else}\ \epsilon \leftarrow
              \epsilon\,(1 + 2^{-30}) + 2^{-40} \text{ once}

    The same idea as calibration's certificate, at the boundary of every function that
    returns an epsilon: ``profile_at`` is the reported (upper-bound) profile of the very
    parameters the epsilon was computed for.  A point that fails is nudged up once
    (:data:`EPSILON_NUDGE`) and re-checked.  ``+inf`` (no finite certificate) passes as it
    is: it is a valid upper bound.  Host function (concrete arrays).

    Args:
      mechanism: name for the error message.
      profile_at: ``epsilon -> delta`` (arrays), the certified upper bound profile.
      epsilon: the epsilons to certify.
      delta: the targets they were computed for (broadcast with ``epsilon``).

    Returns:
      ``epsilon`` (nudged where needed), as a float64 array.

    Raises:
      CertificationError: an epsilon is NaN, or still fails after the nudge.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.gaussian import delta_gaussian, epsilon_gaussian
      >>> eps = epsilon_gaussian(1e-5, 1.0, 1.0)
      >>> cert = certify_epsilon("gaussian", lambda e: delta_gaussian(e, 1.0, 1.0), eps, 1e-5)
      >>> round(float(cert), 4)
      4.3772
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
