r"""The certified least-error i.n.i.d. Laplace design (Theorem 5, Corollary 6 of
inid-noise-laplace-beats-gaussian).

Noise ``Lap(0, b_i)`` on coordinate ``i`` of a query with sensitivity profile ``lambda``;
the privacy loss is at most

.. math:: L = \textstyle\sum_i \lambda_i / b_i ,

so ``L <= epsilon`` is pure epsilon-DP (proof of Theorem 5) and, for ``delta > 0``,
``1 - e^{epsilon - L} <= delta`` suffices (Corollary 6: the budget ``epsilon - log(1 -
delta)``; the exact heterogeneous-composition profile needs the PLD engine,
:mod:`dpjax.inid.exact`).  Both use the box ``|d_i| <= lambda_i``: sufficient for any
query with that profile, necessary for decoupled coordinates (Remark 3).  The least
weighted ``l_p^p`` error under the budget is eq. (12) (Theorem 5 for ``p = 2``), or the
convex programme (P4) solved by a :mod:`solvers` backend; the certificate re-evaluates
the condition at the returned scales after rounding.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.laplace import ERROR as LAPLACE_ERROR
from dpjax.certificate import MARGIN
from dpjax.errors import InfeasibleTargetError
from dpjax.inid import _design as d
from dpjax.inid import _kernels as k
from dpjax.inid.result import InidDesign

#: Eq. (12), compiled once per padded profile length.
_laplace_scales_kernel = jax.jit(k.laplace_scales)


def _loss_of(lam: np.ndarray, b: np.ndarray) -> float:
    """Host float64 ``sum lambda_i / b_i`` over ``lambda_i > 0``, rounded up."""
    pos = lam > 0
    with np.errstate(over="ignore", divide="ignore"):
        return d.fsum_or_inf(lam[pos] / b[pos]) * (1.0 + d.SUM_ROUNDING)


def _log_delta(epsilon, delta, loss):
    """Pure DP needs ``loss <= epsilon``; delta > 0 the Corollary 6 bound."""
    pure = jnp.where(loss <= epsilon, -jnp.inf, 0.0)
    return jnp.where(delta > 0, k.log_delta_laplace_corollary6(epsilon, loss), pure)


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

    The least weighted error ``sum_i w_i E|T_i|^p`` subject to the loss budget (P4 of
    inid-noise-laplace-beats-gaussian; eq. (12) for ``p = 2`` is Theorem 5):

    .. math:: \min_b\ \sum_i w_i\, b_i^p \quad \text{s.t.} \quad
              \sum_i \frac{\lambda_i}{b_i} \le \epsilon - \log(1 - \delta) ,

    the budget being ``epsilon`` for ``delta = 0`` (Theorem 5) and Corollary 6's (a
    sufficient condition) for ``delta > 0``, at the certified level ``delta (1 -
    MARGIN)``.

    Args:
      profile, epsilon, error_power, weights: as in :func:`dpjax.inid.gaussian_design`.
      delta: target ``delta`` in ``[0, 1)``.
      solver: ``"closed-form"`` (eq. (12)), ``"jax"`` or ``"cvxpy"`` (programme (P4)).

    Returns:
      A certified :class:`InidDesign` with the i.i.d. and SPR baselines (Table I).

    Example:
      >>> d = laplace_design([0.85, 0.15], epsilon=0.5, error_power=1)
      >>> round(d.error, 4), round(d.error_iid, 4)   # Table II
      (3.4283, 4.0)
    """
    target = d.check_inputs(profile, epsilon, delta, error_power, weights, solver)
    lam, eps, dlt, p, w = target[:5]
    # Corollary 6 at the certified level delta (1 - MARGIN) (pure DP: budget = epsilon)
    budget = eps - math.log1p(-dlt * (1.0 - MARGIN))
    if not budget > 0:
        raise InfeasibleTargetError("epsilon = delta = 0: no additive noise is private")
    with jax.enable_x64(True), np.errstate(over="ignore"):  # error sums: inf, not a warning
        b, stats = d.solve_scales(
            target, lambda: d.run_padded(_laplace_scales_kernel, lam, budget, p, w), 1.0,
            budget, _loss_of, budget,
        )
        b, delta_at = d.certify("inid laplace", target, b, _loss_of, _log_delta, LAPLACE_ERROR)
        moment = float(k.laplace_abs_moment(p))
        pos = lam > 0
        alloc = np.where(pos, lam / np.where(pos, b, 1.0), 0.0)
        return d.assemble(
            "laplace", target, b, moment,
            iid_scale=float(np.sum(lam)) / budget,
            spr_scales=lam.size * lam / budget,
            mse=float(np.sum(2.0 * b * b)),
            privacy_parameter=_loss_of(lam, b),
            allocation=alloc,
            delta_at_params=delta_at,
            condition=(
                "pure epsilon-DP: sum lambda_i / b_i <= epsilon (Theorem 5)"
                if dlt == 0
                else "sufficient: Corollary 6 bound 1 - exp(epsilon - sum lambda_i / b_i) <= "
                "delta"
            ),
            solver_stats=stats,
            notes=(
                "i.i.d./SPR baselines use Delta_1 = ||lambda||_1 (Remark 1: an upper bound)",
            ),
        )
