r"""The spherical KL programme in cvxpy: the reference model (relative-entropy cones, Clarabel).

After the diagonal rescaling ``mu = mu_ref * y`` against the feasible
reference profile (without it Clarabel fails outright on the 10-20 orders of
magnitude ``p`` spans) the objective (eq. (28) of
spherical-kl-optimal-mechanisms, tail merged into node ``N``) is

.. math::
   \frac{f}{f_{ref}} = \sum_{(a, b)} \sqrt{w_{ab}}\,
   \mathrm{rel\_entr}\big(\sqrt{w_{ab}}\, y_a, \sqrt{w_{ab}}\, y_b\big)
   + \ell^\top y, \qquad w_{ab} = \frac{F^{ref}_{ab}}{f_{ref}},

each edge weight split between the objective and the cone arguments
(``w rel_entr(a, b) = sqrt(w) rel_entr(sqrt(w) a, sqrt(w) b)``, 1-homogeneity).
With the weights outside the cones Clarabel stalls at residual ~4e-5,
objective 1e-5..3e-5 too high from (n, N) = (200, 600) on; all weight inside
the cones fails outright.  Split, its objective is accurate to ~1e-8 relative
(residual ~1e-8, measured up to (400, 1200) in ``bench/bench_spherical.py``);
its point in the low-mass shells much less so (factors of 2-9 below mass
1e-6) -- judge it by the residual.  Constraints: mass (eq. 29) as an
equality, cost (eq. 30) and the pair constraints ``p_a <= e^l p_b`` as
inequalities, all in the rescaled variables.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from solvers.cvxpy_reference import CvxpyModel


def spherical_kl_cvxpy_model(problem, cp) -> CvxpyModel:
    r"""The cvxpy model of a :class:`solvers.SphericalKL` (module docstring).

    Args:
      problem: the programme.
      cp: the lazily imported ``cvxpy`` module.

    Returns:
      A :class:`solvers.CvxpyModel` whose ``recover()`` maps ``y`` back to shell
      masses and the duals to the problem's normalised constraints (times ``f_ref``).
    """
    size = problem.N + 1
    lk = np.asarray(problem.log_kernel)
    M, width = lk.shape
    lv = np.asarray(problem.log_v)
    mu_ref = np.asarray(problem.reference())
    lp = np.asarray(problem._extended_log_p(jnp.asarray(mu_ref)))
    i = np.repeat(np.arange(M)[:, None], width, axis=1)
    j = i + np.arange(width)[None, :] - problem.n
    ok = (j >= 0) & (j < M) & np.isfinite(lk)
    i, j, lk_ok = i[ok], j[ok], lk[ok]
    fref = np.exp(lk_ok + lp[i] + lv[i])
    lref = lp[i] - lp[j]
    ci, cj = np.minimum(i, problem.N), np.minimum(j, problem.N)
    lin = np.bincount(ci, weights=fref * lref, minlength=size)
    off = ci != cj
    key = ci[off] * size + cj[off]
    uk, inv = np.unique(key, return_inverse=True)
    wts = np.bincount(inv, weights=fref[off])
    ea, eb = uk // size, uk % size
    keep = wts > 0
    ea, eb, wts = ea[keep], eb[keep], wts[keep]
    f_scale = float(np.sum(wts * 0.0) + np.sum(lin))  # f at y = 1
    f_scale = abs(f_scale) if f_scale != 0 else 1.0
    y = cp.Variable(size, pos=True)
    # w rel_entr(a, b) = sqrt(w) rel_entr(sqrt(w) a, sqrt(w) b) (1-homogeneity): the
    # weights span ~15 orders of magnitude; split between the objective and the cone
    # arguments Clarabel converges ~1000x further (measured at (200, 600): residual
    # 4e-5 -> 6e-9, objective error 1e-5 -> 3e-8; all weight inside the cones fails)
    sw = np.sqrt(wts / f_scale)
    obj = sw @ cp.rel_entr(cp.multiply(sw, y[ea]), cp.multiply(sw, y[eb])) + (lin / f_scale) @ y
    mass_row = mu_ref * np.asarray(problem.mass_coef)
    cost_row = mu_ref * np.asarray(problem.cost_coef)
    lpr = np.asarray(problem.log_p_ref)
    pa, pb, plc = (np.asarray(v) for v in (problem.pair_a, problem.pair_b, problem.pair_logc))
    coef_a = np.exp(lpr[pa] - lpr[pb] - plc)
    c_mass = mass_row @ y == 1.0
    c_cost = cost_row @ y - 1.0 <= 0
    c_pair = cp.multiply(coef_a, y[pa]) - y[pb] <= 0
    model = cp.Problem(cp.Minimize(obj), [c_mass, c_cost, c_pair])

    def recover():
        mu = mu_ref * np.asarray(y.value)
        lam = np.concatenate([[float(c_cost.dual_value)], np.asarray(c_pair.dual_value)])
        return mu, f_scale * lam, f_scale * np.array([float(c_mass.dual_value)])

    return CvxpyModel(model, recover)


__all__ = ["spherical_kl_cvxpy_model"]
