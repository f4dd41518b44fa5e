r"""The designed spherical mechanism (Definition 2 of spherical-kl-optimal-mechanisms).

Noise ``Z`` in ``R^m`` with density ``f(x) = p_i`` on the shell
``|x| in J_i = [i/n, (i+1)/n)`` for ``i <= N`` and ``p_N r^(i-N)`` beyond
(eqs. 17-18).  Sensitivity is 1 (the paper's footnote: scale the cost).

* **Sampling** (exact): shell ``i`` with probability ``mu_i = p_i v_i``;
  radius by inversion inside the shell (``rho^m`` uniform on
  ``[(i/n)^m, ((i+1)/n)^m]``); direction uniform on the sphere.  The shell
  law is truncated where the remaining tail mass is below ``e^-60`` of shell
  ``N``'s (recorded in ``sampler_tail_mass``).
* **Accounting** (exact, certified): by Lemma 1 the worst shift is ``e_1``;
  on the cell ``{|x| in J_i, |x - e_1| in J_j}`` the loss is constant,
  ``log(p_i / p_j)``, with ``P``-probability ``A_m gamma_ij p_i`` (eq. 23) and
  ``Q``-probability ``A_m gamma_ij p_j``: the PLD is exactly discrete (one use: its
  hockey-stick is summed over the cells directly).  Cells
  beyond the computed rows carry the (tiny) remaining mass, which is put at
  loss ``+inf`` (pessimistic).  Poisson subsampling with rate ``q`` uses the
  add/remove dominating pairs cell by cell (remove:
  ``P' = q P + (1-q) Q`` vs ``Q``; add: ``P`` vs ``(1-q) P + q Q``); ``K``-fold
  composition by the PLD engine's FFT; the reported epsilon is the worse
  of the two adjacencies.  Under replace-one (a record swapped for another on the
  subsample) the pair is not a shift pair and no worst pair of contributions is known: the
  use is accounted through the unsampled cell profile (Balle, Barthe & Gaboardi 2018's
  advanced joint convexity, :func:`dpjax.accounting.pld.amplification.poisson_replace_one`,
  the profile at twice the shift bounded by group privacy,
  :func:`dpjax.accounting.pld.amplification.two_steps`) as the pair of
  :func:`dpjax.accounting.pld.profile_pair.from_profile`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dpjax import _validate
from dpjax.accounting import pld as pld_engine
from dpjax.accounting.pld import amplification
from dpjax.accounting.pld.profile_pair import from_profile
from dpjax.certificate import certify_epsilon
from dpjax.numerics import float64_kernel
from dpjax.spherical import coefficients as co


class SphericalMechanism(NamedTuple):
    """A designed spherical noise (host arrays; see module docstring).

    Attributes:
      m, n, N, r: dimension, shells per unit radius, last free shell, tail ratio.
      log_p: ``(N+1,)`` log density on the free shells.
      log_w: ``(M - first, 2b+1)`` banded log cell volumes ``log(A_m gamma_ij)`` of rows
        ``first..M-1`` (row ``k`` of the array is shell ``i = first + k``), ``j = i + d - b``;
        ``b = n`` is the whole band, ``b < n`` a band truncated where the kernel carries no
        mass (the cells left out are accounted at loss ``+inf``).
      log_v: ``(M,)`` log shell volumes.
      budget: the cost budget ``C`` it was designed for; ``kl``: its KL at shift ``e_1``.
      first: the first row whose cells are stored; the rows below (a flat core of
        negligible mass, :mod:`dpjax.spherical.geometric`) have no stored cells and their
        mass is accounted at loss ``+inf`` (pessimistic).  Storing only the window keeps
        memory ``O((M - first) b)`` at ``m = 10^6`` (the core alone has ``~10^7`` rows).
    """

    m: int
    n: int
    N: int
    r: float
    log_p: np.ndarray
    log_w: np.ndarray
    log_v: np.ndarray
    budget: float
    kl: float
    first: int = 0

    @classmethod
    def from_solution(cls, problem, solution, coeffs: co.Coefficients, budget: float):
        """From a solved :class:`solvers.SphericalKL` (``solution.x`` = free shell masses)."""
        mu = np.asarray(solution.x, np.float64)
        rows = problem.rows
        log_p = np.log(mu) - coeffs.log_v[: problem.N + 1]
        return cls(coeffs.m, coeffs.n, problem.N, float(math.exp(float(problem.log_r))), log_p,
                   coeffs.log_w[:rows], coeffs.log_v[:rows], float(budget),
                   float(solution.value))

    # ------------------------------------------------------------------ density
    def log_p_shell(self, i) -> np.ndarray:
        """``log p_i`` for shell indices ``i >= 0`` (geometric tail past ``N``)."""
        i = np.asarray(i)
        tail = self.log_p[self.N] + (i - self.N) * math.log(self.r)
        return np.where(i <= self.N, self.log_p[np.minimum(i, self.N)], tail)

    def log_density(self, x) -> np.ndarray:
        """``log f(x)`` for points ``x`` of shape ``(..., m)``."""
        rho = np.linalg.norm(np.asarray(x, np.float64), axis=-1)
        return self.log_p_shell(np.floor(rho * self.n).astype(np.int64))

    def radial_log_pdf(self, rho) -> np.ndarray:
        """Log density of ``R = |Z|``: ``log p(rho) + log(m V_m) + (m-1) log rho`` (Fig. 1)."""
        rho = np.asarray(rho, np.float64)
        with np.errstate(divide="ignore"):
            return (self.log_p_shell(np.floor(rho * self.n).astype(np.int64))
                    + math.log(self.m) + co.log_unit_ball_volume(self.m)
                    + (self.m - 1) * np.log(rho))

    def radial_cdf(self, rho) -> np.ndarray:
        r"""Exact CDF of ``R = |Z|`` (the sampler's law, to its cut :meth:`sampler_rows`).

        .. math:: P(R \le \rho) = \sum_{i < k} \mu_i + \mu_k
                  \frac{\rho^m - (k/n)^m}{((k+1)/n)^m - (k/n)^m},\qquad k = \lfloor n\rho\rfloor

        (shell masses ``mu_i = p_i v_i`` normalised, ``R^m`` uniform inside a shell; Definition 2
        of spherical-kl-optimal-mechanisms), in logs.

        Args:
          rho: radii ``>= 0`` (array).
        """
        lm = self.shell_log_masses()
        mu = np.exp(lm - np.logaddexp.reduce(lm))
        cum = np.concatenate([[0.0], np.cumsum(mu)])
        rho = np.asarray(rho, np.float64)
        k = np.minimum(np.floor(rho * self.n).astype(np.int64), mu.size - 1)
        a, b = k / self.n, (k + 1.0) / self.n
        with np.errstate(divide="ignore"):
            ratio = np.exp(self.m * (np.log(a) - np.log(b)))
            frac = (np.exp(self.m * (np.log(rho) - np.log(b))) - ratio) / (1.0 - ratio)
        return np.minimum(cum[k] + mu[k] * np.clip(frac, 0.0, 1.0), 1.0)

    def shell_log_masses(self, count: int | None = None) -> np.ndarray:
        """``log mu_i = log p_i + log v_i`` for ``i < count`` (default: to the sampler's cut)."""
        count = self.sampler_rows() if count is None else count
        return self.log_p_shell(np.arange(count)) + co.log_shell_volumes(self.m, self.n, count)

    def sampler_rows(self) -> int:
        return co.tail_rows(self.m, self.n, self.N, self.r, log_rel_tol=-60.0)

    def expected_cost(self, power: float = 2.0) -> float:
        """``E |Z|^power`` (tail summed to convergence)."""
        lc = co.log_power_cost_at(self.m, self.n, np.arange(self.N + 1), power)
        head = np.exp(self.log_p + lc)
        log_tc, _ = co.log_tail_sum(lambda i: co.log_power_cost_at(self.m, self.n, i, power),
                                    math.log(self.r), self.N, -60.0)
        return float(head.sum() + math.exp(self.log_p[self.N] + log_tc))

    # ------------------------------------------------------------------ sampling
    def sample(self, key, shape=(), dtype=jnp.float64):
        """``shape + (m,)`` exact samples (module docstring), cast to ``dtype``: a real
        floating type only (``TypeError`` otherwise: rounded noise is not what was
        accounted, :func:`dpjax._validate.sample_dtype`)."""
        dtype = _validate.sample_dtype(dtype)
        count = self.sampler_rows()
        logits = jnp.asarray(self.shell_log_masses(count))
        k1, k2, k3 = jax.random.split(key, 3)
        shell = jax.random.categorical(k1, logits, shape=shape).astype(jnp.float64)
        u = jax.random.uniform(k2, shape, jnp.float64)
        a, b = shell / self.n, (shell + 1.0) / self.n
        # rho^m uniform on [a^m, b^m]: rho = b (u + (1 - u) (a/b)^m)^(1/m)
        ratio = jnp.exp(self.m * (jnp.log(jnp.where(a > 0, a, 1.0)) - jnp.log(b)))
        ratio = jnp.where(a > 0, ratio, 0.0)
        rho = b * jnp.exp(jnp.log(u + (1.0 - u) * ratio) / self.m)
        g = jax.random.normal(k3, shape + (self.m,), jnp.float64)
        z = rho[..., None] * g / jnp.linalg.norm(g, axis=-1, keepdims=True)
        return z.astype(dtype)

    # ------------------------------------------------------------------ accounting
    def atoms(self):
        """PLD cells at shift ``e_1``: ``(loss, P-mass, Q-mass, P-rest, Q-rest)``."""
        rows, width = self.log_w.shape
        first = int(self.first)
        M = first + rows
        lp = self.log_p_shell(np.arange(M))
        i = np.repeat(np.arange(first, M)[:, None], width, axis=1)
        j = i + np.arange(width)[None, :] - (width - 1) // 2  # band half-width b <= n
        ok = (j >= 0) & (j < M) & np.isfinite(self.log_w)
        i, j, lw = i[ok], j[ok], self.log_w[ok]
        loss = lp[i] - lp[j]
        pm = np.exp(lw + lp[i])
        qm = np.exp(lw + lp[j])
        return loss, pm, qm, max(0.0, 1.0 - pm.sum()), max(0.0, 1.0 - qm.sum())

    @float64_kernel
    def pld(self, sampling_rate: float | None = None, adjacency: str = "remove",
            bin_width: float = 1e-4) -> pld_engine.PLD:
        """Pessimistic PLD of one use (optionally Poisson-subsampled; ``adjacency`` remove,
        add, or replace: the profile bound of the module docstring)."""
        loss, pm, qm, p_out, q_out = self.atoms()
        if sampling_rate is None or float(sampling_rate) == 1.0:  # q = 1 keeps every record
            losses, probs, inf = loss, pm, p_out
        elif adjacency == "replace":
            return self._replace_pld(float(sampling_rate), bin_width)
        else:
            q = float(sampling_rate)
            if adjacency == "remove":
                probs = q * pm + (1.0 - q) * qm
                losses = np.logaddexp(math.log(q) + loss, math.log1p(-q))
                inf = q * p_out + (1.0 - q) * q_out
            elif adjacency == "add":
                probs = pm
                losses = -np.logaddexp(math.log(q) - loss, math.log1p(-q))
                inf = p_out
            else:
                raise ValueError(f"adjacency must be 'remove', 'add' or 'replace', got "
                                 f"{adjacency!r}")
        losses = np.append(losses, np.inf)
        probs = np.append(probs, inf)
        return pld_engine.from_atoms(losses, probs, bin_width=bin_width)

    def _replace_pld(self, sampling_rate: float, bin_width: float) -> pld_engine.PLD:
        """The replace-one pair of one use at rate ``q``: the profile bound of the plain
        shift pair (symmetric: both orders) as a dominating PLD (module docstring)."""
        plain = self.pld(None, "remove", bin_width)

        def one(eps):
            return np.asarray(pld_engine.delta_for_epsilon(plain, jnp.asarray(eps)))

        top = plain.top()
        top = amplification.sampled_loss(max(top, bin_width), sampling_rate)
        bound = amplification.poisson_replace_one(one, sampling_rate,
                                                  amplification.two_steps(one))
        return from_profile(bound, top, bin_width)

    @float64_kernel
    def epsilon(self, delta: float, compositions: int = 1, sampling_rate: float | None = None,
                bin_width: float = 1e-4, relation: str = "add_remove") -> float:
        """Certified ``epsilon(delta)`` after ``compositions`` uses (the worse adjacency of
        ``relation``: :func:`adjacencies`).

        Certified at the boundary: every adjacency's composed profile is re-evaluated at
        the returned epsilon (:func:`dpjax.certificate.certify_epsilon`).
        """
        return float(self.epsilons(delta, [compositions], sampling_rate, bin_width,
                                   relation)[0])

    @float64_kernel
    def epsilons(self, delta: float, compositions, sampling_rate: float | None = None,
                 bin_width: float = 1e-4, relation: str = "add_remove") -> np.ndarray:
        """:meth:`epsilon` for several composition counts (PLDs built once), each certified."""
        check_use(delta, compositions, sampling_rate)
        adj = adjacencies(sampling_rate, relation)
        bases = [self.pld(sampling_rate, a, bin_width) for a in adj]
        out = []
        for k in compositions:
            composed = [_compose(b, int(k)) for b in bases]
            eps = max(float(pld_engine.epsilon_for_delta(c, delta)) for c in composed)

            def profile_at(e, composed=composed):
                return max(float(pld_engine.delta_for_epsilon(c, float(e))) for c in composed)

            out.append(float(certify_epsilon("spherical", profile_at, eps, delta)))
        return np.array(out)

    @float64_kernel
    def delta(self, epsilon: float, compositions: int = 1,
              sampling_rate: float | None = None, bin_width: float = 1e-4,
              relation: str = "add_remove") -> float:
        """Certified ``delta(epsilon)`` after ``compositions`` uses.

        One plain use (no subsampling) sums the hockey-stick over the exact cells
        (:func:`dpjax.accounting.pld.delta_of_atoms`: no grid, no compile, the exact value
        plus a rounding pad); otherwise the PLD engine (the worse adjacency of
        ``relation``: :func:`adjacencies`).
        """
        _validate.epsilon(epsilon)
        check_use(None, [compositions], sampling_rate)
        adj = adjacencies(sampling_rate, relation)
        if int(compositions) == 1 and sampling_rate is None:
            _, pm, qm, p_out, _ = self.atoms()
            return pld_engine.delta_of_atoms(pm, qm, p_out, float(epsilon))
        return max(float(pld_engine.delta_for_epsilon(
            _compose(self.pld(sampling_rate, a, bin_width), compositions), epsilon)) for a in adj)


#: The adjacencies each neighbouring relation takes under Poisson subsampling.
_RELATION_ADJACENCIES = {"add_remove": ("remove", "add"), "remove": ("remove",),
                         "add": ("add",), "replace_one": ("replace",)}


def adjacencies(sampling_rate: float | None, relation: str = "add_remove") -> tuple[str, ...]:
    """The dominating pairs a use is accounted with: without subsampling (or at ``q = 1``)
    the shift pair, symmetric, one law for adding and removing (``("remove",)``, every
    relation but ``replace_one``); Poisson-subsampled, ``add_remove`` takes both pairs (the
    worse reported), ``remove`` / ``add`` one, ``replace_one`` the profile bound
    ``("replace",)`` (module docstring).  Without subsampling ``replace_one`` is the
    mechanism at twice the sensitivity, which a designed mechanism (unit sensitivity) does
    not have: it is calibrated at the doubled sensitivity instead
    (:func:`dpjax.mechanisms._relation.calibrate_under`).

    Args:
      sampling_rate: Poisson rate ``q`` or ``None``.
      relation: ``"add_remove"`` (default), ``"remove"``, ``"add"`` or ``"replace_one"``
        (with ``0 < q < 1``).

    Raises:
      ValueError: any other relation, or ``replace_one`` without subsampling.

    Example:
      >>> adjacencies(0.1, "add"), adjacencies(None, "add")
      (('add',), ('remove',))
    """
    if relation not in _RELATION_ADJACENCIES:
        raise ValueError(f"relation must be one of {', '.join(_RELATION_ADJACENCIES)} (the "
                         f"spherical mechanism's pairs are shift pairs), got {relation!r}")
    if sampling_rate is None or float(sampling_rate) == 1.0:
        if relation == "replace_one":
            raise ValueError("relation replace_one without subsampling moves the query by "
                             "twice the sensitivity: design the mechanism at sensitivity 2 "
                             "(dpjax.calibrate does) instead of accounting this one")
        return ("remove",)
    return _RELATION_ADJACENCIES[relation]


def check_use(delta, compositions, sampling_rate, prefix: str = "") -> None:
    """Refuse ``delta`` outside ``(0, 1)``, composition counts below 1, rates outside ``(0, 1]``.

    Args:
      delta: the target ``delta`` (``None``: not checked).
      compositions: a sequence of composition counts.
      sampling_rate: the Poisson rate, or ``None``.
      prefix: prepended to the argument names in messages (``"auto_"`` for the CLI's
        ``--auto-*`` options).

    Raises:
      ValueError: naming the argument, its value and what is allowed.
    """
    if delta is not None:
        d = _validate.as_array(prefix + "delta", delta)
        if d.ndim or not (np.isfinite(d) and _validate.TINY <= d < 1.0):
            raise ValueError(f"{prefix}delta must be a single number in (0, 1) (the cells' "
                             f"loss is unbounded: delta = 0 is never met), got "
                             f"{_validate.shown(delta)}")
    for k in compositions:
        _validate.positive_int(k, prefix + "compositions")
    if sampling_rate is not None:
        _validate.probability(sampling_rate, prefix + "sampling_rate")


def _compose(base, k: int):
    if k == 1:
        return base
    return pld_engine.self_compose(base, k, pld_engine.self_compose_size(base, k))


__all__ = ["SphericalMechanism"]
