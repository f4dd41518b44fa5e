r"""Certified i.n.i.d. Gaussian and Laplace designs for a sensitivity profile.

The façade of :mod:`dpjax.inid`: validates input, runs the kernels of
:mod:`dpjax.inid._kernels` in a scoped float64 context, **certifies** the
returned scales and reports the error beside the i.i.d. and SPR baselines
(Table I of inid-noise-laplace-beats-gaussian).

Certificates (re-evaluated at the returned scales, after rounding):

* Gaussian: the exact profile of the i.n.i.d. Gaussian mechanism is the
  Gaussian profile with ``mu = sqrt(sum lambda_i^2 / sigma_i^2)`` (Lemma 3),
  evaluated by :func:`dpjax.accounting.gaussian.log_delta_gaussian_mu`;
  it must be ``<= delta (1 - MARGIN)``.
* Laplace, ``delta = 0``: ``sum lambda_i / b_i <= epsilon`` (proof of Theorem 5).
* Laplace, ``delta > 0``: the Corollary 6 bound ``1 - exp(epsilon - sum
  lambda_i / b_i) <= delta (1 - MARGIN)`` (a sufficient condition).

Both conditions use the box ``|d_i| <= lambda_i``: sufficient for any
query with that profile, necessary for decoupled coordinates (Remark 3).
The i.i.d. and SPR baselines use ``Delta_p = ||lambda||_p`` (Remark 1: an
upper bound on the true ``Delta_p``; exact for decoupled coordinates).

Error weights (Remark 4): the error is ``sum_i w_i E|T_i|^p``.  The paper's
weighted MSE ``sum alpha_i^2 E T_i^2`` is ``w = alpha^2``; its optimum is
Theorem 4/5 applied to the profile ``alpha * lambda`` *in the coordinates of
``alpha * f``*, i.e. ``sigma_i = sigma_i(alpha * lambda) / alpha_i`` -- not
literally "the same scales" (those would not even be private in general).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dpjax import _validate
from dpjax.accounting.gaussian import ERROR as GAUSSIAN_ERROR
from dpjax.accounting.gaussian import log_delta_gaussian_mu
from dpjax.accounting.laplace import ERROR as LAPLACE_ERROR
from dpjax.certificate import (
    MARGIN,
    certify_scale,
    log_target,
    reported_delta,
    require_certified,
)
from dpjax.errors import InfeasibleTargetError
from dpjax.inid import _kernels as k
from dpjax.inid.mu0 import mu0 as _mu0
from dpjax.inid.profiles import validate_profile, validate_weights

SOLVERS = ("closed-form", "jax", "cvxpy")


@dataclass(frozen=True)
class InidDesign:
    """A certified i.n.i.d. noise design and its baselines.

    Attributes:
      mechanism: ``"gaussian"`` (scales are standard deviations ``sigma_i``) or
        ``"laplace"`` (scales ``b_i``).
      profile: the sensitivity profile ``lambda``.
      scales: per-coordinate scales (0 where ``lambda_i = 0``).
      epsilon, delta: the target.
      error_power, weights: the error is ``sum_i w_i E|T_i|^p``.
      error, error_iid, error_spr: expected error of this design, of the i.i.d.
        mechanism (``Delta_2 = ||lambda||_2`` resp. ``Delta_1 = ||lambda||_1``) and of
        the SPR mechanism (Definition 5), same target and condition.
      reduction_db: ``10 log10(error_iid / error)``.
      iid_scale: the common i.i.d. scale; spr_scales: the SPR scales.
      mse: ``sum_i Var(T_i)`` (unweighted MSE) of this design.
      privacy_parameter: Gaussian ``mu = sqrt(sum lambda^2/sigma^2)`` (GDP, Lemma 3);
        Laplace ``sum lambda_i / b_i`` (maximal privacy loss).
      allocation: the privacy-resource split (Sec. IV-B): Gaussian
        ``eta_i = lambda_i^2 / (2 sigma_i^2)`` (zCDP, sums to ``mu^2 / 2``), Laplace
        ``epsilon_i = lambda_i / b_i`` (sums to the l1 budget).
      delta_at_params: the certificate (see module docstring), ``<= delta``.
      condition: what the certificate means.
      notes: assumptions made.
    """

    mechanism: str
    profile: np.ndarray
    scales: np.ndarray
    epsilon: float
    delta: float
    error_power: float
    weights: np.ndarray
    error: float
    error_iid: float
    error_spr: float
    reduction_db: float
    iid_scale: float
    spr_scales: np.ndarray
    mse: float
    privacy_parameter: float
    allocation: np.ndarray
    delta_at_params: float
    condition: str
    solver: str = "closed-form"
    solver_stats: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def noise(self):
        """The per-coordinate noise as a :mod:`dpjax.noise` family (vector of scales)."""
        from dpjax.noise import Gaussian, Laplace

        s = jnp.asarray(self.scales)
        return Gaussian(sigma=s) if self.mechanism == "gaussian" else Laplace(scale=s)

    def sample(self, key, shape: tuple[int, ...] = (), dtype=None):
        """Noise vectors of shape ``shape + (K,)`` (coordinate ``i`` with scale ``scales[i]``)."""
        from dpjax.noise._base import sample_dtype

        dtype = sample_dtype(dtype)
        s = jnp.asarray(self.scales, dtype)
        shape = tuple(shape) + (s.shape[-1],)
        base = jax.random.normal if self.mechanism == "gaussian" else jax.random.laplace
        return s * base(key, shape, dtype)

    def to_json(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "profile": self.profile.tolist(),
            "scales": self.scales.tolist(),
            "scale_name": "sigma" if self.mechanism == "gaussian" else "b",
            "error_power": self.error_power,
            "weights": self.weights.tolist(),
            "error": self.error,
            "error_iid": self.error_iid,
            "error_spr": self.error_spr,
            "reduction_db": self.reduction_db,
            "iid_scale": self.iid_scale,
            "spr_scales": self.spr_scales.tolist(),
            "mse": self.mse,
            "privacy_parameter": self.privacy_parameter,
            "allocation": self.allocation.tolist(),
            "delta_at_params": self.delta_at_params,
            "condition": self.condition,
            "solver": self.solver,
            "notes": list(self.notes),
        }


#: Relative rounding of the host sums below (a few roundings per term), added so that they are
#: upper bounds on the exact sums of the float scales.
_SUM_ROUNDING = 2.0**-50


def _mu_of(lam: np.ndarray, sigma: np.ndarray) -> float:
    """Host ``sqrt(sum lambda_i^2 / sigma_i^2)`` over ``lambda_i > 0`` (Lemma 3), rounded up."""
    pos = lam > 0
    return math.sqrt(math.fsum((lam[pos] / sigma[pos]) ** 2)) * (1.0 + _SUM_ROUNDING)


_gaussian_scales_jit = jax.jit(k.gaussian_scales)
_laplace_scales_jit = jax.jit(k.laplace_scales)


def _bucketed(fn, lam: np.ndarray, budget: float, p: float, w: np.ndarray) -> np.ndarray:
    """Run a jitted kernel on the profile zero-padded to a power-of-two length.

    Zero entries get scale 0 and contribute nothing, so padding is exact; it
    bounds the number of compilations to one per power of two.
    """
    n = lam.size
    size = max(8, 1 << (n - 1).bit_length())
    lam_p = np.zeros(size)
    lam_p[:n] = lam
    w_p = np.ones(size)
    w_p[:n] = w
    return np.asarray(fn(lam_p, budget, p, w_p))[:n]


def _gaussian_scales(lam, mu, p, w):
    return _bucketed(_gaussian_scales_jit, lam, mu, p, w)


def _laplace_scales(lam, budget, p, w):
    return _bucketed(_laplace_scales_jit, lam, budget, p, w)


def _error(scales: np.ndarray, moment: float, p: float, w: np.ndarray) -> float:
    """``m_p sum_i w_i s_i^p`` (host float64; :func:`dpjax.inid.expected_error` in JAX)."""
    return float(moment * math.fsum(w * scales**p))


def _loss_of(lam: np.ndarray, b: np.ndarray) -> float:
    """Host float64 ``sum lambda_i / b_i`` over ``lambda_i > 0``, rounded up."""
    pos = lam > 0
    return math.fsum(lam[pos] / b[pos]) * (1.0 + _SUM_ROUNDING)


def _final_certificate(name, log_delta_at, eps, dlt, error) -> float:
    """Re-evaluate the certificate at the returned (rescaled, rounded) scales: the reported
    delta (an upper bound) must be ``<= delta (1 - MARGIN)``'s reported value."""
    log_d = float(log_delta_at())
    ok = log_d <= float(log_target(dlt))
    delta_at = float(reported_delta(log_d, error))
    require_certified(name, ok and delta_at <= dlt, eps, dlt, delta_at)
    return delta_at


@jax.jit
def _certify_gaussian(epsilon, delta, mu_eff):
    """Least multiplier ``m >= 1`` (a few ulps) with ``delta_{mu_eff / m}(epsilon) <= target``."""
    return certify_scale(
        lambda m: log_delta_gaussian_mu(epsilon, mu_eff / m), jnp.asarray(1.0), log_target(delta)
    )


def _log_delta_laplace(epsilon, delta, loss):
    """Pure DP needs ``loss <= epsilon``; delta > 0 the Corollary 6 bound."""
    pure = jnp.where(loss <= epsilon, -jnp.inf, 0.0)
    return jnp.where(delta > 0, k.log_delta_laplace_corollary6(epsilon, loss), pure)


@jax.jit
def _certify_laplace(epsilon, delta, loss):
    """Same for Laplace, with the loss ``loss / m`` of the scales ``b m``."""
    return certify_scale(
        lambda m: _log_delta_laplace(epsilon, delta, loss / m), jnp.asarray(1.0), log_target(delta)
    )


def _check_common(profile, epsilon, delta, error_power, weights, solver):
    lam = validate_profile(profile)
    eps = float(_validate.epsilon(epsilon))
    dlt = float(_validate.delta(delta))
    p = float(_validate.positive(error_power, "error_power"))
    w = validate_weights(weights, lam.size)
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    return lam, eps, dlt, p, w


def _solve_programme(lam, w, p, q, budget, solver):
    """Scales from the :mod:`solvers` programme on the positive coordinates."""
    from solvers import PowerAllocation, get_backend, solve

    pos = lam > 0
    prob = PowerAllocation.create(
        lam[pos] ** q, budget=budget, objective_power=p, constraint_power=q, weights=w[pos]
    )
    if get_backend(solver).jittable:
        sol = jax.jit(lambda pr: solve(pr, solver))(prob)  # one compilation, not op-by-op
    else:
        sol = solve(prob, solver)
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


def gaussian_design(
    profile,
    epsilon: float,
    delta: float,
    *,
    error_power: float = 2.0,
    weights=None,
    solver: str = "closed-form",
) -> InidDesign:
    r"""Least-error i.n.i.d. Gaussian noise for ``profile`` at ``(epsilon, delta)``; certified.

    ``sigma_i`` from eq. (9) (Theorem 4 for ``error_power = 2``) with
    ``mu0`` of (P2) (:func:`dpjax.inid.mu0`), or from the convex programme
    (P3) through :mod:`solvers` (``solver="jax"`` or ``"cvxpy"``; a
    programme solution is scaled up onto the constraint before certifying).

    Example:
      >>> d = gaussian_design([3.0, 4.0], epsilon=0.5, delta=1e-6)
      >>> round(d.reduction_db, 4)  # 10 log10(K ||lambda||_2^2 / ||lambda||_1^2)
      0.0877
    """
    lam, eps, dlt, p, w = _check_common(profile, epsilon, delta, error_power, weights, solver)
    if dlt == 0:
        raise InfeasibleTargetError(
            "the Gaussian mechanism needs delta > 0 (use laplace for delta = 0)"
        )
    with jax.enable_x64(True):
        res = _mu0(eps, dlt)
        if int(res.status) != 0:
            raise InfeasibleTargetError(f"no Gaussian noise meets epsilon={eps!r}, delta={dlt!r}")
        mu = float(res.mu0)
        stats: dict = {}
        if solver == "closed-form":
            sigma = np.asarray(_gaussian_scales(lam, mu, p, w))
        else:
            sigma, stats = _solve_programme(lam, w, p, 2.0, mu * mu, solver)
            over = _mu_of(lam, sigma) / mu
            sigma = sigma * max(1.0, over)
        # Lemma 3: the design is the Gaussian mechanism with mu_eff = sqrt(sum lam^2/sigma^2);
        # mu_eff(sigma * m) = mu_eff(sigma) / m, so certification is a scalar problem.
        m, log_d, ok = _certify_gaussian(eps, dlt, _mu_of(lam, sigma))
        require_certified("inid gaussian", bool(ok), eps, dlt, float(jnp.exp(log_d)))
        sigma = sigma * (float(m) * (1.0 + _SUM_ROUNDING))
        delta_at = _final_certificate(
            "inid gaussian",
            lambda: log_delta_gaussian_mu(eps, _mu_of(lam, sigma)),
            eps, dlt, GAUSSIAN_ERROR,
        )
        moment = float(k.gaussian_abs_moment(p))
        delta2 = float(np.sqrt(np.sum(lam * lam)))
        sigma_iid = delta2 / mu
        kdim = lam.size
        spr = math.sqrt(kdim) * lam / mu
        error = _error(sigma, moment, p, w)
        error_iid = moment * sigma_iid**p * float(np.sum(w))
        error_spr = _error(spr, moment, p, w)
        mu_eff = _mu_of(lam, sigma)
        pos = lam > 0
        alloc = np.where(pos, 0.5 * (lam / np.where(pos, sigma, 1.0)) ** 2, 0.0)
    return InidDesign(
        mechanism="gaussian",
        profile=lam,
        scales=sigma,
        epsilon=eps,
        delta=dlt,
        error_power=p,
        weights=w,
        error=error,
        error_iid=error_iid,
        error_spr=error_spr,
        reduction_db=10.0 * math.log10(error_iid / error),
        iid_scale=sigma_iid,
        spr_scales=spr,
        mse=float(np.sum(sigma * sigma)),
        privacy_parameter=mu_eff,
        allocation=alloc,
        delta_at_params=delta_at,
        condition="exact for decoupled coordinates (Lemma 3, Remark 3); sufficient otherwise",
        solver=solver,
        solver_stats=stats,
        notes=(
            f"mu0 = {mu!r} (P2, Appendix B bisection)",
            "i.i.d./SPR baselines use Delta_2 = ||lambda||_2 (Remark 1: an upper bound)",
        ),
    )


def laplace_design(
    profile,
    epsilon: float,
    delta: float = 0.0,
    *,
    error_power: float = 2.0,
    weights=None,
    solver: str = "closed-form",
) -> InidDesign:
    r"""Least-error i.n.i.d. Laplace noise for ``profile``; certified.

    ``delta = 0``: eq. (12) (Theorem 5 for ``error_power = 2``) with budget
    ``epsilon``; ``delta > 0``: Corollary 6 (budget ``epsilon - log(1 - delta)``,
    a sufficient condition; the exact heterogeneous-composition profile needs
    the PLD engine).

    Example:
      >>> d = laplace_design([0.85, 0.15], epsilon=0.5, error_power=1)
      >>> round(d.error, 4), round(d.error_iid, 4)   # Table II
      (3.4283, 4.0)
    """
    lam, eps, dlt, p, w = _check_common(profile, epsilon, delta, error_power, weights, solver)
    # Corollary 6 at the certified level delta (1 - MARGIN) (pure DP: budget = epsilon)
    budget = eps - math.log1p(-dlt * (1.0 - MARGIN))
    if not budget > 0:
        raise InfeasibleTargetError("epsilon = delta = 0: no additive noise is private")
    with jax.enable_x64(True):
        stats: dict = {}
        if solver == "closed-form":
            b = np.asarray(_laplace_scales(lam, budget, p, w))
        else:
            b, stats = _solve_programme(lam, w, p, 1.0, budget, solver)
            b = b * max(1.0, _loss_of(lam, b) / budget)
        m, log_d, ok = _certify_laplace(eps, dlt, _loss_of(lam, b))
        require_certified("inid laplace", bool(ok), eps, dlt, float(jnp.exp(log_d)))
        b = b * (float(m) * (1.0 + _SUM_ROUNDING))
        delta_at = _final_certificate(
            "inid laplace",
            lambda: _log_delta_laplace(eps, dlt, _loss_of(lam, b)),
            eps, dlt, LAPLACE_ERROR,
        )
        moment = float(k.laplace_abs_moment(p))
        kdim = lam.size
        b_iid = float(np.sum(lam)) / budget
        spr = kdim * lam / budget
        error = _error(b, moment, p, w)
        error_iid = moment * b_iid**p * float(np.sum(w))
        error_spr = _error(spr, moment, p, w)
        loss = _loss_of(lam, b)
        pos = lam > 0
        alloc = np.where(pos, lam / np.where(pos, b, 1.0), 0.0)
    condition = (
        "pure epsilon-DP: sum lambda_i / b_i <= epsilon (Theorem 5)"
        if dlt == 0
        else "sufficient: Corollary 6 bound 1 - exp(epsilon - sum lambda_i / b_i) <= delta"
    )
    return InidDesign(
        mechanism="laplace",
        profile=lam,
        scales=b,
        epsilon=eps,
        delta=dlt,
        error_power=p,
        weights=w,
        error=error,
        error_iid=error_iid,
        error_spr=error_spr,
        reduction_db=10.0 * math.log10(error_iid / error),
        iid_scale=b_iid,
        spr_scales=spr,
        mse=float(np.sum(2.0 * b * b)),
        privacy_parameter=loss,
        allocation=alloc,
        delta_at_params=delta_at,
        condition=condition,
        solver=solver,
        solver_stats=stats,
        notes=("i.i.d./SPR baselines use Delta_1 = ||lambda||_1 (Remark 1: an upper bound)",),
    )


def design(mechanism: str, profile, epsilon, delta=0.0, **kw) -> InidDesign:
    """Dispatch to :func:`gaussian_design` or :func:`laplace_design`."""
    if mechanism == "gaussian":
        return gaussian_design(profile, epsilon, delta, **kw)
    if mechanism == "laplace":
        return laplace_design(profile, epsilon, delta, **kw)
    raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got {mechanism!r}")


def resource_shares(profile, mechanism: str, error_power: float = 2.0, weights=None) -> np.ndarray:
    r"""Optimal split of the privacy resource across coordinates (Sec. IV-B); sums to 1.

    Gaussian (zCDP ``eta = mu0^2 / 2``): ``eta_i / eta = lambda_i^{2p/(p+2)} w_i^{2/(p+2)} / S``
    (``lambda_i / ||lambda||_1`` for the MSE).  Laplace (``epsilon``):
    ``epsilon_i / epsilon = lambda_i^{p/(p+1)} w_i^{1/(p+1)} / S`` (``lambda_i^{2/3} /
    sum lambda_j^{2/3}`` for the MSE).  SPR splits equally (``1/K``).  A caller
    composing ``T`` releases can give release ``t`` a resource ``eta^(t)`` (zCDP
    adds up) and scale it with :func:`gaussian_scales_for_rho`.
    """
    lam = validate_profile(profile)
    w = validate_weights(weights, lam.size)
    p = float(_validate.positive(error_power, "error_power"))
    if mechanism == "gaussian":
        t = lam ** (2 * p / (p + 2)) * w ** (2 / (p + 2))
    elif mechanism == "laplace":
        t = lam ** (p / (p + 1)) * w ** (1 / (p + 1))
    else:
        raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got {mechanism!r}")
    return t / np.sum(t)


def gaussian_scales_for_rho(
    profile, rho: float, error_power: float = 2.0, weights=None
) -> np.ndarray:
    r"""Least-error i.n.i.d. Gaussian scales spending zCDP ``rho``.

    Constraint: ``sum lambda^2 / (2 sigma^2) <= rho``.

    The resource view of Sec. IV-B: ``mu = sqrt(2 rho)`` in eq. (9).  The
    returned scales satisfy the zCDP constraint (checked after rounding).
    """
    lam = validate_profile(profile)
    w = validate_weights(weights, lam.size)
    rho = float(_validate.positive(rho, "rho"))
    p = float(_validate.positive(error_power, "error_power"))
    with jax.enable_x64(True):
        mu = math.sqrt(2.0 * rho)
        sigma = np.asarray(_gaussian_scales(lam, mu, p, w))
        over = _mu_of(lam, sigma) / mu
    return sigma * max(1.0, over) * (1.0 + 2.0**-48)
