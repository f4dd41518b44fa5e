r"""The spherical KL programme (Theorem 4 of spherical-kl-optimal-mechanisms), monotone, as data.

Variables: the shell masses ``mu_i = p_i v_i`` of the free shells ``i = 0..N``
(``p`` the density on shell ``i``, ``v_i`` its volume); past ``N`` the density is
geometric, ``p_i = p_N r^(i-N)``.  With the row-normalised kernel
``K_ij = A_m gamma_ij / v_i`` (eq. 23; banded, ``|i - j| <= n``) the objective
(eq. 28) is

.. math::
   f(\mu) = \sum_{i, j \ge 0} K_{ij}\, \mu_i \log\frac{p_i}{p_j}
          = D(P \,\|\, T_{e_1} P),

summed explicitly over rows ``i < M`` (the caller sizes ``M`` so that the
tail mass beyond it is negligible: what is left out is at most that mass
times ``n |log r|``).  Constraints (eqs. 29-30, dimensionless):

* mass: ``h(mu) = sum_{i<N} mu_i + mu_N (1 + T_v) - 1 = 0``,
  ``T_v = sum_{t>=1} r^t v_{N+t} / v_N`` (the geometric tail folded exactly);
* cost: ``g_0(mu) = (sum_{i<N} mu_i c_i / v_i + mu_N (c_N + T_c) / v_N) / C - 1 <= 0``,
  ``T_c = sum_{t>=1} r^t c_{N+t}``;
* pair constraints ``p_a <= e^{l} p_b``, written ``g_k = (p_a - e^l p_b) / (e^l p^ref_b) <= 0``:
  monotonicity ``p_{k+1} <= p_k`` (Definition 2 requires it; Theorem 4 as printed
  omits it, and without it ``f`` is not the worst-case KL of Lemma 1 /
  Proposition 1), and optionally the single-step loss cap
  ``log p_i - log p_{i+n} <= L_max`` (geometric tail substituted for ``i + n > N``).

The KKT residual is the base class's, in relative coordinates
(``variable_scale = |mu|``).  The problem also provides what its solvers
need: the hooks of :class:`solvers.BarrierNewton` (its default JAX solver:
derivatives in relative coordinates through a merged dense kernel, the two
linear rows, the pair slacks, the monotone chain) and a cvxpy model for the
``cvxpy`` reference (:mod:`solvers._spherical_kl_cvxpy`).  Timings of both:
``bench/bench_spherical.py``.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from solvers._problem import ConvexProblem
from solvers._spherical_kl_data import NO_CAP, merged_kernel, pair_table, reference_profile


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class SphericalKL(ConvexProblem):
    r"""The monotone spherical KL programme (module docstring); build with :meth:`create`.

    Attributes:
      log_kernel: ``(M, 2n+1)`` ``log K_ij``, ``j = i + d - n`` (``-inf`` off the band).
      log_v: ``(M,)`` ``log v_i`` (eq. 26).
      mass_coef: ``(N+1,)`` mass row (tail folded into node ``N``).
      cost_coef: ``(N+1,)`` cost row, already divided by the budget.
      log_r: ``log r``.
      pair_a, pair_b, pair_logc: pair constraints ``p_a <= e^l p_b``; the first ``N``
        are the monotone chain ``p_{k+1} <= p_k``.
      pair_weight: barrier weights (reference mass of shell ``b``; 0 for inactive rows).
      log_p_ref: ``(N+1,)`` feasible reference profile (log density).
      merged_kernel: ``(N+1, N+1)`` off-diagonal kernel with the tail merged into node ``N``.
      merged_kernel_t: its transpose (kept: a transpose per Newton step costs more).
      merged_const: ``(N+1,)`` row losses of the reference profile (tail offsets included).
      n: shells per unit radius (static).
      N: last free shell (static).
    """

    log_kernel: Array
    log_v: Array
    mass_coef: Array
    cost_coef: Array
    log_r: Array
    pair_a: Array
    pair_b: Array
    pair_logc: Array
    pair_weight: Array
    log_p_ref: Array
    merged_kernel: Array
    merged_kernel_t: Array
    merged_const: Array
    n: int = dataclasses.field(metadata={"static": True})
    N: int = dataclasses.field(metadata={"static": True})

    name = "spherical-kl"

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, log_w, log_v, log_c, N: int, r: float, budget: float,
               log_tail_mass: float, log_tail_cost: float, loss_cap: float | None = None):
        r"""Build the programme from banded log cell volumes (host arrays).

        ``K_ij = w_ij / v_i`` with ``w_ij = A_m gamma_ij`` (eq. 23); mass and
        cost rows from eqs. (29)-(30) with the geometric tail folded into
        node ``N``: ``mass_N = 1 + T_v / v_N``, ``cost_N = (c_N + T_c) / (v_N C)``.

        Args:
          log_w: ``(M, 2n+1)`` ``log(A_m gamma_ij)``, ``j = i + d - n``.
          log_v: ``(M,)`` ``log v_i`` (eq. 26).
          log_c: ``(M,)`` ``log c_i`` (eq. 24).
          N: last free shell.
          r: tail ratio, ``0 < r < 1``.
          budget: the cost budget ``C``.
          log_tail_mass: ``log sum_{t>=1} r^t v_{N+t}``.
          log_tail_cost: ``log sum_{t>=1} r^t c_{N+t}``.
          loss_cap: optional ``L_max`` for ``log p_i - log p_{i+n}``.

        Raises:
          ValueError: bad sizes or ratio, an infeasible loss cap, or a budget the
            grid cannot reach.
        """
        log_w = np.asarray(log_w, np.float64)
        log_v = np.asarray(log_v, np.float64)
        log_c = np.asarray(log_c, np.float64)
        M, width = log_w.shape
        n = (width - 1) // 2
        if not (0 < r < 1) or budget <= 0 or N < 1 or M <= N + 1:
            raise ValueError("need 0 < r < 1, budget > 0, N >= 1 and more than N + 1 rows")
        log_r = math.log(r)
        lk = log_w - log_v[:, None]
        # cells whose partner j lies beyond the last row are not summed: make them -inf
        jj = np.arange(M)[:, None] + np.arange(width)[None, :] - n
        lk = np.where((jj >= 0) & (jj < M), lk, -np.inf)
        mass = np.ones(N + 1)
        mass[N] = 1.0 + math.exp(log_tail_mass - log_v[N])
        cbar = np.exp(log_c[: N + 1] - log_v[: N + 1])
        cbar[N] = math.exp(np.logaddexp(log_c[N], log_tail_cost) - log_v[N])
        cost = cbar / budget
        a, b, lc, cap_slope = pair_table(n, N, log_r, loss_cap)
        shell_cbar = np.exp(log_c[: N + 1] - log_v[: N + 1])
        log_p_ref = reference_profile(shell_cbar, cbar, mass, log_v[: N + 1], budget, cap_slope)
        mu_ref = np.exp(log_p_ref + log_v[: N + 1])
        weight = mu_ref[b] * mass[b] * (lc < NO_CAP / 2)
        f = jnp.asarray
        kt, const = merged_kernel(lk, log_v, N, log_r, log_p_ref)
        return cls(f(lk), f(log_v), f(mass), f(cost), f(log_r), f(a), f(b), f(lc), f(weight),
                   f(log_p_ref), f(kt), f(np.ascontiguousarray(kt.T)), f(const), n, N)

    @property
    def num_variables(self) -> int:
        """``N + 1`` free shell masses."""
        return self.N + 1

    @property
    def rows(self) -> int:
        """``M``, the rows of the banded kernel summed explicitly."""
        return int(self.log_kernel.shape[0])

    def reference(self) -> Array:
        """Shell masses of the reference profile (feasible, strictly monotone): the start."""
        return jnp.exp(self.log_p_ref + self.log_v[: self.N + 1])

    def default_solver(self):
        """The default JAX solver (``"jax"``): :class:`solvers.BarrierNewton`."""
        from solvers.barrier_newton import BarrierNewton

        return BarrierNewton()

    # ------------------------------------------------------------------ objective, constraints
    def _extended_log_p(self, mu):
        lp = jnp.log(mu) - self.log_v[: self.N + 1]
        t = jnp.arange(1, self.rows - self.N, dtype=mu.dtype)
        return jnp.concatenate([lp, lp[self.N] + t * self.log_r])

    def flows_and_losses(self, mu: Array) -> tuple[Array, Array, Array]:
        r"""Cell flows ``F_ij = K_ij mu_i`` and losses ``log(p_i / p_j)`` on the band (rows < M).

        The summands of eq. (28): ``f = sum_ij F_ij log(p_i / p_j)``.

        Args:
          mu: ``(N+1,)`` shell masses.

        Returns:
          ``(flows, losses, ok)``, each ``(M, 2n+1)``; ``ok`` marks cells on the band.
        """
        lp = self._extended_log_p(mu)
        lmu = lp + self.log_v
        M, width = self.log_kernel.shape
        i = jnp.arange(M)[:, None]
        j = i + jnp.arange(width)[None, :] - self.n
        ok = (j >= 0) & (j < M) & jnp.isfinite(self.log_kernel)
        j = jnp.clip(j, 0, M - 1)
        lf = jnp.where(ok, self.log_kernel + lmu[:, None], -jnp.inf)
        loss = jnp.where(ok, lp[i] - lp[j], 0.0)
        return jnp.exp(lf), loss, ok

    def objective(self, x: Array) -> Array:
        r"""``f(mu) = sum_{i<M} sum_j F_ij log(p_i / p_j)`` (eq. 28), one pass over the band.

        Args:
          x: ``(N+1,)`` shell masses.
        """
        lp = self._extended_log_p(x)
        M, width = self.log_kernel.shape
        flows = jnp.exp(self.log_kernel + (lp + self.log_v)[:, None])  # 0 off the band
        lp_pad = jnp.pad(lp, (self.n, self.n))
        idx = jnp.arange(M)[:, None] + jnp.arange(width)[None, :]  # j + n
        return jnp.sum(jnp.sum(flows * (lp[:, None] - lp_pad[idx]), axis=1))

    def equality_constraints(self, x: Array) -> Array:
        """``[mass . mu - 1]`` (eq. 29, tail folded).

        Args:
          x: ``(N+1,)`` shell masses.
        """
        return jnp.reshape(jnp.dot(self.mass_coef, x) - 1.0, (1,))

    def inequality_constraints(self, x: Array) -> Array:
        """``[cost . mu - 1, g_pairs]``: cost (eq. 30) and ``(p_a - e^l p_b) / (e^l p^ref_b)``.

        Args:
          x: ``(N+1,)`` shell masses.
        """
        lp = jnp.log(x) - self.log_v[: self.N + 1]
        ref = self.log_p_ref[self.pair_b]
        pairs = (jnp.exp(lp[self.pair_a] - self.pair_logc - ref)
                 - jnp.exp(lp[self.pair_b] - ref))
        return jnp.concatenate([jnp.reshape(jnp.dot(self.cost_coef, x) - 1.0, (1,)), pairs])

    def variable_scale(self, x: Array) -> Array:
        """Relative coordinates: stationarity measured as ``mu * grad``.

        Args:
          x: ``(N+1,)`` shell masses.
        """
        return jnp.abs(x)

    # ------------------------------------------------------------------ hooks of BarrierNewton
    def _merged_row_losses(self, mu):
        """Node losses ``mu_a (sum_b Kt_ab (y_a - y_b) + c_a)``, out-flows ``mu_a sum_b Kt_ab``."""
        y = jnp.log(mu) - self.log_v[: self.N + 1] - self.log_p_ref
        row = jnp.sum(self.merged_kernel, axis=1)
        return mu * (row * y - self.merged_kernel @ y + self.merged_const), mu * row

    def fast_objective(self, x: Array) -> Array:
        r"""``f`` through the merged kernel: the same sum as :meth:`objective`, without gathers.

        ``f = sum_a mu_a (sum_b Kt_ab (y_a - y_b) + c_a)``, ``y = lp - lp_ref``
        (:func:`solvers._spherical_kl_data.merged_kernel`).

        Args:
          x: ``(N+1,)`` shell masses.
        """
        return jnp.sum(self._merged_row_losses(x)[0])

    def relative_derivatives(self, x: Array) -> tuple[Array, Array, Array]:
        r"""``f``, its gradient and Hessian in relative coordinates ``mu <- mu (1 + delta)``.

        With ``F_ij = K_ij mu_i`` and the tail rows merged into node ``N`` (their
        masses are fixed multiples of ``mu_N``), the off-diagonal merged flows are
        ``W_ab = mu_a Kt_ab``; then

        .. math:: \mu_a \partial_a f = \sum_{i \to a} F_{ij} \log\frac{p_i}{p_j}
                  + \sum_b W_{ab} - \sum_b W_{ba}, \qquad
                  \nabla^2 = \mathrm{Laplacian}(W + W^\top)

        -- dense ``(N+1)^2`` elementwise work and two matrix-vector products, no
        scatter (a scatter-add of the ``M (2n+1)`` cells is much slower on CPU:
        ``bench/bench_spherical.py``).

        Args:
          x: ``(N+1,)`` shell masses.

        Returns:
          ``(f, grad, hess)``: scalar, ``(N+1,)``, ``(N+1, N+1)``.
        """
        row_fl, out_w = self._merged_row_losses(x)
        f = jnp.sum(row_fl)
        in_w = self.merged_kernel_t @ x
        grad = row_fl + out_w - in_w
        sym = x[:, None] * self.merged_kernel + self.merged_kernel_t * x[None, :]
        eye = jnp.eye(self.N + 1, dtype=bool)
        hess = jnp.where(eye, (out_w + in_w)[:, None], -sym)
        return f, grad, hess

    def linear_rows(self, x: Array) -> Array:
        r"""The mass and cost rows in relative coordinates, ``[mu * mass; mu * cost]``.

        Both are held as equalities by the barrier Newton method (the cost is
        active at the optimum: the KL falls with the budget).

        Args:
          x: ``(N+1,)`` shell masses.
        """
        return jnp.stack([x * self.mass_coef, x * self.cost_coef])

    def pair_slacks(self, x: Array) -> tuple[Array, Array, Array, Array]:
        r"""Pair terms ``A = p_a / (e^l p^ref_b)``, ``B = p_b / p^ref_b``, slack ``s = B - A``.

        ``g_k = A - B`` and, in relative coordinates, ``dg = A delta_a - B delta_b``;
        the relative slack ``1 - e^l ... = -expm1(log p_a - l - log p_b)`` is returned too.

        Args:
          x: ``(N+1,)`` shell masses.

        Returns:
          ``(A, B, s, relative_slack)``, one entry per pair.
        """
        lp = jnp.log(x) - self.log_v[: self.N + 1]
        lpa = lp[self.pair_a] - self.pair_logc
        lpb = lp[self.pair_b]
        ref = self.log_p_ref[self.pair_b]
        big_b = jnp.exp(lpb - ref)
        big_a = jnp.exp(lpa - ref)
        s = -big_b * jnp.expm1(lpa - lpb)
        return big_a, big_b, s, -jnp.expm1(lpa - lpb)

    def chain_log_density(self, x: Array) -> tuple[Array, Array]:
        r"""``(log p, log p_ref)`` on the free shells: the monotone chain ``p_{k+1} <= p_k``.

        Its pairs are the first ``N`` pair constraints, normalised by ``p^ref_k``.

        Args:
          x: ``(N+1,)`` shell masses.
        """
        return jnp.log(x) - self.log_v[: self.N + 1], self.log_p_ref

    # ------------------------------------------------------------------ cvxpy reference
    def cvxpy_model(self, cp):
        """The cvxpy model (:func:`solvers._spherical_kl_cvxpy.spherical_kl_cvxpy_model`).

        Args:
          cp: the lazily imported ``cvxpy`` module.
        """
        from solvers._spherical_kl_cvxpy import spherical_kl_cvxpy_model

        return spherical_kl_cvxpy_model(self, cp)


__all__ = ["SphericalKL"]
