r"""Primal-dual barrier Newton with an active-set polish, for monotone ratio-constrained programmes.

The default JAX solver of :class:`solvers.SphericalKL` (Theorem 4 of
spherical-kl-optimal-mechanisms with monotonicity, Definition 2), usable on
any problem that provides its hooks (:data:`BarrierNewton.requires`):

* ``reference()`` -- a strictly feasible start with positive entries;
* ``fast_objective(x)`` and ``relative_derivatives(x) -> (f, grad, hess)`` --
  the objective and its derivatives in relative coordinates ``x <- x (1 + delta)``;
* ``linear_rows(x)`` -- the two linear constraints (held as equalities) as
  rows in relative coordinates, a ``(2, n)`` array;
* ``pair_a``, ``pair_b``, ``pair_weight`` and ``pair_slacks(x) -> (A, B, s,
  relative slack)`` -- ratio constraints ``g_k = A_k - B_k <= 0`` with
  ``dg = A delta_a - B delta_b`` and barrier weights ``w_k``;
* ``chain_log_density(x) -> (lp, lp_ref)`` -- the first ``n - 1`` pairs form the
  chain ``p_{k+1} <= p_k`` of these log densities (merged by the polish).

Barrier phase (:class:`BarrierState`; ``init`` / ``step`` / ``terminate``):
minimise the merit

.. math:: \phi_t(x) = f(x) - t \sum_k w_k \log s_k(x)

on the two linear rows, feasible and in relative coordinates.  The pair
constraints enter through a log-barrier weighted by the reference mass of
shell ``b`` (an unweighted barrier would dominate the massless shells near
the origin) with explicit multipliers ``lambda`` (primal-dual: barrier Hessian
``lambda / s``, not ``t w / s^2``, so a cut in ``t`` costs one or two steps
instead of the primal method's ~5 with step ~0.1); the two linear constraints
through the KKT system (:func:`solvers._saddle.saddle_solve`, dense Cholesky
after symmetric equilibration), which keeps every iterate exactly feasible;
fraction-to-boundary and Armijo backtracking on ``phi_t`` (skipped once the
decrement is at the merit's round-off level).  ``t`` starts at
``t_initial f(x_0)`` (large: the first stage is then centred in 3 steps
instead of ~25 steps of fraction-to-boundary-limited crawling along the
tail-junction plateau) and falls superlinearly,

.. math:: t \leftarrow \max\big(t_{final},\ \min(0.2\, t, t^{1.5})\big)
          \quad \text{(relative to } f(x_0)),

once the decrement is below ``t / 100``, or after ``stage_steps`` Newton steps at
one ``t`` (inexact centring: with an active loss cap the innermost, near-massless
shells carry barrier weights at the round-off level of their slacks, the
decrement stalls near ``1e-7 |f|`` and a stage would never end).

Polish (:class:`PolishState`): the monotone pairs that are active (relative
slack ``< active_tol``) are merged and Newton steps taken on the merged
programme until the step is at round-off level (quadratic: 3 steps from
~1e-3); the chain multipliers then follow exactly by a recursion along each
plateau (the barrier's ``1/t`` stiffness otherwise limits stationarity to
~1e-4).  A merged pair whose multiplier then comes out negative (below
``-merit_tol |f(x_0)|``) was merged only because the barrier left its slack
small: it is released (never merged again) and the polish repeats from the
polished point, at most ``release_rounds`` times (an active-set step; without
it the loss-capped family stopped at a dual residual of ~1e-5).  Jittable
(``lax.while_loop``), vmappable, float64, any device.
Timings against cvxpy: ``bench/bench_spherical.py``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import Array

from solvers._pair_groups import floored_slacks as _slacks
from solvers._pair_groups import pair_groups, pair_multipliers
from solvers._saddle import saddle_solve
from solvers._solution import RawResult, Status
from solvers._solver import IterativeSolver


class BarrierState(NamedTuple):
    """State of the barrier phase of :class:`BarrierNewton`.

    Attributes:
      x: current point (strictly feasible, positive).
      barrier: current barrier weight ``t`` (absolute).
      iterations: Newton steps taken.
      decrement: Newton decrement ``-g . delta`` of the last step.
      done: ``True`` once the last stage (``t = t_final``) is centred.
      nu: ``(2,)`` multipliers of the linear rows at the last step.
      lam: multipliers of the pair constraints.
      scale: ``|f(x_0)|``, the unit of ``t`` and of the round-off tests.
      stage_steps: Newton steps taken at the current ``t``.
    """

    x: Array
    barrier: Array
    iterations: Array
    decrement: Array
    done: Array
    nu: Array
    lam: Array
    scale: Array
    stage_steps: Array


class MergedNewton(NamedTuple):
    """One Newton solve of the polish, on the programme with the active chain pairs merged.

    Attributes:
      step: relative step ``delta`` (equal within each merged group).
      nu: ``(2,)`` multipliers of the linear rows.
      grad: gradient of ``f`` in relative coordinates.
      rows: the linear rows in relative coordinates.
      log_density: chain log densities ``lp``.
      active: ``(n - 1,)`` chain pairs merged (relative slack ``< active_tol``).
      pair_active: every pair held as an equality (the chain pairs first, then the
        others, e.g. an active loss cap), each merging its two variables.
    """

    step: Array
    nu: Array
    grad: Array
    rows: Array
    log_density: Array
    active: Array
    pair_active: Array


class PolishState(NamedTuple):
    """State of the active-set polish of :class:`BarrierNewton`.

    Attributes:
      x: current point.
      count: polish steps taken.
      newton: the last :class:`MergedNewton` solve (at ``x`` once stopped).
      stop: ``True`` once the step is at round-off level, a step failed, or the budget is spent.
    """

    x: Array
    count: Array
    newton: MergedNewton
    stop: Array


def _max_step(x, dx):
    """Largest ``a`` with ``x + a dx >= 0`` (``inf`` if ``dx >= 0``)."""
    return jnp.min(jnp.where(dx < 0, x / jnp.where(dx < 0, -dx, 1.0), jnp.inf))


@dataclasses.dataclass(frozen=True)
class BarrierNewton(IterativeSolver):
    r"""Primal-dual barrier Newton + active-set polish (module docstring).

    Args:
      t_final: last barrier weight, relative to ``|f(x_0)|``.
      max_iterations: Newton steps of the barrier phase.
      step_tol: a stage (and the last one) ends once ``max |delta| <= step_tol``, or
        the decrement is below ``t / 100`` (not the last stage) or ``merit_tol |f(x_0)|``.
      merit_tol: relative round-off level of the merit: below it no backtracking.
      active_tol: relative slack below which a chain pair is merged in the polish.
      polish_steps: at most this many polish Newton steps.
      t_initial: first barrier weight, relative to ``|f(x_0)|``.
      stage_steps: a stage ends after this many Newton steps at one ``t`` (centred or not).
      release_rounds: at most this many polish repeats after releasing merged pairs with
        negative multipliers.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from solvers import BarrierNewton, PowerAllocation, solve
      >>> try:
      ...     solve(PowerAllocation.create([1.0], budget=1.0), BarrierNewton())
      ... except NotImplementedError as err:
      ...     print(str(err)[:60])
      solver 'barrier-newton' needs reference, fast_objective, rel
    """

    t_final: float = 1e-13
    max_iterations: int = 200
    step_tol: float = 1e-10
    merit_tol: float = 1e-12
    active_tol: float = 1e-8
    polish_steps: int = 3
    t_initial: float = 1.0
    stage_steps: int = 25
    release_rounds: int = 3

    name = "barrier-newton"
    requires = ("reference", "fast_objective", "relative_derivatives", "linear_rows",
                "pair_a", "pair_b", "pair_weight", "pair_slacks", "chain_log_density")

    # ------------------------------------------------------------------ barrier phase
    def merit(self, problem: Any, x: Array, t: Array) -> Array:
        r"""``phi_t(x) = f(x) - t sum_k w_k log s_k(x)`` (rows with ``w_k = 0`` excluded).

        Args:
          problem: the problem.
          x: a strictly feasible point.
          t: the barrier weight.
        """
        _, _, s = _slacks(problem, x)
        w = problem.pair_weight
        barrier = -t * jnp.sum(jnp.where(w > 0, w * jnp.log(jnp.where(w > 0, s, 1.0)), 0.0))
        return problem.fast_objective(x) + barrier

    def newton(self, problem: Any, x: Array, lam: Array, t: Array):
        r"""The primal-dual Newton direction of ``phi_t`` on the linear rows.

        .. math:: (H_f + \textstyle\sum_k \frac{\lambda_k}{s_k} \nabla g_k \nabla g_k^\top)
                  \delta + A^\top \nu = -(\nabla f - t \textstyle\sum_k \frac{w_k}{s_k}
                  \nabla s_k), \quad A \delta = 0,

        in relative coordinates, and the multiplier step
        ``dlam = (t w - lam s - lam ds) / s``.

        Args:
          problem: the problem.
          x: current point.
          lam: current pair multipliers.
          t: barrier weight.

        Returns:
          ``(delta, nu, decrement, ds, dlam, s)``.
        """
        pa, pb, wts = problem.pair_a, problem.pair_b, problem.pair_weight
        _, g_f, hmat = problem.relative_derivatives(x)
        big_a, big_b, s = _slacks(problem, x)
        # primal-dual: barrier Hessian lam / s (not t w / s^2), gradient of f - t w log s
        q = lam / s
        bw = t * wts / s
        g = g_f + jnp.zeros_like(x).at[pa].add(bw * big_a).at[pb].add(-bw * big_b)
        hmat = (hmat.at[pa, pa].add(q * big_a**2).at[pb, pb].add(q * big_b**2)
                .at[pa, pb].add(-q * big_a * big_b).at[pb, pa].add(-q * big_a * big_b))
        delta, nu = saddle_solve(hmat, problem.linear_rows(x), g)
        ds = big_b * delta[pb] - big_a * delta[pa]  # slack change per unit step
        dlam = (t * wts - lam * s - lam * ds) / s
        return delta, nu, -jnp.dot(g, delta), ds, dlam, s

    def init(self, problem: Any, start: Any = None) -> BarrierState:
        """Start at ``start`` (default ``problem.reference()``) with ``t = t_initial |f(x_0)|``.

        Args:
          problem: the problem.
          start: strictly feasible positive start, or ``None``.
        """
        mu0 = problem.reference() if start is None else jnp.asarray(start)
        f0 = jnp.abs(problem.objective(mu0))
        t0 = self.t_initial * f0
        lam0 = t0 * problem.pair_weight / problem.pair_slacks(mu0)[2]
        return BarrierState(mu0, t0, jnp.zeros((), jnp.int32), jnp.inf * f0,
                            jnp.zeros((), bool), jnp.zeros(2, mu0.dtype), lam0, f0,
                            jnp.zeros((), jnp.int32))

    def step(self, problem: Any, state: BarrierState) -> BarrierState:
        """One Newton step: fraction to the boundary, Armijo on ``phi_t``, then the ``t`` update.

        Args:
          problem: the problem.
          state: the current state.
        """
        mu, t, lam, f0 = state.x, state.barrier, state.lam, state.scale
        delta, nu, dec, ds, dlam, s = self.newton(problem, mu, lam, t)
        a_max = jnp.minimum(_max_step(jnp.ones_like(mu), delta), _max_step(s, ds))
        a0 = jnp.minimum(1.0, 0.99 * a_max)
        phi0 = self.merit(problem, mu, t)

        def bt_cond(c):
            a, k = c
            new = mu * (1.0 + a * delta)
            ok = self.merit(problem, new, t) <= phi0 - 1e-4 * a * dec  # False on NaN: shrink
            return (~ok) & (k < 40)

        # in the round-off zone of the merit (decrement ~ eps |f|) Armijo is meaningless:
        # plain (fraction-to-boundary) Newton steps, convergence judged by the step itself
        a, k = jax.lax.cond(
            dec <= self.merit_tol * f0, lambda: (a0, 0),
            lambda: jax.lax.while_loop(bt_cond, lambda c: (0.5 * c[0], c[1] + 1), (a0, 0)))
        mu_new = mu * (1.0 + a * delta)
        ad = jnp.minimum(1.0, 0.99 * _max_step(lam, dlam))
        step = jnp.max(jnp.abs(delta))
        s_new = s + a * ds
        tw = t * problem.pair_weight
        lam_new = jnp.clip(lam + ad * dlam, tw / (1e10 * s_new), 1e10 * tw / s_new)
        finite = jnp.all(jnp.isfinite(mu_new)) & jnp.all(mu_new > 0) & jnp.isfinite(dec)
        t_min = self.t_final * f0
        last = t <= t_min * 1.0000001
        # centred enough for this t (decrement well below t), or at round-off level
        small = ((step <= self.step_tol) | (dec <= self.merit_tol * f0) | (k >= 40) | ~finite
                 | (~last & (dec <= 1e-2 * t)) | (state.stage_steps + 1 >= self.stage_steps))
        done = small & last
        tr = t / f0
        t_new = jnp.where(small & ~last,
                          f0 * jnp.maximum(jnp.minimum(0.2 * tr, tr**1.5), self.t_final), t)
        keep = ~finite | (k >= 40)
        return BarrierState(jnp.where(keep, mu, mu_new), t_new, state.iterations + 1, dec, done,
                            nu, jnp.where(keep, lam, lam_new), f0,
                            jnp.where(small, 0, state.stage_steps + 1))

    def terminate(self, problem: Any, state: BarrierState) -> Array:
        """``True`` once the last stage is centred or ``max_iterations`` steps are spent.

        Args:
          problem: the problem (unused).
          state: the current state.
        """
        return state.done | (state.iterations >= self.max_iterations)

    # ------------------------------------------------------------------ polish
    def merged_newton(self, problem: Any, x: Array, release: Array | None = None) -> MergedNewton:
        r"""Newton step of ``f`` on the linear rows with the active pairs merged.

        A pair is active when its relative slack ``1 - e^l p_b / p_a`` is below
        ``active_tol`` (chain pair ``k``: ``1 - p_{k+1} / p_k``); the shells of a
        connected set of active pairs (:func:`solvers._pair_groups.pair_groups`)
        move together (``delta`` constant on a group).

        Args:
          problem: the problem.
          x: current point.
          release: pairs never merged (released after a negative multiplier), or ``None``.
        """
        size = x.shape[0]
        keep = True if release is None else ~release
        lp, _ = problem.chain_log_density(x)
        active = (-jnp.expm1(lp[1:] - lp[:-1]) < self.active_tol) & (
            True if release is None else ~release[: size - 1])
        rel = problem.pair_slacks(x)[3]
        pair_active = ((rel < self.active_tol) & (problem.pair_weight > 0) & keep).at[
            : size - 1].set(active)
        chain_gid = jnp.cumsum(jnp.concatenate([jnp.ones(1, bool), ~active])) - 1
        gid = pair_groups(chain_gid, problem.pair_a, problem.pair_b, pair_active)
        _, g_f, h = problem.relative_derivatives(x)
        hg = jnp.zeros_like(h).at[gid[:, None], gid[None, :]].add(h)
        used = jnp.zeros(size, h.dtype).at[gid].set(1.0)
        hg = hg + jnp.diag(1.0 - used)
        gg = jnp.zeros(size, h.dtype).at[gid].add(g_f)
        amat = problem.linear_rows(x)
        ag = jnp.zeros_like(amat).at[:, gid].add(amat)
        dg, nu = saddle_solve(hg, ag, gg)
        return MergedNewton(dg[gid], nu, g_f, amat, lp, active, pair_active)

    def polish(self, problem: Any, state: BarrierState, release: Array | None = None,
               start: Array | None = None) -> PolishState:
        """The active-set polish from the barrier phase's point (module docstring).

        Args:
          problem: the problem.
          state: the final :class:`BarrierState`.
          release: pairs never merged (:meth:`merged_newton`), or ``None``.
          start: the point to polish (default ``state.x``).

        Returns:
          The final :class:`PolishState` (its ``newton`` solve belongs to its ``x``).
        """
        pa, pb = problem.pair_a, problem.pair_b
        f0 = state.scale

        def body(carry: PolishState) -> PolishState:
            mu, k = carry.x, carry.count
            res = self.merged_newton(problem, mu, release)
            delta = res.step
            big_a, big_b, s, _ = problem.pair_slacks(mu)
            # merged (active) pairs keep their ratio: only the others bound the step
            ds = jnp.where(res.pair_active, 0.0, big_b * delta[pb] - big_a * delta[pa])
            a_max = jnp.minimum(_max_step(jnp.ones_like(mu), delta), _max_step(s, ds))
            a = jnp.minimum(1.0, 0.95 * a_max)
            new = mu * (1.0 + a * delta)
            good = jnp.all(jnp.isfinite(new)) & (
                problem.fast_objective(new)
                <= problem.fast_objective(mu) + self.merit_tol * f0)
            # stop (without stepping, so the final solve belongs to the returned point) once
            # the Newton step is at round-off level, a step fails, or the budget is spent
            stop = ((jnp.max(jnp.abs(delta)) <= 1e-3 * self.step_tol) | ~good
                    | (k >= self.polish_steps))
            return PolishState(jnp.where(stop, mu, new), k + 1, res, stop)

        x0 = state.x if start is None else start
        shapes = jax.eval_shape(lambda x: self.merged_newton(problem, x, release), x0)
        res0 = jax.tree.map(lambda v: jnp.zeros(v.shape, v.dtype), shapes)
        init = PolishState(x0, jnp.zeros((), jnp.int32), res0, jnp.zeros((), bool))
        return jax.lax.while_loop(lambda c: ~c.stop, body, init)

    def postprocess(self, problem: Any, state: BarrierState) -> RawResult:
        r"""Polish, then the multipliers: chain pairs exactly, the others from the barrier.

        On a plateau of merged chain pairs stationarity gives the recursion
        ``u_k = c_k + r_k u_{k-1}`` (``c = grad + A^T nu``, ``r_k = p_k / p_{k-1}``),
        ``lambda_k = u_k p^ref_k / p_k``; elsewhere ``lambda = t w / s``.  When a
        pair off the chain is active (a loss cap joining plateaus), every active
        pair's multiplier comes from one least-squares solve of stationarity
        (:func:`solvers._pair_groups.pair_multipliers`).

        Args:
          problem: the problem.
          state: the final :class:`BarrierState`.
        """
        size = state.x.shape[0]
        n_chain = size - 1

        def finish(start, release, at_start):
            """Polish from ``start`` (pairs in ``release`` never merged), then the multipliers
            (barrier ones ``t w / s`` at ``start`` if ``at_start``, else at the polished point)."""
            polished = self.polish(problem, state, release, start)
            mu, res = polished.x, polished.newton
            s_bar = _slacks(problem, jnp.where(at_start, start, mu))[2]
            lam_barrier = state.barrier * problem.pair_weight / s_bar
            nu, lp, active = res.nu, res.log_density, res.active
            c = res.grad + res.rows.T @ nu
            ratio = jnp.exp(lp[1:] - lp[:-1])  # p_i / p_{i-1}, i = 1..N

            def rec(u_prev, inp):
                c_i, r_i, act_prev, act_i = inp
                u = jnp.where(act_i, c_i + jnp.where(act_prev, u_prev * r_i, 0.0), 0.0)
                return u, u

            act_prev = jnp.concatenate([jnp.zeros(1, bool), active[:-1]])
            r_in = jnp.concatenate([jnp.ones(1, ratio.dtype), ratio[:-1]])
            _, u = jax.lax.scan(rec, 0.0, (c[:n_chain], r_in, act_prev, active))
            _, lp_ref = problem.chain_log_density(mu)
            lam_mono = u * jnp.exp(lp_ref[:n_chain] - lp[:n_chain])
            lam_pairs = lam_barrier.at[:n_chain].set(
                jnp.where(active, lam_mono, lam_barrier[:n_chain]))
            # an active pair off the chain (a loss cap) joins plateaus: solve all active pairs
            # together instead (least squares of c + J^T lambda = 0)
            pair_active = res.pair_active
            big_a, big_b, _, _ = problem.pair_slacks(mu)
            lam_pairs = jax.lax.cond(
                jnp.any(pair_active[n_chain:]),
                lambda: jnp.where(pair_active, pair_multipliers(
                    c, problem.pair_a, problem.pair_b, big_a, big_b, pair_active), lam_pairs),
                lambda: lam_pairs)
            return mu, nu, lam_pairs, pair_active

        # a merged pair whose multiplier comes out negative was merged wrongly (its slack
        # was small only because the barrier left it there): release it and polish again
        def negative(carry):
            _, _, lam_pairs, pair_active, _, _ = carry
            return pair_active & (lam_pairs < -self.merit_tol * state.scale)

        def again(carry):
            mu, _, _, _, release, rounds = carry
            release = release | negative(carry)
            return (*finish(mu, release, False), release, rounds + 1)

        none = jnp.zeros(problem.pair_a.shape[0], bool)
        first = (*finish(state.x, none, True), none, jnp.zeros((), jnp.int32))
        mu, nu, lam_pairs, _, _, _ = jax.lax.while_loop(
            lambda c: (c[5] < self.release_rounds) & jnp.any(negative(c)), again, first)
        lam = jnp.concatenate([nu[1:2], lam_pairs])
        status = jnp.where(state.done, Status.OPTIMAL, Status.MAX_ITERATIONS).astype(jnp.int32)
        status = jnp.where(jnp.all(jnp.isfinite(mu)), status, Status.FAILED)
        return RawResult(mu, lam, nu[:1], status, {"iterations": state.iterations,
                                                   "barrier": state.barrier,
                                                   "newton_decrement": state.decrement})


__all__ = ["BarrierNewton", "BarrierState", "MergedNewton", "PolishState"]
