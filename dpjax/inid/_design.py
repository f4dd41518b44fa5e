r"""What the i.n.i.d. Gaussian and Laplace designs share: input checks, the scales (closed
form or convex programme), the certificate and the assembled :class:`InidDesign`.

Both designs bound the privacy of scales ``s`` through one scalar ``x(s)`` that scales
inversely with the scales (``x(m s) = x(s) / m``): the Gaussian ``mu = sqrt(sum
lambda_i^2 / sigma_i^2)`` (Lemma 3 of inid-noise-laplace-beats-gaussian) and the Laplace
loss ``sum lambda_i / b_i`` (proof of Theorem 5, Corollary 6).  So a programme solution
is scaled up onto its constraint and the certificate is a scalar problem: the least
multiplier ``m >= 1`` with ``log delta(x(s) / m) <= log(delta (1 - MARGIN))``
(a host bisection around one compiled evaluation of the profile), re-checked after
rounding at the returned scales.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax import _validate
from dpjax._batching import pad, padded_size
from dpjax.calibration.host_shape import least_certified_scale
from dpjax.certificate import (
    log_target,
    reported_delta,
    require_certified,
    scale_is_certified,
)
from dpjax.errors import InfeasibleTargetError
from dpjax.inid.profiles import validate_profile, validate_weights
from dpjax.inid.result import InidDesign
from solvers import PowerAllocation, get_backend, solve

#: How the scales are found: eq. (9) / (12) in closed form, or the convex programme
#: (P3) / (P4) through a :mod:`solvers` backend.
SOLVERS = ("closed-form", "jax", "cvxpy")

#: Relative rounding of the host sums (a few roundings per term), added so that they are
#: upper bounds on the exact sums of the float scales.
SUM_ROUNDING = 2.0**-50


def fsum_or_inf(terms: np.ndarray) -> float:
    """``math.fsum(terms)``, or ``inf`` where a partial sum overflows float64 (fsum raises
    there): an upper bound on a sum of non-negative terms, so privacy sums fail closed.

    Args:
      terms: non-negative float64 terms (``inf`` allowed).
    """
    try:
        return math.fsum(terms)
    except OverflowError:
        return math.inf


def _check_scales(name: str, lam: np.ndarray, scales: np.ndarray) -> None:
    """Every coordinate with ``lambda_i > 0`` needs a finite normal float64 scale.

    XLA flushes subnormal scales to 0 (a coordinate without noise); an overflowed scale is
    no noise a sampler can draw.  Both happen only when the optimal scales leave the float64
    range, and the design is scale-equivariant (``lambda -> c lambda`` gives ``s -> c s``).

    Raises:
      InfeasibleTargetError: a scale is not finite or below ``2.2250738585072014e-308``.
    """
    s = scales[lam > 0]
    bad = ~np.isfinite(s) | (s < _validate.TINY)
    if np.any(bad):
        raise InfeasibleTargetError(
            f"{name}: the optimal noise scales leave the float64 range (a scale of "
            f"{float(s[bad][0])!r} for {int(np.count_nonzero(bad))} coordinate(s)); rescale the "
            "query's units (lambda -> c lambda gives scales -> c scales)"
        )


class _Target(NamedTuple):
    """The validated input of a design."""

    lam: np.ndarray  # the profile
    eps: float
    dlt: float
    p: float  # error power
    w: np.ndarray  # error weights
    solver: str


def check_inputs(profile, epsilon, delta, error_power, weights, solver) -> _Target:
    """Validate a design's input (``ValueError`` naming what is wrong)."""
    lam = validate_profile(profile)
    eps = float(_validate.epsilon(epsilon))
    dlt = float(_validate.delta(delta))
    p = float(_validate.positive(error_power, "error_power"))
    w = validate_weights(weights, lam.size)
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    return _Target(lam, eps, dlt, p, w, solver)


def run_padded(kernel: Callable, lam: np.ndarray, budget: float, p: float, w: np.ndarray):
    """``kernel(lam, budget, p, w)`` on the profile zero-padded to a power of two (>= 8).

    Zero entries get scale 0 and contribute nothing, so padding is exact; it bounds the
    number of compilations to one per power of two.
    """
    size = padded_size(lam.size, minimum=8)
    out = kernel(pad(lam, size, fill=0.0), budget, p, pad(w, size, fill=1.0))
    return np.asarray(out)[: lam.size]


@functools.partial(jax.jit, static_argnums=1)
def _solve_compiled(problem, solver: str):
    """:func:`solvers.solve` compiled once per backend and problem size."""
    return solve(problem, solver)


def _solve_programme(target: _Target, q: float, budget: float):
    """Scales from the :mod:`solvers` programme on the positive coordinates:
    ``min sum w s^p  s.t.  sum lambda^q s^-q <= budget``; ``(scales, stats)``."""
    lam, w, solver = target.lam, target.w, target.solver
    pos = lam > 0
    prob = PowerAllocation.create(
        lam[pos] ** q, budget=budget, objective_power=target.p, constraint_power=q,
        weights=w[pos],
    )
    sol = _solve_compiled(prob, solver) if get_backend(solver).jittable else solve(prob, solver)
    x = np.zeros_like(lam)
    x[pos] = np.asarray(sol.x)
    if not np.all(np.isfinite(x)):
        raise InfeasibleTargetError(f"solver {solver!r} failed on the allocation programme")
    stats = {
        "status": int(sol.status),
        "residual": float(sol.residual.total),
        **{key: v for key, v in sol.stats.items() if isinstance(v, (int, float, str))},
    }
    return x, stats


def solve_scales(target: _Target, closed_form: Callable, q: float, budget: float,
            privacy_of: Callable, cap: float):
    """The optimal scales: ``closed_form()``, or the programme's (``q``, ``budget``) scaled up
    so that ``privacy_of(lam, s) <= cap``; ``(scales, stats)``."""
    if target.solver == "closed-form":
        return np.asarray(closed_form()), {}
    s, stats = _solve_programme(target, q, budget)
    return s * max(1.0, privacy_of(target.lam, s) / cap), stats


@functools.cache
def compiled(log_delta: Callable) -> Callable:
    """``log_delta(epsilon, delta, x)`` compiled once per design family (one small program)."""
    return jax.jit(log_delta)


def _least_multiplier(log_delta: Callable, epsilon, delta, x):
    """Least multiplier ``m >= 1`` with ``log_delta(epsilon, delta, x / m)`` at most the target.

    ``m = 1`` when the scales already meet it; otherwise the least ``m > 1`` to adjacent
    floats (:func:`dpjax.calibration.host_shape.least_certified_scale`, a host bisection
    around one compiled evaluation of ``log_delta``; privacy is monotone in ``m``).  The
    returned ``m`` is a point where ``log_delta`` was evaluated and met the target.

    Returns:
      ``(m, log delta at x / m, certified)``.
    """
    kernel = compiled(log_delta)
    level = np.asarray(log_target(delta), np.float64)

    def log_delta_at(m):
        with jax.enable_x64(True):
            return np.asarray(kernel(epsilon, delta, x / np.asarray(m, np.float64)), np.float64)

    one = np.ones(1)
    log_d = log_delta_at(one)
    if not scale_is_certified(one, log_d, level)[0]:
        one, log_d, _ = least_certified_scale(log_delta_at, one, level)
    return one[0], log_d[0], bool(scale_is_certified(one, log_d, level)[0])


def _final_certificate(name, log_delta_at, eps, dlt, error) -> float:
    """Re-evaluate the certificate at the returned (rescaled, rounded) scales: the reported
    delta (an upper bound) must be ``<= delta (1 - MARGIN)``'s reported value."""
    log_d = float(log_delta_at())
    ok = log_d <= float(log_target(dlt))
    delta_at = float(reported_delta(log_d, error))
    require_certified(name, ok and delta_at <= dlt, eps, dlt, delta_at)
    return delta_at


def certify(name: str, target: _Target, scales, privacy_of: Callable, log_delta: Callable,
             error: float):
    """Scale ``scales`` by the least certified multiplier (rounded up) and re-check them;
    ``(scales, delta_at_params)`` (``CertificationError`` if they cannot be certified)."""
    lam, eps, dlt = target.lam, target.eps, target.dlt
    _check_scales(name, lam, scales)
    m, log_d, ok = _least_multiplier(log_delta, eps, dlt, privacy_of(lam, scales))
    require_certified(name, bool(ok), eps, dlt, float(jnp.exp(log_d)))
    scales = scales * (float(m) * (1.0 + SUM_ROUNDING))
    _check_scales(name, lam, scales)
    delta_at = _final_certificate(
        name, lambda: log_delta(eps, dlt, privacy_of(lam, scales)), eps, dlt, error
    )
    return scales, delta_at


def _error(scales: np.ndarray, moment: float, p: float, w: np.ndarray) -> float:
    """``m_p sum_i w_i s_i^p`` (host float64; :func:`dpjax.inid.expected_error` in JAX);
    ``inf`` when it exceeds the float64 range."""
    with np.errstate(over="ignore"):
        return float(moment * fsum_or_inf(w * scales**p))


def _log_error_sum(scales: np.ndarray, p: float, w: np.ndarray) -> float:
    """``log sum_i w_i s_i^p`` over ``s_i > 0``, in log space: the decibels between two
    designs stay finite where their errors under- or overflow float64."""
    pos = scales > 0
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.logaddexp.reduce(np.log(w[pos]) + p * np.log(scales[pos])))


def assemble(mechanism: str, target: _Target, scales, moment: float, iid_scale: float,
              spr_scales, **fields) -> InidDesign:
    """The :class:`InidDesign` of ``scales``, with the errors of the design and of the i.i.d.
    and SPR baselines (Table I of inid-noise-laplace-beats-gaussian): the error is
    ``m_p sum_i w_i s_i^p`` with ``m_p = E|Z|^p`` of the unit noise."""
    error = _error(scales, moment, target.p, target.w)
    with np.errstate(over="ignore", invalid="ignore"):
        error_iid = float(moment * np.float64(iid_scale) ** target.p * np.sum(target.w))
    floored = int(np.count_nonzero(target.lam == _validate.TINY))
    if floored:  # validate_profile rounds smaller positive sensitivities up to TINY
        fields["notes"] = (
            f"{floored} coordinate(s) have sensitivity {_validate.TINY!r}, the least normal "
            "float64 (smaller positive sensitivities are rounded up to it: an upper bound)",
            *fields.get("notes", ()),
        )
    return InidDesign(
        mechanism=mechanism,
        profile=target.lam,
        scales=scales,
        epsilon=target.eps,
        delta=target.dlt,
        error_power=target.p,
        weights=target.w,
        error=error,
        error_iid=error_iid,
        error_spr=_error(spr_scales, moment, target.p, target.w),
        reduction_db=10.0 / math.log(10.0) * (
            _log_error_sum(np.full_like(scales, iid_scale), target.p, target.w)
            - _log_error_sum(scales, target.p, target.w)
        ),
        iid_scale=iid_scale,
        spr_scales=spr_scales,
        solver=target.solver,
        **fields,
    )
