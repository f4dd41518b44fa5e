r"""Separable power allocation: the convex programme behind per-coordinate noise scales.

.. math::
   \min_{x > 0} \; \sum_i w_i x_i^{p}
   \quad \text{s.t.} \quad \sum_i a_i x_i^{-q} \le c,
   \qquad a_i > 0,\; w_i > 0,\; c > 0,\; p > 0,\; q > 0.

Both sides are convex in ``x > 0``.  The constraint is active at the
optimum and the KKT conditions ``p w_i x_i^{p-1} = \nu q a_i x_i^{-q-1}``
give the closed form (Hölder's equality case)

.. math::
   x_i = \left(\frac{a_i}{w_i}\right)^{\frac{1}{p+q}} \left(\frac{S}{c}\right)^{\frac1q},
   \quad S = \sum_j a_j^{\frac{p}{p+q}} w_j^{\frac{q}{p+q}},
   \quad \text{value} = S^{\frac{p+q}{q}} c^{-\frac pq},

and the multiplier of the normalised constraint ``sum(a x^-q)/c - 1 <= 0`` is
``(p / q) * value``.  (In inid-noise-laplace-beats-gaussian this is problem
(P3) with ``x = sigma, a = lambda^2, q = 2, c = mu0^2`` -- eq. (9) -- and (P4)
with ``x = b, a = lambda, q = 1, c = epsilon`` -- eq. (12); weights give
Remark 4.  Nothing here knows about privacy.)

Solvers: the default JAX solver is :class:`solvers.ClosedForm`, which
evaluates the closed form in log space (hook :meth:`PowerAllocation.closed_form`;
jittable, differentiable, exact to rounding); ``cvxpy`` is the reference: the
programme in log coordinates with exponential cones
(:meth:`PowerAllocation.cvxpy_model`), Clarabel, then a Newton polish of the
KKT system from the IPM point (:class:`solvers.KKTPolish`).

Accuracy of the reference (measured against the closed form, i.e. eqs. (9) and
(12) of inid-noise-laplace-beats-gaussian, ``p = 1, 2``, ``q = 1, 2``, with and
without weights, K = 1..1000; ``bench/bench_solvers_allocation.py``):

* The IPM point alone pins the optimal *value* to ~1e-12 but a coordinate
  whose share of the objective is ``s`` only to about ``gap / (cones * s)``
  relative (every cone carries the same barrier parameter at termination,
  and the central path is invariant under rescaling, so no reformulation
  or Clarabel setting removes it; tighter tolerances only make Clarabel
  stall).  Measured at K = 1000: up to 2.5e-4 (log-uniform sensitivities
  1e-6..1), 6e-4 (quadratic profile), 2.4e-6 even for the uniform profile
  (Gaussian l1: Clarabel stalls), and O(1) for the exponential profile from
  K ~ 40.  The residual says so: it folds in per-coordinate stationarity
  (:meth:`PowerAllocation.residual`), about ``(p + q) / 2`` times the
  worst relative error of the scales.
* After the polish every coordinate agrees to <= 1e-14 relative on every
  profile family of the paper (uniform, linear, quadratic, one-hot) and on
  random uniform / lognormal / log-uniform 1e-6..1 profiles up to K = 1000,
  and on the exponential profile ``lambda_i ~ e^i`` up to K = 200 for every
  allocation (spans e^-199; the IPM point is off by orders of magnitude and the
  damped Newton steps walk it back by ~1/p or 1/q in log per step, up to
  100 steps) and up to K = 355 when p = q.  From K ~ 300 with p != q the
  IPM point is too far (off by 1e37, or not finite) and the result is
  ``INACCURATE`` / ``FAILED``.  Coefficients must be normal
  float64 numbers (``>= 2.2e-308``; XLA on CPU flushes subnormals to zero, so
  even the ``jax`` closed form would see ``log a = -inf``):
  :meth:`PowerAllocation.create` refuses zeros and subnormals (dropping such a
  coordinate would leave it without noise).  For the l2-normalised
  exponential profile that is K <= 355 for q = 2 (``lambda^2``) and K <= 708
  for q = 1 (l1-normalised); the closed forms in :mod:`dpjax.inid` work on
  ``log lambda`` and are not affected.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import logsumexp

from solvers._problem import ConvexProblem
from solvers._solution import Residual


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class PowerAllocation(ConvexProblem):
    r"""``min sum w x^p  s.t.  sum a x^-q <= c`` (module docstring).

    Attributes:
      coefficients: ``a`` (1-D, all ``> 0``).
      weights: ``w`` (same shape, all ``> 0``).
      budget: ``c > 0``.
      objective_power: ``p > 0``.
      constraint_power: ``q > 0``.
    """

    coefficients: Array
    weights: Array
    budget: Array
    objective_power: Array
    constraint_power: Array

    name = "power-allocation"

    @classmethod
    def create(cls, coefficients, budget, objective_power=2.0, constraint_power=2.0, weights=None):
        r"""Build ``min sum w x^p s.t. sum a x^-q <= c`` from array-likes (float64 where x64 is on).

        Args:
          coefficients: ``a``, 1-D, every entry a normal positive float64 (for the
            Gaussian allocation of inid-noise-laplace-beats-gaussian, eq. (9):
            ``lambda^2``; for the Laplace one, eq. (12): ``lambda``).
          budget: ``c > 0`` (``mu0^2``, resp. ``epsilon``).
          objective_power: ``p > 0`` (the error power).
          constraint_power: ``q > 0`` (2 Gaussian, 1 Laplace).
          weights: ``w`` (same shape, ``> 0``; default ones; Remark 4).

        Raises:
          ValueError: bad shapes, non-positive, non-finite or subnormal values.
        """
        a = jnp.asarray(coefficients, dtype=float)
        w = jnp.ones_like(a) if weights is None else jnp.asarray(weights, dtype=float)
        a_np, w_np = np.asarray(a), np.asarray(w)
        if a_np.ndim != 1 or a_np.size == 0:
            raise ValueError(f"coefficients must be a non-empty 1-D array, got shape {a_np.shape}")
        if w_np.shape != a_np.shape:
            raise ValueError(f"weights shape {w_np.shape} != coefficients shape {a_np.shape}")
        tiny = np.finfo(np.float64).tiny
        for name, v in (("coefficients", a_np), ("weights", w_np)):
            if not np.all(np.isfinite(v)) or np.any(v <= 0):
                hint = (" (a coefficient is exactly 0: an underflow such as lambda**2 for"
                        " lambda < 1.5e-154 cannot be stated in float64; drop only true zeros)"
                        if np.any(v == 0) else "")
                raise ValueError(f"{name} must be finite and > 0{hint}")
            if np.any(v < tiny):  # XLA on CPU flushes subnormals to zero: log(a) = -inf
                raise ValueError(f"{name} must be normal float64 numbers (>= {tiny:.4g}); "
                                 "subnormal values underflow (e.g. lambda**2 for lambda < "
                                 "1.5e-154)")
        for name, v in (("budget", budget), ("objective_power", objective_power),
                        ("constraint_power", constraint_power)):
            if not np.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be finite and > 0, got {v!r}")
        as_f = lambda v: jnp.asarray(v, dtype=a.dtype)
        return cls(a, w, as_f(budget), as_f(objective_power), as_f(constraint_power))

    @property
    def num_variables(self) -> int:
        """``K``, the number of coordinates."""
        return int(self.coefficients.shape[0])

    def default_solver(self):
        """The default JAX solver (``"jax"``): :class:`solvers.ClosedForm`."""
        from solvers.closed_form import ClosedForm

        return ClosedForm()

    # --- data -> objective, constraints ---------------------------------------------------
    def objective(self, x: Array) -> Array:
        r"""``sum_i w_i x_i^p``.

        Args:
          x: ``(K,)`` positive scales.
        """
        return jnp.sum(self.weights * x**self.objective_power)

    def inequality_constraints(self, x: Array) -> Array:
        r"""``[sum(a x^-q) / c - 1]`` (dimensionless).

        Args:
          x: ``(K,)`` positive scales.
        """
        return jnp.reshape(
            jnp.sum(self.coefficients * x ** (-self.constraint_power)) / self.budget - 1.0, (1,)
        )

    def variable_scale(self, x: Array) -> Array:
        """Relative coordinates: stationarity measured as ``x * grad``.

        Args:
          x: ``(K,)`` positive scales.
        """
        return jnp.abs(x)

    #: the cvxpy reference Newton-polishes the IPM point (:class:`solvers.KKTPolish`)
    cvxpy_polish = True

    def residual(self, x: Array, lam: Array | None = None, nu: Array | None = None) -> Residual:
        """The shared KKT residual with per-coordinate stationarity folded in.

        ``stationarity = max(global, componentwise)``
        (:meth:`ConvexProblem.componentwise_stationarity`): the scales are
        promised to relative accuracy coordinate by coordinate, and the global
        measure alone lets a coordinate with a 1e-12 share of the objective
        be off by O(1).  For this problem the componentwise value at ``x`` is
        ``|tanh((p + q) d_i / 2)|`` for a relative displacement ``e^{d_i}``
        of ``x_i`` against the multiplier, i.e. about ``(p + q) / 2`` times
        the relative error of ``x_i``.

        Args:
          x: ``(K,)`` scales.
          lam: ``(1,)`` multiplier of the normalised constraint (``None``: 0).
          nu: equality multipliers (none; ``None``).
        """
        base = super().residual(x, lam, nu)
        comp = self.componentwise_stationarity(x, lam, nu)
        return Residual(jnp.maximum(base.stationarity, comp), base.primal, base.dual,
                        base.complementarity, jnp.maximum(base.total, comp))

    # --- hooks of the solvers -----------------------------------------------------------
    def closed_form(self) -> tuple[Array, Array, Array]:
        r"""``(x, value, multiplier)`` of the closed form (module docstring), in log space.

        ``x_i = (a_i / w_i)^(1/(p+q)) (S / c)^(1/q)``, ``value = S^((p+q)/q) c^(-p/q)``,
        ``multiplier = (p / q) value`` (Hölder's equality case; eqs. (9), (12) of
        inid-noise-laplace-beats-gaussian).  The hook of :class:`solvers.ClosedForm`.
        """
        p, q = self.objective_power, self.constraint_power
        log_a, log_w = jnp.log(self.coefficients), jnp.log(self.weights)
        log_s = logsumexp((p * log_a + q * log_w) / (p + q))
        log_c = jnp.log(self.budget)
        x = jnp.exp((log_a - log_w) / (p + q) + (log_s - log_c) / q)
        value = jnp.exp((p + q) / q * log_s - p / q * log_c)
        return x, value, p / q * value

    def cvxpy_model(self, cp):
        r"""The programme in log coordinates ``x = s * exp(z)`` (exponential cones).

        ``s_i = (K a_i / c)^{1/q}`` gives every coordinate the same share of
        the constraint at ``z = 0`` and the objective is divided by
        ``U = sum w s^p``:

        .. math:: \min_z \sum_i u_i e^{p z_i} \quad \text{s.t.} \quad
                  \frac1K \sum_i e^{-q z_i} \le 1, \qquad u = w s^p / U,

        so every coefficient enters as a logarithm (``log u_i``, O(10) even
        when ``a`` spans 1e-300..1) and ``z`` is O(1): relative accuracy in
        ``x`` is absolute accuracy in ``z``.  Power cones in ``x`` (the
        previous form) stall Clarabel once ``a`` spans ~1e6 (``x`` off by 90%
        at K = 1000, quadratic profile).  The multiplier of the normalised
        constraint maps back as ``lambda = U * dual``.

        Args:
          cp: the lazily imported ``cvxpy`` module.
        """
        from solvers.cvxpy_reference import CvxpyModel

        log_a = np.log(np.asarray(self.coefficients, dtype=np.float64))
        log_w = np.log(np.asarray(self.weights, dtype=np.float64))
        c, p, q = (float(v) for v in (self.budget, self.objective_power, self.constraint_power))
        k = log_a.size
        log_s = (np.log(k) + log_a - np.log(c)) / q
        log_u_raw = log_w + p * log_s
        log_scale = float(np.logaddexp.reduce(log_u_raw))
        z = cp.Variable(k)
        constraint = cp.sum(cp.exp(-q * z - np.log(k))) <= 1.0
        objective = cp.Minimize(cp.sum(cp.exp(log_u_raw - log_scale + p * z)))
        problem = cp.Problem(objective, [constraint])

        def recover():
            dual = float(np.asarray(constraint.dual_value).reshape(()))
            lam = float(np.exp(log_scale)) * dual
            return np.exp(log_s + np.asarray(z.value)), np.array([lam]), np.zeros(0)

        return CvxpyModel(problem, recover)
