r"""Exact 1-D privacy profile of the staircase mechanism (Geng & Viswanath 2016).

Noise :class:`dpjax.noise.staircase.Staircase` with ``decay`` (GV's
epsilon), ``width`` (GV's Delta) and ``gamma``; query sensitivity ``s``
(any shift ``|d| <= s`` may occur).  GV's theorem: for ``s <= width`` the
mechanism is ``(decay, 0)``-DP.  Below ``decay`` (or for ``s > width``) the profile
is computed exactly here.

**One shift** ``d > 0`` (width 1; :func:`log_delta_staircase_shift`):
``delta_d(eps) = int h``, ``h(t) = [g(t) - e^eps g(t + d)]_+`` (eq. (26) of
flipped-huber-mechanism).  For ``t >= 0`` both ``g(t)`` and ``g(t + d)`` lose a
factor ``b = e^{-decay}`` per period, so ``h(t + 1) = b h(t)``; for ``t <= -d``,
``h(t - 1) = b h(t)``.  Hence

.. math:: \delta_d(\epsilon) = \frac{\int_0^1 h + \int_{-d-1}^{-d} h}{1 - b} + \int_{-d}^{0} h,

and on each window ``h`` is piecewise constant with breakpoints among the
staircase's jump points ``P = {+-k, +-(k + gamma)}`` and ``P - d``: each
window is cut at all of them and summed exactly (midpoint values times
lengths).

**Worst shift.** Because ``g`` is piecewise constant, ``delta_d(eps)`` is
piecewise linear in ``d``, with kinks only where a jump point of ``g(. + d)``
meets one of ``g``, i.e. at ``d`` in ``Z + {0, +-gamma, +-2 gamma}`` (differences
of points of ``P``).  So ``sup_{0 < d <= s} delta_d`` is the maximum over those
candidates in ``(0, s)`` and ``d = s`` (:func:`log_delta_staircase`).  The
staircase is not log-concave, so Lemma 11's ``d = s`` shortcut would not be
sound; the tests compare the candidate maximum with a dense scan over ``d``.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.typing import ArrayLike

from dpjax.certificate import kernel_error, reported_delta
from dpjax.numerics import float64_kernel

#: Documented error constant of :func:`log_delta_staircase_shift` / :func:`log_delta_staircase`
#: (``|log delta_computed - log delta_true| <= ERROR (1 + |log delta|)``; a sum of
#: non-negative exact cell terms): measured <= 1e-15 against the exact mpmath cell sum
#: (tests/accounting/test_fail_closed.py).
ERROR = kernel_error(1e-14)


def _unit_points(gamma: Array, max_periods: int) -> Array:
    """Jump points of the width-1 staircase within ``[-(M+1), M+1]`` (shape ``(..., 4(M+1))``)."""
    k = jnp.arange(max_periods + 1, dtype=gamma.dtype)
    g = gamma[..., None]
    pos = jnp.concatenate([k + 0.0 * g, k + g], axis=-1)
    return jnp.concatenate([pos, -pos], axis=-1)


def _unit_log_level(x: Array, gamma: Array) -> Array:
    """``level(x)``: ``g(x) = a b^{level}`` (``level = k + [r >= gamma]``, ``|x| = k + r``)."""
    ax = jnp.abs(x)
    k = jnp.floor(ax)
    return k + jnp.where(ax - k >= gamma, 1.0, 0.0)


def _window_integral(lo, hi, pts, decay, gamma, epsilon, d):
    """``int_lo^hi [g(t) - e^eps g(t + d)]_+ dt / a`` for the width-1 staircase, exactly."""
    cuts = jnp.clip(
        jnp.concatenate([pts, pts - d[..., None], lo[..., None], hi[..., None]], -1),
        lo[..., None],
        hi[..., None],
    )
    cuts = jnp.sort(cuts, axis=-1)
    length = cuts[..., 1:] - cuts[..., :-1]
    mid = 0.5 * (cuts[..., 1:] + cuts[..., :-1])
    g_dec = decay[..., None]
    lev1 = _unit_log_level(mid, gamma[..., None])
    lev2 = _unit_log_level(mid + d[..., None], gamma[..., None])
    # g(t) - e^eps g(t + d) = a b^{lev1} (1 - e^{eps - decay (lev2 - lev1)})
    x = epsilon[..., None] - g_dec * (lev2 - lev1)
    neg = x < 0
    val = jnp.exp(-g_dec * lev1) * jnp.where(neg, -jnp.expm1(jnp.where(neg, x, -1.0)), 0.0)
    return jnp.sum(val * length, axis=-1)


@partial(jax.jit, static_argnames=("max_periods",))
@float64_kernel
def log_delta_staircase_shift(
    epsilon: ArrayLike, decay: ArrayLike, gamma: ArrayLike, shift: ArrayLike, max_periods: int = 4
) -> Array:
    r"""``log delta_d(epsilon)``: width-1 staircase, one shift ``d = shift`` in ``(0, M - 2]``.

    .. math:: \delta_d(\epsilon) = \frac{\int_0^1 h + \int_{-d-1}^{-d} h}{1 - e^{-\text{decay}}}
              + \int_{-d}^{0} h,\qquad h(t) = [g(t) - e^{\epsilon} g(t + d)]_+

    (eq. (26) of flipped-huber-mechanism for the staircase density of Geng & Viswanath
    2016, Thm 3; see the module docstring).  Each window is cut at the jump points and
    summed exactly.

    Args:
      epsilon: ``epsilon >= 0``.
      decay: the staircase's decay per period (Geng & Viswanath's epsilon), ``> 0``.
      gamma: the staircase's ``gamma`` in ``(0, 1)``.
      shift: ``d`` in ``(0, max_periods - 2]``, in units of the width.
      max_periods: bound on the jump points generated (static); must exceed ``shift + 2``.

    Returns:
      ``log delta_d(epsilon)``; ``-inf`` for ``d <= 0``.
    """
    epsilon, decay, gamma, d = jnp.broadcast_arrays(
        *(jnp.asarray(x) for x in (epsilon, decay, gamma, shift))
    )
    pts = _unit_points(gamma, max_periods)
    one, zero = jnp.ones_like(d), jnp.zeros_like(d)
    right = _window_integral(zero, one, pts, decay, gamma, epsilon, d)
    left = _window_integral(-d - 1.0, -d, pts, decay, gamma, epsilon, d)
    mid = _window_integral(-d, zero, pts, decay, gamma, epsilon, d)
    b = jnp.exp(-decay)
    omb = -jnp.expm1(-decay)
    log_a = jnp.log(omb) - jnp.log(2.0 * (gamma + (1.0 - gamma) * b))
    total = (right + left) / omb + mid
    return jnp.where(d > 0, log_a + jnp.log(total), -jnp.inf)


def shift_candidates(gamma: ArrayLike, shift: ArrayLike, max_periods: int) -> Array:
    r"""Worst-shift candidates in ``(0, shift]``: where ``delta_d(epsilon)`` may kink in ``d``.

    .. math:: d \in (\mathbb{Z} + \{0, \pm\gamma, \pm 2\gamma\}) \cap (0, s) \ \cup\ \{s\}

    (differences of two jump points ``{+-k, +-(k + gamma)}`` of the staircase of Geng &
    Viswanath 2016; ``delta_d`` is piecewise linear in ``d`` between them, module
    docstring).  Not a privacy kernel: a host-shaped grid of shifts.

    Args:
      gamma: the staircase's ``gamma`` in ``(0, 1)``.
      shift: the sensitivity in units of the width, ``s > 0``.
      max_periods: how many periods of candidates to generate (static).

    Returns:
      Candidates, shape ``broadcast(gamma, shift) + (5 (max_periods + 3) + 1,)``; slots
      outside ``(0, s)`` hold ``s``.
    """
    gamma, s = jnp.broadcast_arrays(jnp.asarray(gamma), jnp.asarray(shift))
    j = jnp.arange(-2, max_periods + 1, dtype=gamma.dtype)
    sig = jnp.array([-2.0, -1.0, 0.0, 1.0, 2.0], dtype=gamma.dtype)
    cand = (j[:, None] + sig[None, :] * gamma[..., None, None]).reshape(gamma.shape + (-1,))
    ok = (cand > 0) & (cand < s[..., None])
    return jnp.concatenate([jnp.where(ok, cand, s[..., None]), s[..., None]], axis=-1)


@partial(jax.jit, static_argnames=("max_periods",))
@float64_kernel
def log_delta_staircase(
    epsilon: ArrayLike,
    decay: ArrayLike,
    width: ArrayLike,
    gamma: ArrayLike,
    sensitivity: ArrayLike,
    max_periods: int = 4,
) -> Array:
    r"""``log sup_{|d| <= Delta} delta_d(epsilon)``: the exact 1-D staircase profile.

    .. math:: \delta(\epsilon) = \max_{d \in \text{candidates}(\gamma, \Delta / w)}
              \delta_{d}(\epsilon)

    (eq. (26) of flipped-huber-mechanism maximised over the shift, for the staircase
    mechanism of Geng & Viswanath 2016; the candidates of :func:`shift_candidates`
    contain every kink of the piecewise-linear ``d -> delta_d``).  Equals ``-inf``
    (``delta = 0``) for ``epsilon >= decay`` when ``Delta <= width`` (Geng & Viswanath
    2016, Thm 3).

    Args:
      epsilon: ``epsilon >= 0``.
      decay: the staircase's decay per period (Geng & Viswanath's epsilon), ``> 0``.
      width: the staircase's period (Geng & Viswanath's Delta), ``> 0``.
      gamma: the staircase's ``gamma`` in ``(0, 1)`` (:mod:`dpjax.noise.staircase`).
      sensitivity: ``Delta > 0``; ``Delta / width`` must be at most ``max_periods - 2``.
      max_periods: bound on the jump points generated (static; the mechanism layer picks
        it).

    Returns:
      ``log delta(epsilon)``, broadcast shape of the inputs.

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> float(log_delta_staircase(1.0, 1.0, 1.0, 0.5, 1.0))  # epsilon = decay: pure DP
      -inf
      >>> round(math.exp(float(log_delta_staircase(0.5, 1.0, 1.0, 0.5, 1.0))), 6)
      0.287649
    """
    epsilon, decay, width, gamma, sens = jnp.broadcast_arrays(
        *(jnp.asarray(x) for x in (epsilon, decay, width, gamma, sensitivity))
    )
    s = sens / width
    cand = shift_candidates(gamma, s, max_periods)
    vals = log_delta_staircase_shift(
        epsilon[..., None], decay[..., None], gamma[..., None], cand, max_periods=max_periods
    )
    return jnp.max(vals, axis=-1)


@float64_kernel
def delta_staircase(epsilon, decay, width, gamma, sensitivity, max_periods: int = 4) -> Array:
    r"""``delta(epsilon)`` of the 1-D staircase mechanism, reported as a certified upper bound.

    .. math:: \delta(\epsilon) = \sup_{0 < d \le \Delta} \int [g(t) - e^{\epsilon} g(t + d)]_+\,dt

    (eq. (26) of flipped-huber-mechanism for the staircase of Geng & Viswanath 2016;
    :func:`log_delta_staircase`) through :func:`dpjax.certificate.reported_delta` with
    :data:`ERROR`.

    Args:
      epsilon: ``epsilon >= 0``.
      decay: the staircase's decay per period, ``> 0``.
      width: the staircase's period, ``> 0``.
      gamma: the staircase's ``gamma`` in ``(0, 1)``.
      sensitivity: ``Delta > 0`` with ``Delta / width <= max_periods - 2``.
      max_periods: bound on the jump points generated (static).

    Returns:
      An upper bound on ``delta(epsilon)``, never below the exact profile.
    """
    return reported_delta(
        log_delta_staircase(epsilon, decay, width, gamma, sensitivity, max_periods=max_periods),
        ERROR,
    )


#: Most periods of the noise that one sensitivity may span in
#: :func:`replace_one_poisson_atoms` (the cells grow linearly with ``Delta / width``).
MAX_SHIFT_PERIODS = 100_000


@float64_kernel
def replace_one_poisson_atoms(
    decay: float, width: float, gamma: float, sampling_rate: float, sensitivity: float = 1.0,
    pessimistic: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact loss atoms of one Poisson-subsampled staircase use under replace-one adjacency.

    .. math:: P = (1 - q)\,T + q\,(T + \Delta),\qquad Q = (1 - q)\,T + q\,(T - \Delta)

    (dp_accounting's ``REPLACE`` pair of a subsampled additive mechanism; Zhu, Dong & Wang
    2022).  In units of the width (``d = Delta / width``) the staircase density
    ``g(x) = a b^{level(x)}`` (``b = e^{-decay}``, ``level = k + [r >= gamma]``, ``|x| =
    k + r``; Geng & Viswanath 2016, eq. (11)) is piecewise constant, so the densities of
    ``P`` and ``Q`` and the loss ``log p / q`` are piecewise constant between the jump
    points of ``g(x)``, ``g(x - d)`` and ``g(x + d)``.  Beyond ``|x| >= d`` all three lose a
    factor ``b`` per period, so the loss is periodic there and the masses geometric (as in
    eq. (26) of flipped-huber-mechanism for the 1-D profile, module docstring):

    .. math:: \text{atoms} = \{(L_c, p_c)\}_{c \subset [-d, d)} \cup
              \{(L_c, p_c / (1 - b))\}_{c \subset [d, d + 1) \cup [-d - 1, -d)}

    with every cell ``c`` cut at the jump points (exact: no truncation, no grid).  The
    loss is not monotone in ``x`` (which is why the PLD engine's monotone pairs cannot
    take this pair); the atoms need no monotonicity.  Each cell's ``log p`` and ``log q``
    are formed in log space (no underflow), and their round-off (at most ``16 u (1 +
    |log|)`` each, ``u = 2^-53``) is added to the loss and to ``log p`` (``pessimistic``:
    larger loss and ``P``-mass, smaller ``Q = p e^{-L}``) or subtracted (a lower bound).
    Host NumPy, concrete inputs.

    Args:
      decay: the staircase's decay per period (Geng & Viswanath's epsilon), ``> 0``.
      width: its period, ``> 0`` (same units as ``sensitivity``).
      gamma: the fraction of a period at the higher level, in ``[0, 1]``.
      sampling_rate: Poisson rate ``q`` in ``(0, 1]``.
      sensitivity: ``Delta > 0``.
      pessimistic: pad the round-off towards more loss (upper bound) or less (lower bound).

    Returns:
      ``(losses, probabilities)``: the atoms under ``P`` (NumPy float64, all losses finite),
      for :func:`dpjax.accounting.pld.from_atoms`.

    Raises:
      ValueError: a parameter out of range, or ``Delta / width >`` :data:`MAX_SHIFT_PERIODS`.

    Example:
      >>> losses, p = replace_one_poisson_atoms(1.0, 1.0, 0.4, 0.2)
      >>> round(float(p.sum()), 12), bool(losses.max() <= 2.0 + 1e-12)
      (1.0, True)
    """
    decay, width, gamma, q, delta = (
        float(v) for v in (decay, width, gamma, sampling_rate, sensitivity))
    if not (math.isfinite(decay) and decay > 0 and math.isfinite(width) and width > 0):
        raise ValueError("decay and width must be finite and > 0")
    if not (0.0 <= gamma <= 1.0 and 0.0 < q <= 1.0 and math.isfinite(delta) and delta > 0):
        raise ValueError("need gamma in [0, 1], sampling_rate in (0, 1] and sensitivity > 0")
    d = delta / width
    if d > MAX_SHIFT_PERIODS:
        raise ValueError(f"sensitivity / width = {d:.3g} periods exceeds {MAX_SHIFT_PERIODS}")
    k = np.arange(math.ceil(2.0 * d + 2.0) + 1, dtype=np.float64)
    jumps = np.concatenate([k, k + gamma])
    jumps = np.concatenate([jumps, -jumps])
    cuts = np.concatenate([jumps, jumps + d, jumps - d, [-d - 1.0, -d, d, d + 1.0]])
    cuts = np.unique(cuts[(cuts >= -d - 1.0) & (cuts <= d + 1.0)])
    length = np.diff(cuts)
    mid = 0.5 * (cuts[1:] + cuts[:-1])
    keep = length > 0.0
    length, mid = length[keep], mid[keep]

    def level(x):
        ax = np.abs(x)
        whole = np.floor(ax)
        return whole + (ax - whole >= gamma)

    log_b_mass = math.log(-math.expm1(-decay))  # log(1 - b)
    log_a = log_b_mass - math.log(2.0 * (gamma + (1.0 - gamma) * math.exp(-decay)))
    log_stay = math.log1p(-q) if q < 1.0 else -np.inf
    log_here = -decay * level(mid)
    with np.errstate(divide="ignore"):
        log_p = np.logaddexp(log_stay + log_here, math.log(q) - decay * level(mid - d))
        log_q = np.logaddexp(log_stay + log_here, math.log(q) - decay * level(mid + d))
    periodic = np.abs(mid) > d  # cells of [d, d + 1) and [-d - 1, -d): every later period
    base = log_a + np.log(length) - np.where(periodic, log_b_mass, 0.0)
    log_p, log_q = base + log_p, base + log_q
    u = np.finfo(np.float64).eps / 2.0
    pad = (1.0 if pessimistic else -1.0) * 16.0 * u
    losses = (log_p - log_q) + pad * (2.0 + np.abs(log_p) + np.abs(log_q))
    probs = np.exp(log_p + pad * (1.0 + np.abs(log_p)))
    return losses, probs
