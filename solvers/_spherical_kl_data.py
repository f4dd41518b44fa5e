r"""Host construction of the spherical KL programme's data (NumPy, float64).

Three pieces that :meth:`solvers.SphericalKL.create` assembles once per
programme: the pair constraints (monotonicity and the optional loss cap),
a strictly feasible reference profile (the starting point and the scaling of
the pair constraints), and the merged off-diagonal kernel that makes the
objective, its gradient and its Hessian one dense matrix-vector pass.
"""

from __future__ import annotations

import math

import numpy as np

#: ``log c`` of an inactive loss-cap row
NO_CAP = 1e4


def pair_table(n: int, N: int, log_r: float, loss_cap: float | None):
    r"""Pair constraints ``p_a <= e^l p_b``: ``(a, b, l, cap_slope)`` (host arrays).

    Rows ``k < N``: monotonicity ``p_{k+1} <= p_k`` (``l = 0``); rows
    ``N + i``: the single-step loss cap ``log p_i - log p_{i+n} <= L_max``
    (``b = min(i + n, N)``, the geometric tail's ``(i + n - N) log r``
    folded into ``l`` past ``N``).  Cap rows are always present (same shapes
    with and without a cap: one compilation); without a cap they are
    inactive (``l = NO_CAP``).

    Args:
      n: shells per unit radius (the band half-width).
      N: last free shell.
      log_r: ``log r`` of the tail ratio.
      loss_cap: ``L_max``, or ``None``.

    Returns:
      ``(a, b, logc, cap_slope)``: index arrays, the ``l`` array and the
      per-shell log-slope the reference profile must respect (``inf`` without a cap).

    Raises:
      ValueError: the tail's own single-step loss ``n log(1/r)`` reaches the cap.
    """
    a = list(range(1, N + 1))
    b = list(range(0, N))
    lc = [0.0] * N
    cap_slope = np.inf
    if loss_cap is not None:
        if n * -log_r >= loss_cap:
            raise ValueError(
                f"loss cap {loss_cap} <= the tail's own single-step loss n log(1/r) = "
                f"{n * -log_r:.4g}: infeasible; increase r")
        cap_slope = 0.99 * loss_cap / n
    cap = NO_CAP if loss_cap is None else float(loss_cap)
    for i in range(N):
        j = i + n
        a.append(i)
        b.append(min(j, N))
        lc.append(cap + (max(j - N, 0) * log_r if loss_cap is not None else 0.0))
    return np.array(a), np.array(b), np.array(lc), cap_slope


def merged_kernel(lk, log_v, N, log_r, log_p_ref):
    r"""Dense merged kernel ``Kt`` and the per-node losses ``c`` of the reference profile.

    ``Kt_ab = sum_{i in a} (mu_i / mu_a) sum_{j in b} K_ij``, ``a != b``.  Node
    ``a < N`` is shell ``a``; node ``N`` merges shells ``i >= N``, whose masses
    are ``mu_i = mu_N rho_i``, ``rho_i = r^(i-N) v_i / v_N``, and log densities
    ``lp_N + tau_i``, ``tau_i = (i - N) log r``.  Hence, with ``y = lp - lp_ref``
    on the nodes, the objective (eq. (28) of spherical-kl-optimal-mechanisms) is

    .. math:: f(\mu) = \sum_a \mu_a \Big(\sum_b Kt_{ab} (y_a - y_b) + c_a\Big),
              \quad c_a = \sum_{i \in a} \rho_i \sum_j K_{ij} (lp^{ref}_i - lp^{ref}_j)

    exactly (cell-wise, tail offsets and self-flows included); self-flows drop
    out of ``Kt``.

    Args:
      lk: ``(M, 2n+1)`` banded ``log K_ij`` (``-inf`` off the band).
      log_v: ``(M,)`` ``log v_i``.
      N: last free shell.
      log_r: ``log r``.
      log_p_ref: ``(N+1,)`` reference log densities.

    Returns:
      ``(Kt, c)``: ``(N+1, N+1)`` and ``(N+1,)`` host arrays.
    """
    M, width = lk.shape
    n = (width - 1) // 2
    i = np.repeat(np.arange(M)[:, None], width, axis=1)
    j = i + np.arange(width)[None, :] - n
    ok = np.isfinite(lk)
    rows = np.arange(M)
    tau = np.where(rows > N, (rows - N) * log_r, 0.0)
    log_rho = np.where(rows > N, tau + log_v - log_v[N], 0.0)
    lp_ref = log_p_ref[np.minimum(rows, N)] + tau
    val = np.exp(lk + log_rho[:, None])[ok]
    a, b = np.minimum(i[ok], N), np.minimum(j[ok], N)
    loss = lp_ref[i[ok]] - lp_ref[j[ok]]
    const = np.bincount(a, weights=val * loss, minlength=N + 1)
    off = a != b
    kt = np.bincount(a[off] * (N + 1) + b[off], weights=val[off], minlength=(N + 1) ** 2)
    return kt.reshape(N + 1, N + 1), const


def reference_profile(shell_cbar, cbar, mass, log_v, budget, cap_slope):
    r"""``log p_ref``: ``p ~ exp(-beta cbar)`` with its per-shell log-slope capped, cost ``= C``.

    .. math:: \log p^{ref}_k = -\sum_{i < k} \min(\beta (\bar c_{i+1} - \bar c_i),
              s_{cap}), \qquad \textstyle\sum_k \mu_k \bar c_k = C,

    normalised to unit mass (eq. (29) of spherical-kl-optimal-mechanisms):
    strictly monotone and inside the loss cap, a Gaussian-like profile for the
    cost ``|x|^2``.  ``beta`` by bisection on the cost/mass ratio.

    Args:
      shell_cbar: ``(N+1,)`` mean cost per unit volume of each shell, ``c_i / v_i``.
      cbar: the same with the geometric tail folded into node ``N``.
      mass: ``(N+1,)`` mass coefficients (tail folded into node ``N``).
      log_v: ``(N+1,)`` ``log v_i``.
      budget: ``C``.
      cap_slope: largest per-shell log-slope (``inf``: no cap).

    Raises:
      ValueError: the budget is not reachable on this grid.
    """
    from scipy.special import logsumexp  # deferred: scipy.special costs ~0.3 s to import

    target = budget
    dc = np.diff(shell_cbar)

    def profile(beta):
        slope = np.minimum(beta * dc, cap_slope)
        lp = np.concatenate([[0.0], -np.cumsum(slope)])
        lmu = lp + log_v  # free-shell masses up to a factor; total mass = sum(mu * mass)
        lmu = lmu - float(logsumexp(lmu + np.log(mass)))  # host: one bisection step
        ratio = float(np.sum(np.exp(lmu) * cbar))
        return lp, ratio

    lo, hi = 1e-12, 1.0
    if profile(lo)[1] < target:
        raise ValueError(
            "cost budget not reachable with this (N, r): the flattest monotone profile has "
            f"mean cost {profile(lo)[1]:.4g} < {target:.4g}; increase N or r")
    while profile(hi)[1] > target:
        hi *= 2.0
        if hi > 1e12:
            raise ValueError("cost budget too small for the innermost shells (increase n)")
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if profile(mid)[1] > target:
            lo = mid
        else:
            hi = mid
    lp, _ = profile(hi)
    # normalise to unit mass
    lmu = lp + log_v + np.log(mass)

    lp = lp - float(logsumexp(lmu))
    if not np.all(np.diff(lp) < 0):
        raise ValueError("reference profile is not strictly monotone")
    return lp


__all__ = ["NO_CAP", "merged_kernel", "pair_table", "reference_profile"]
