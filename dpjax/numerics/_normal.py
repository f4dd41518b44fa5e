r"""The standard normal tail in log space.

``Q(x) = P(Z > x)`` for ``Z ~ N(0, 1)``.  Everything that decides a privacy
guarantee uses these in float64; deltas of 1e-300 mean arguments up to ~37,
and the composed accountants go further.

The Mills ratio ``R(x) = Q(x) / phi(x)`` carries the part of ``log Q`` that
does not cancel: ``log Q(x) = -x^2/2 - log(2 pi)/2 + log R(x)``.  Differences
of ``log Q`` at nearby large arguments (the Balle-Wang hockey stick) are
evaluated through ``R`` so the ``x^2/2`` terms cancel exactly in closed form.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.scipy.special import erf, erfcx, ndtri
from jax.typing import ArrayLike

from dpjax.numerics._logspace import log1mexp
from dpjax.numerics._quadrature import legendre_nodes
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_HALF

_LOG_SQRT_PI_OVER_2 = 0.22579135264472744  # log(sqrt(pi / 2))
_LOG_2_SQRT_PI = 1.2655121234846454  # log(2 sqrt(pi))
#: :func:`math.erfc` elementwise (NumPy has no ``erfc``)
_ERFC_HOST = np.frompyfunc(math.erfc, 1, 1)
_SQRT_HALF = 0.7071067811865476


def _erfcx_split(x: Array) -> tuple[Array, Array, Array]:
    """``erfcx(x / sqrt 2)`` for ``x >= 0`` in two parts: ``(big, z_small, series)``.

    Where ``big`` (``z = x / sqrt 2 > 25``), ``erfcx(z) = series / sqrt(pi)`` by the
    asymptotic series ``erfcx(z) = (z sqrt(pi))^-1 sum_k (-1)^k (2k-1)!! (2z^2)^-k``
    (9 terms, error < 1e-17); elsewhere ``erfcx(z) = erfcx(z_small)``.
    ``jax.scipy.special.erfcx`` returns 0 for ``z`` in ~[26.54, 26.64] (jax 0.10.2,
    float64), which made ``log Q(x)`` ``-inf`` for ``x`` in ~[37.54, 37.68], and ``R(x)``
    0 there (a NaN step of the Gaussian profile, so ``delta = 1`` reported at
    ``a = eps/mu - mu/2`` in that window).
    """
    z = x * _SQRT_HALF
    # float32 erfcx also returns 0 for z in ~[9.19, 9.42]; the series is float32-exact above 9
    cut = 25.0 if jnp.result_type(z) == jnp.float64 else 9.0
    big = z > cut
    zs = jnp.where(big, cut, z)
    zb = jnp.where(big, z, cut + 1.0)
    return big, zs, _erfcx_series(zb) / zb


def _erfcx_series(z):
    """``z sqrt(pi) erfcx(z) ~ sum_{k=0}^{8} (-1)^k (2k-1)!! (2z^2)^-k`` for large ``z``
    (Abramowitz & Stegun 7.1.23, Horner form; error < 1e-17 for ``z > 25``), for JAX or
    NumPy arrays alike (arithmetic only)."""
    w = 0.5 / (z * z)
    series = 1.0
    for k in (17, 15, 13, 11, 9, 7, 5, 3, 1):
        series = 1.0 - k * w * series
    return series


def _log_mills_nonneg(x: Array) -> Array:
    """``log R(x)`` for ``x >= 0``: ``log(erfcx(x / sqrt 2) sqrt(pi / 2))``
    (:func:`_erfcx_split`: the asymptotic series for ``x / sqrt 2 > 25``)."""
    big, zs, series = _erfcx_split(x)
    log_big = jnp.log(series) - 0.5723649429247001  # - log sqrt(pi)
    return jnp.where(big, log_big, jnp.log(erfcx(zs))) + _LOG_SQRT_PI_OVER_2


def _mills_nonneg(x: Array) -> Array:
    """``R(x) = erfcx(x / sqrt 2) sqrt(pi / 2)`` for ``x >= 0`` (:func:`_erfcx_split`:
    the asymptotic series for ``x / sqrt 2 > 25``, ``R = series / sqrt 2``)."""
    big, zs, series = _erfcx_split(x)
    return jnp.where(big, series * _SQRT_HALF, erfcx(zs) * 1.2533141373155003)


def _magnitude(x: Array, pos: Array) -> Array:
    """``|x|`` as ``x`` or ``-x`` by ``pos = x >= 0`` (``jnp.abs`` has slope 0 at 0, this has
    slope 1 there, so gradients through ``log Q`` at 0 stay exact).  One evaluation of the
    right branch serves both sides of :func:`log_Q` and :func:`log_mills` (``log Q(x) =
    log(1 - Q(|x|))`` for ``x < 0``): half the program of two."""
    return jnp.where(pos, x, -x)


def _log_Q_nonneg(x: Array) -> Array:
    return -0.5 * x * x - HALF_LOG_2PI + _log_mills_nonneg(x)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def log_Q(x: ArrayLike) -> Array:
    r"""``log Q(x) = log P(Z > x)``, accurate for ``x`` from -40 to beyond 1e6.

    .. math:: \log Q(x) = \begin{cases}
        -x^2/2 - \tfrac12\log(2\pi) + \log R(x) & x \ge 0 \\
        \log(1 - Q(-x)) & x < 0 \end{cases}

    The right branch uses ``erfcx`` (no underflow, relative accuracy ~1e-16) with the
    asymptotic series of ``erfc`` (Abramowitz & Stegun 7.1.23) for ``x / sqrt 2 > 25``;
    the left branch uses :func:`log1mexp`, so ``log Q(-5) ~ -2.9e-7`` keeps full
    relative accuracy (``jax.scipy.special.log_ndtr`` loses ~1e-10 there).
    Differentiable everywhere.  ``Q`` is the standard normal survival function of every
    Gaussian profile (eq. (29) of flipped-huber-mechanism, Lemma 1 of
    inid-noise-laplace-beats-gaussian).

    Args:
      x: argument, any shape, any floating dtype.

    Returns:
      ``log Q(x)``, shape and dtype of ``x``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(log_Q(40.0)), 6)  # Q(40) ~ 3.7e-350 underflows float64; its log does not
      -804.608442
    """
    x = jnp.asarray(x)
    pos = x >= 0
    right = _log_Q_nonneg(_magnitude(x, pos))  # log Q(|x|): one erfcx for both branches
    return jnp.where(pos, right, log1mexp(right))


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def log_mills(x: ArrayLike) -> Array:
    r"""Log of the Mills ratio ``R(x) = Q(x) / phi(x)``.

    .. math:: \log R(x) = \log Q(x) + x^2/2 + \tfrac12 \log(2\pi)

    For ``x >= 0`` it is ``log(erfcx(x / sqrt 2)) + log sqrt(pi/2)``, which has
    no cancellation; for ``x < 0`` the direct form has none either.  It carries the
    part of :func:`log_Q` that does not cancel in the differences of a Gaussian
    hockey stick (Balle & Wang 2018, Thm 8).

    Args:
      x: argument, any shape, any floating dtype.

    Returns:
      ``log R(x)``, shape and dtype of ``x``.
    """
    x = jnp.asarray(x)
    pos = x >= 0
    a = _magnitude(x, pos)
    right = _log_mills_nonneg(a)  # log R(|x|): one erfcx for both branches
    log_q = log1mexp(-0.5 * a * a - HALF_LOG_2PI + right)  # log Q(x) = log(1 - Q(|x|)), x < 0
    return jnp.where(pos, right, log_q + 0.5 * a * a + HALF_LOG_2PI)


def log_Q_host(x) -> np.ndarray:
    r"""``log Q(x)`` in NumPy: the host twin of :func:`log_Q` (same branches, no SciPy).

    .. math:: \log Q(x) = \begin{cases}
        \log(\tfrac12 \operatorname{erfc}(x/\sqrt2)) & 0 \le x \le 25\sqrt2 \\
        -\tfrac{x^2}{2} - \log\tfrac{x}{\sqrt2} - \tfrac12\log\pi - \log 2
        + \log S(x) & x > 25\sqrt2 \\
        \operatorname{log1p}(-Q(-x)) & x < 0 \end{cases}

    with the C library's ``erfc`` (:func:`math.erfc`, a few ulps; it does not underflow
    below ``x = 25 sqrt 2``) and ``S`` the 9-term asymptotic series of ``erfcx`` that
    :func:`log_Q` uses (Abramowitz & Stegun 7.1.23, error below 1e-17).  For the host bounds
    whose SciPy ``log_ndtr`` cost a ``dpjax account`` command more than the bounds
    themselves (issue 36): the RDP tails of
    :mod:`dpjax.accounting.rdp.subsampled_gaussian`.

    Args:
      x: float64 array-like, any shape.

    Returns:
      ``log Q(x)``, NumPy float64 of the shape of ``x`` (``0`` at ``-inf``, ``-inf`` at
      ``inf``).

    Example:
      >>> round(float(log_Q_host(40.0)), 6)  # as log_Q: Q(40) underflows, its log does not
      -804.608442
    """
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    z = a * _SQRT_HALF
    big = z > 25.0
    erfc = np.asarray(_ERFC_HOST(np.where(big, 25.0, z)), np.float64)
    zb = np.where(big, z, 26.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        far = -0.5 * a * a - np.log(zb) - _LOG_2_SQRT_PI + np.log(_erfcx_series(zb))
        right = np.where(big, far, np.log(0.5 * erfc))  # log Q(|x|)
        return np.where(x >= 0, right, np.log1p(-np.exp(right)))


def log_Q_inv_host(log_p, num_newton: int = 8) -> np.ndarray:
    r"""``Q^{-1}(p)`` from ``log p`` in NumPy: the host twin of :func:`log_Q_inv` (and of
    ``-scipy.special.ndtri_exp``), by Newton's method on :func:`log_Q_host`.

    .. math:: x \leftarrow x + R(x)\,(\log Q(x) - \log p),\qquad
              R(x) = e^{\log Q(x) + x^2/2}\sqrt{2\pi}

    For ``p <= 1/2`` it starts at ``sqrt(max(2L - log 2L - log 2 pi, 0))``, ``L = -log p``
    (the asymptotic inverse, left of the root); ``log Q`` is concave and decreasing, so
    the first step lands right of the root and the next ones descend to it.  ``p > 1/2``
    is ``-Q^{-1}(1 - p)``.  For the ends of a grid (:meth:`dpjax.noise.Gaussian.tail_point`),
    where only the placement depends on it.

    Args:
      log_p: ``log p`` with ``p`` in ``(0, 1)``, any shape.
      num_newton: Newton steps (8: to round-off from every start).

    Returns:
      NumPy float64 of the shape of ``log_p``: ``-inf`` at ``log_p = 0``, ``inf`` at
      ``-inf``, ``nan`` above 0.

    Example:
      >>> round(float(log_Q_inv_host(log_Q_host(37.6))), 12)
      37.6
    """
    log_p = np.asarray(log_p, np.float64)
    upper = log_p > LOG_HALF
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # the lower half: log q = log p, or log(1 - p) for p > 1/2 (then x = -Q^{-1}(1 - p))
        log_q = np.where(upper, np.log(-np.expm1(np.minimum(log_p, 0.0))), log_p)
        safe = np.where(np.isfinite(log_q) & (log_q < 0), log_q, LOG_HALF)
        two_l = -2.0 * safe
        x = np.sqrt(np.maximum(two_l - np.log(two_l) - 2.0 * HALF_LOG_2PI, 0.0))
        for _ in range(num_newton):
            lq = log_Q_host(x)
            step = np.exp(lq + 0.5 * x * x + HALF_LOG_2PI) * (lq - safe)
            x = np.where(np.isfinite(step), x + step, x)
    x = np.where(upper, -x, x)
    x = np.where(log_p == 0, -np.inf, x)
    x = np.where(log_p == -np.inf, np.inf, x)
    return np.where((log_p > 0) | np.isnan(log_p), np.nan, x)


@functools.partial(jax.jit, static_argnames="num_newton")  # eagerly: a new loop at each call
def log_Q_inv(log_p: ArrayLike, num_newton: int = 4) -> Array:
    r"""Inverse of :func:`log_Q`: the ``x`` with ``log Q(x) = log_p``.

    .. math:: x \leftarrow x + R(x)\,(\log Q(x) - \log p),\qquad
              \frac{d \log Q}{dx} = -\frac{1}{R(x)}

    Accurate for ``p`` from ``1 - 1e-16`` down to ``exp(-1e7)`` (far below the
    1e-300 that float64 probabilities reach).  An initial guess (``ndtri``
    where ``p`` is representable, the asymptotic expansion
    ``x ~ sqrt(2L - log(2L) - log 2pi)`` with ``L = -log p`` below) is
    polished by Newton steps on ``log Q`` (above).  It gives ``Q^{-1}`` of the
    tiny arguments of ``theta`` (eq. (22) of flipped-huber-mechanism) and of the
    tail samplers.

    Args:
      log_p: ``log p`` with ``p`` in ``[0, 1]`` (integers are promoted to float).
      num_newton: number of Newton steps after the initial guess (static).

    Returns:
      ``Q^{-1}(p)``: ``-inf`` for ``log_p = 0``, ``+inf`` for ``log_p = -inf``,
      ``nan`` for ``log_p > 0``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(log_Q_inv(log_Q(37.6))), 12)
      37.6
    """
    log_p = jnp.asarray(log_p)
    if not jnp.issubdtype(log_p.dtype, jnp.floating):
        log_p = log_p.astype(jnp.result_type(float))
    dtype = log_p.dtype
    tiny_log = jnp.log(jnp.finfo(dtype).tiny) + 1.0
    representable = log_p > tiny_log
    lp_rep = jnp.where(representable, log_p, -1.0)
    lp_far = jnp.where(representable, -1000.0, log_p)
    upper = lp_rep > LOG_HALF
    # one ndtri for both halves (each entry's own argument): half the program of two
    root = ndtri(jnp.where(upper, -jnp.expm1(jnp.where(upper, lp_rep, -1.0)),
                           jnp.exp(jnp.where(upper, -1.0, lp_rep))))
    guess_rep = jnp.where(upper, root, -root)
    two_l = -2.0 * lp_far
    guess_far = jnp.sqrt(two_l - jnp.log(two_l) - 2.0 * HALF_LOG_2PI)
    x = jnp.where(representable, guess_rep, guess_far)
    finite = jnp.isfinite(log_p) & (log_p < 0)
    x = jnp.where(finite, x, 0.0)
    lp_safe = jnp.where(finite, log_p, -1.0)

    def newton(_, x):
        step = jnp.exp(log_mills(x)) * (log_Q(x) - lp_safe)
        return jnp.where(jnp.isfinite(step), x + step, x)

    x = jax.lax.fori_loop(0, num_newton, newton, x)
    x = jnp.where(log_p == 0, -jnp.inf, x)
    x = jnp.where(log_p == -jnp.inf, jnp.inf, x)
    return jnp.where(log_p > 0, jnp.nan, x)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def Q_inv(p: ArrayLike) -> Array:
    r"""Inverse normal survival function ``Q^{-1}(p)`` for ``p`` in ``[0, 1]``.

    .. math:: Q^{-1}(p) = \begin{cases} \text{log\_Q\_inv}(\log p) & p \le \tfrac12 \\
              -\text{log\_Q\_inv}(\log(1 - p)) & p > \tfrac12 \end{cases}

    Accurate in relative terms for ``p`` down to the smallest float64
    (``~5e-324``) and, by the symmetry ``Q^{-1}(p) = -Q^{-1}(1 - p)``, near 1.
    ``theta = gamma Q^{-1}(sqrt(pi/2) / omega)`` of eq. (22) of flipped-huber-mechanism
    is one use.

    Args:
      p: probability in ``[0, 1]``, any shape.

    Returns:
      ``Q^{-1}(p)``, shape of ``p``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> round(float(Q_inv(0.025)), 6)
      1.959964
    """
    p = jnp.asarray(p)
    upper = p > 0.5
    p_lo = jnp.where(upper, 0.5, p)
    p_hi = jnp.where(upper, p, 0.5)
    # one log_Q_inv for both halves (each entry's own argument): half the program of two
    x = log_Q_inv(jnp.where(upper, jnp.log1p(-p_hi), jnp.log(p_lo)))
    return jnp.where(upper, -x, x)


def _x_mills_minus_one(x: Array) -> Array:
    r"""``x R(x) - 1 = R'(x)`` for ``x >= 0`` without cancellation at large ``x``.

    For ``x >= 20`` the asymptotic series
    ``sum_{k>=1} (-1)^k (2k-1)!! / x^{2k}`` (12 terms; relative error < 1e-15)
    replaces the direct form, which loses ``~1e-16 x^2`` relative accuracy.
    """
    big = x >= 20.0
    xb = jnp.where(big, x, 20.0)
    xs = jnp.where(big, 0.0, x)
    inv2 = 1.0 / (xb * xb)
    nested = jnp.ones_like(xb)  # -y (1 - 3y (1 - 5y (1 - 7y (...)))), y = 1/x^2
    for k in range(11, 0, -1):
        nested = 1.0 - (2 * k + 1) * inv2 * nested
    series = -inv2 * nested
    direct = xs * _mills_nonneg(xs) - 1.0
    return jnp.where(big, series, direct)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def log_mills_step(a: ArrayLike, h: ArrayLike) -> Array:
    r"""``log R(a + h) - log R(a)`` for ``a >= 0``, ``h >= 0``, accurate when ``h << a``.

    A plain difference of :func:`log_mills` loses ``~1e-16 |log R| / |result|``
    relative accuracy (1e-10 and worse for the steps of a Gaussian profile at
    delta ~ 1e-300).  Instead, with ``R'(x) = x R(x) - 1``,

    .. math:: \log\frac{R(a+h)}{R(a)} = \mathrm{log1p}\!\left(
              \frac{1}{R(a)} \int_a^{a+h} (x R(x) - 1)\,dx\right),

    the integrand being smooth and evaluated with a 16-point Gauss-Legendre
    rule; for ``h`` comparable to ``1 + a`` the plain difference is used.  Used by
    the Gaussian hockey stick (eq. (29) of flipped-huber-mechanism) at
    ``b = a + Delta / sigma``.

    Args:
      a: left end, ``a >= 0``.
      h: step, ``h >= 0`` (broadcast against ``a``).

    Returns:
      ``log R(a + h) - log R(a)`` (``<= 0``, ``R`` being decreasing).
    """
    a, h = jnp.asarray(a), jnp.asarray(h)
    small = h < 0.5 * (1.0 + a)
    hs = jnp.where(small, h, 0.0)
    nodes, weights = legendre_nodes(16)
    # cast the (read-only, cached) float64 rule to a's dtype: with x64 off JAX may hand back
    # a cached float64 constant, which strict promotion rejects
    dt = a.dtype if jnp.issubdtype(a.dtype, jnp.floating) else jnp.result_type(float)
    x = a[..., None] + 0.5 * hs[..., None] * (jnp.asarray(nodes, dt) + 1.0)
    integrand = _x_mills_minus_one(x)
    integral = 0.5 * hs * jnp.sum(integrand * jnp.asarray(weights, dt), axis=-1)
    step_small = jnp.log1p(integral / _mills_nonneg(a))
    step_big = _log_mills_nonneg(a + h) - _log_mills_nonneg(a)
    return jnp.where(small, step_small, step_big)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def log_hockey_stick(a: ArrayLike, b: ArrayLike, epsilon: ArrayLike) -> Array:
    r"""``log(Q(a) - e^eps Q(b))`` without cancellation; ``-inf`` where it is ``<= 0``.

    This is the Balle-Wang form of every Gaussian-type privacy profile
    (Balle & Wang 2018, Thm 8; eq. (29) of flipped-huber-mechanism, Lemma 1 of
    inid-noise-laplace-beats-gaussian): with ``t = eps + log Q(b) - log Q(a)``,

    .. math:: \log(Q(a) - e^{\epsilon} Q(b)) = \log Q(a) + \log(1 - e^{t}).

    ``t`` is evaluated as ``eps - (b - a)(b + a)/2 + log R(b) - log R(a)``
    when both arguments are non-negative (so the ``x^2/2`` parts of the two
    logarithms cancel in closed form), and directly otherwise.  When
    ``a < 0 <= b`` the difference is formed linearly as
    ``(erf(b/sqrt2) + erf(-a/sqrt2))/2 - expm1(eps) Q(b)``, which keeps full
    relative accuracy as ``a, b -> 0`` (tiny ``mu`` at ``epsilon ~ 0``).

    Args:
      a: argument of the first tail (``eps / mu - mu / 2`` for a Gaussian).
      b: argument of the second tail (``eps / mu + mu / 2``), ``b >= a``.
      epsilon: ``eps >= 0``.  The three broadcast together.

    Returns:
      ``log(Q(a) - e^eps Q(b))``, ``-inf`` where the difference is not positive.

    Example:
      >>> import jax, math; jax.config.update("jax_enable_x64", True)
      >>> mu = 1.0  # Gaussian with Delta / sigma = 1 at eps = 1: delta ~ 0.1269
      >>> round(math.exp(float(log_hockey_stick(1.0 / mu - mu / 2, 1.0 / mu + mu / 2, 1.0))), 6)
      0.126937
    """
    a, b, epsilon = jnp.asarray(a), jnp.asarray(b), jnp.asarray(epsilon)
    both_pos = (a >= 0) & (b >= 0)
    a_p, b_p = jnp.where(both_pos, a, 1.0), jnp.where(both_pos, b, 1.0)
    t_mills = epsilon - 0.5 * (b_p - a_p) * (b_p + a_p) + log_mills(b_p) - log_mills(a_p)
    log_qa = log_Q(a)
    t_direct = epsilon + log_Q(b) - log_qa
    t = jnp.where(both_pos, t_mills, t_direct)
    negative = t < 0
    t_safe = jnp.where(negative, t, -1.0)
    generic = jnp.where(negative, log_qa + log1mexp(t_safe), -jnp.inf)
    straddle = (a < 0) & (b >= 0)
    a_s, b_s = jnp.where(straddle, a, -1.0), jnp.where(straddle, b, 1.0)
    return jnp.where(straddle, log_hockey_stick_straddle(a_s, b_s, epsilon), generic)


@jax.jit  # eagerly, every primitive compiles at each new shape: one program instead
def log_hockey_stick_straddle(a: ArrayLike, b: ArrayLike, epsilon: ArrayLike) -> Array:
    r"""``log(Q(a) - e^eps Q(b))`` for ``a < 0 <= b`` (``-inf`` where it is ``<= 0``).

    .. math:: Q(a) - e^{\epsilon} Q(b) = \tfrac12\left(\mathrm{erf}(b/\sqrt2)
              + \mathrm{erf}(-a/\sqrt2)\right) - \mathrm{expm1}(\epsilon)\, Q(b)

    The first term is a sum of positives (``log Q(a) - log Q(b)`` cancels as
    ``a, b -> 0``); ``expm1(eps) Q(b)`` is formed in log space (no ``inf * 0``).
    The branch of :func:`log_hockey_stick` (Balle & Wang 2018, Thm 8) for small
    ``epsilon`` and ``mu``.

    Args:
      a: first argument, ``a < 0``.
      b: second argument, ``b >= 0``.
      epsilon: ``eps >= 0``.

    Returns:
      ``log(Q(a) - e^eps Q(b))``, ``-inf`` where the difference is not positive.
    """
    a, b, epsilon = jnp.asarray(a), jnp.asarray(b), jnp.asarray(epsilon)
    mass = 0.5 * (erf(b * _SQRT_HALF) + erf(-a * _SQRT_HALF))
    eps_pos = epsilon > 0
    eps_safe = jnp.where(eps_pos, epsilon, 1.0)
    log_em1 = jnp.where(eps_pos, eps_safe + log1mexp(-eps_safe), -jnp.inf)  # log expm1(eps)
    diff = mass - jnp.exp(log_em1 + log_Q(b))
    pos = diff > 0
    return jnp.where(pos, jnp.log(jnp.where(pos, diff, 1.0)), -jnp.inf)
