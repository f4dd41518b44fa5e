r"""Unbiased epsilon-LDP channels for vectors in an l2 ball, vectorised over users.

Two channels share one interface (:class:`Channel`): host-side
``parameters(epsilon, dim, radius)`` computes the constants in log space (stable
for ``dim`` up to ``1e5`` and beyond), and the pure-JAX ``sample(key, v, params,
mask)`` draws one report per row of ``v`` with one PRNG key (jit/vmap-safe, no
rejection loops).  Both outputs have a constant norm, so for an input ``v`` of the
ball the total variance is exact: ``E|Z - v|^2 = |Z|^2 - |v|^2``.

* :data:`DUCHI` -- the l2-ball channel of Duchi, Jordan & Wainwright (Mechanism 2
  of bayesian-coordinate-dp).  With ``pi = e^a / (1 + e^a)`` it rounds ``v`` to
  ``±r v/|v|`` (probabilities ``1/2 ± |v|/(2r)``) and returns a point uniform on the
  hemisphere of radius ``B`` around that direction (with probability ``pi``) or
  around its opposite, where

  .. math:: B = r \coth(a/2)\, \sqrt{\pi}\, \Gamma(\tfrac{m+1}{2}) / \Gamma(\tfrac{m}{2}),

  the constant that makes ``E Z = v`` (``1 / E|U_1|`` for ``U`` uniform on
  ``S^{m-1}``).  The paper prints ``sqrt(pi) m r coth(a/2) Gamma((m+1)/2) /
  Gamma(m/2 + 1)``, which is exactly twice this (``m / Gamma(m/2+1) = 2 /
  Gamma(m/2)``): with it ``E Z = 2 v``.
* :data:`PRIVUNIT` -- PrivUnit2 of Bhowmick et al. (2018) after the same
  rounding to the sphere: with probability ``p`` a direction uniform on the cap
  ``{w: <w, u> >= gamma}``, else uniform on its complement, scaled to be unbiased.
  The budget is split ``a = a_0 + a_1`` with ``p = e^{a_0}/(1 + e^{a_0})`` and cap
  mass ``P = 1/(1 + e^{a_1})`` under the uniform law, so the density ratio is
  exactly ``e^a``; the split maximising the unbiasing factor (least variance) is
  chosen on a grid.  The angle between ``w`` and ``u`` (or ``-u`` off the cap) is
  drawn by the inverse of its distribution function ``I_{sin^2(beta/2)}((m-1)/2,
  (m-1)/2)`` restricted to the region (:mod:`dpjax.bcdp._cap`: knots from SciPy's
  ``betaincinv`` once per constants, a fixed number of Newton steps per report).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from dpjax.bcdp import _cap
from dpjax.numerics.constants import LOG_2
from dpjax.numerics.lazy_scipy import special as sps

#: candidate fractions of the budget spent on the cap (PrivUnit2's split search)
_SPLIT_GRID = np.linspace(0.02, 0.98, 49)


class ChannelParameters(NamedTuple):
    """Constants of one channel call (arrays broadcastable over the users' batch).

    Attributes:
      epsilon: the LDP level ``a`` the constants certify.
      dim: the input dimension ``m``.
      radius: the ball radius ``r``.
      norm: the constant output norm ``|Z|``.
      keep_prob: probability of the "towards the input" event (``pi`` or ``p``).
      gamma: PrivUnit2's cap threshold on ``<w, u>`` (``0`` for Duchi).
      cap_mass: uniform mass of the cap (``1/2`` for Duchi's hemisphere).
      table: PrivUnit2's inverse-CDF knots (:func:`dpjax.bcdp._cap.cap_tables`, shape
        ``leading + (2, 2, knots)``), ``None`` for Duchi.
    """

    epsilon: Array
    dim: Array
    radius: Array
    norm: Array
    keep_prob: Array
    gamma: Array
    cap_mass: Array
    table: Array | None = None


def _check(epsilon, dim, radius):
    epsilon = np.asarray(epsilon, dtype=np.float64)
    dim = np.asarray(dim)
    radius = np.asarray(radius, dtype=np.float64)
    if not np.all(np.isfinite(epsilon) & (epsilon > 0)):
        raise ValueError(f"channel epsilon must be finite and > 0, got {epsilon}")
    if not np.all((dim >= 1) & (dim == np.floor(dim))):
        raise ValueError(f"channel dim must be an integer >= 1, got {dim}")
    if not np.all(np.isfinite(radius) & (radius > 0)):
        raise ValueError(f"channel radius must be finite and > 0, got {radius}")
    return np.broadcast_arrays(epsilon, dim.astype(np.float64), radius)


def log_duchi_norm(epsilon, dim, radius) -> np.ndarray:
    r"""``log B`` of the unbiased Duchi channel, in log space (module docstring).

    .. math:: \log B = \log r + \log\coth(a/2) + \tfrac12\log\pi
       + \log\Gamma(\tfrac{m+1}{2}) - \log\Gamma(\tfrac{m}{2}),\quad
       \log\coth(a/2) = \operatorname{log1p}(2/\operatorname{expm1}(a)).

    Args:
      epsilon: LDP level ``a > 0``.
      dim: dimension ``m >= 1``.
      radius: ball radius ``r > 0``.

    Example:
      >>> round(float(np.exp(log_duchi_norm(1.0, 1, 1.0))), 6)  # randomized response: coth(1/2)
      2.163953
    """
    a, m, r = _check(epsilon, dim, radius)
    return (np.log(r) + np.log1p(2.0 / np.expm1(a)) + 0.5 * np.log(np.pi)
            + sps.gammaln((m + 1) / 2) - sps.gammaln(m / 2))


def _privunit_log_gain(a0, a1, m):
    """``log E<V, u>`` of PrivUnit2 for the split ``(a0, a1)`` and cap ``P = 1/(1+e^{a1})``."""
    half = (m - 1) / 2
    cap = sps.expit(-a1)
    tau = sps.betaincinv(half, half, 1.0 - cap)  # P(s >= tau) = cap, s ~ Beta(half, half)
    gamma = 2.0 * tau - 1.0
    cap = sps.betainc(half, half, 1.0 - tau)  # the mass of the cap actually used
    p = sps.expit(a0)
    # E<V,u> = K (p/P - (1-p)/(1-P)),  K = (1-gamma^2)^half / ((m-1) 2^(m-2) B(half, half))
    log_k = (half * np.log1p(-gamma * gamma) - np.log(m - 1) - (m - 2) * LOG_2
             - sps.betaln(half, half))
    bracket = p / cap - (1.0 - p) / (1.0 - cap)
    return log_k + np.log(np.maximum(bracket, 1e-300)), gamma, cap


def privunit_parameters(epsilon, dim, radius, table: bool = True) -> ChannelParameters:
    r"""PrivUnit2's constants for LDP level ``epsilon`` (module docstring), host-side float64.

    The cap mass actually realised, ``P = I_{(1-gamma)/2}((m-1)/2, (m-1)/2)``, is
    recomputed from ``gamma``; the remaining budget ``a_0 = a - log((1-P)/P)``,
    less ``1e-12 a + 1e-15`` against rounding, sets ``p``; the split ``a_1 = 0``
    (``gamma = 0``, ``P = 1/2`` exactly, ``a_0 = a (1 - 1e-12)``) is always a
    candidate.  So the channel's exact density ratio ``p (1 - P) / ((1 - p) P)`` is
    at most ``e^a``.  For ``m = 1`` the sphere is ``{-1, +1}``: randomized response.

    Args:
      epsilon: LDP level ``a > 0``.
      dim: dimension ``m >= 1``.
      radius: ball radius ``r > 0``.
      table: also build the sampler's inverse-CDF knots (``False`` for the moments
        alone: variance bounds need no sampling).

    Returns:
      The :class:`ChannelParameters` (``norm = r / E<V, u>``).

    Example:
      >>> prm = privunit_parameters(2.0, 5, 1.0)
      >>> bool(prm.keep_prob > 0.5 and prm.gamma > 0)
      True
    """
    a, m, r = _check(epsilon, dim, radius)
    shape = a.shape
    a, m, r = a.ravel(), m.ravel(), r.ravel()
    a_in = a * (1 - 1e-12)
    keep = sps.expit(a_in)
    norm = r / (2.0 * keep - 1.0)  # m = 1: randomized response on {-r, r}
    gamma = np.zeros_like(a)
    cap = np.full_like(a, 0.5)
    slack = 1e-12 * a + 1e-15  # against rounding in the realised cap mass
    sphere = m > 1
    if np.any(sphere):
        aa, mm, rr = a[sphere, None], m[sphere, None], r[sphere]
        # split 0: the hemisphere (gamma = 0, P = 1/2 exactly by symmetry), always valid
        log_gain0 = _privunit_log_gain(a_in[sphere], 0.0, mm[:, 0])[0]
        a1 = _SPLIT_GRID * aa  # (rows, splits)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            _, g, pc = _privunit_log_gain(0.0, a1, mm)  # gamma, P of each split
            a0 = aa - np.log((1.0 - pc) / pc) - slack[sphere, None]
            log_gain = _privunit_log_gain(np.where(a0 > 0, a0, 1.0), a1, mm)[0]
        log_gain = np.where((a0 > 0) & np.isfinite(log_gain), log_gain, -np.inf)
        k = np.argmax(log_gain, axis=1)  # the first best split, as a sequential scan
        rows = np.arange(k.size)
        better = log_gain[rows, k] > log_gain0
        best = np.where(better, log_gain[rows, k], log_gain0)
        norm[sphere] = rr * np.exp(-best)
        gamma[sphere] = np.where(better, g[rows, k], 0.0)
        cap[sphere] = np.where(better, pc[rows, k], 0.5)
        keep[sphere] = np.where(better, sps.expit(a0[rows, k]), sps.expit(a_in[sphere]))
    out = [x.reshape(shape) for x in (a, m, r, norm, keep, gamma, cap)]
    return ChannelParameters(*out, _cap.cap_tables(out[1], out[5]) if table else None)


def duchi_parameters(epsilon, dim, radius, table: bool = True) -> ChannelParameters:
    """The unbiased Duchi channel's constants (module docstring), host-side float64.

    Args:
      epsilon: LDP level ``a > 0``.
      dim: dimension ``m >= 1``.
      radius: ball radius ``r > 0``.
      table: unused (the hemisphere needs no table; the signature is PrivUnit2's).

    Example:
      >>> round(float(duchi_parameters(1.0, 3, 1.0).norm), 6)  # 2 coth(1/2)
      4.327907
    """
    a, m, r = _check(epsilon, dim, radius)
    return ChannelParameters(a, m, r, np.exp(log_duchi_norm(a, m, r)), sps.expit(a),
                             np.zeros_like(a), np.full_like(a, 0.5))


def as_arrays(params: ChannelParameters, dtype=None) -> ChannelParameters:
    """``params`` with every field a JAX array of ``dtype`` (a missing table stays ``None``)."""
    return jax.tree.map(lambda x: jnp.asarray(x, dtype=dtype), params)


def _round_to_sphere(key, v, radius, norm_v):
    """``±v/|v|`` with probabilities ``1/2 ± |v|/(2r)`` (any unit vector when ``v = 0``)."""
    toward = jax.random.uniform(key, norm_v.shape, dtype=v.dtype) < 0.5 + norm_v / (2 * radius)
    safe = jnp.where(norm_v > 0, norm_v, 1.0)
    return v / safe[..., None], jnp.where(toward, 1.0, -1.0)


def sample(key: Array, v: Array, params: ChannelParameters, mask: Array | None = None, *,
           hemisphere: bool = False) -> Array:
    r"""One report per row of ``v`` from the channel whose constants are ``params``.

    Both channels share this kernel: ``gamma = 0, cap_mass = 1/2`` is Duchi's
    hemisphere, anything else PrivUnit2's cap.  The inner product ``t = <w, u>``
    with the rounded direction ``u`` is drawn from the law of ``t`` under the
    uniform distribution on ``S^{m-1}`` (``(1+t)/2 ~ Beta((m-1)/2, (m-1)/2)``)
    restricted to the cap or its complement, by the inverse CDF; the rest of
    ``w`` is uniform on the orthogonal sphere.  Pure JAX, no rejection.

    Args:
      key: one PRNG key for the whole batch.
      v: inputs, shape ``(..., m_max)``, each row in the ball of radius ``params.radius``.
      params: :class:`ChannelParameters` broadcastable to ``v.shape[:-1]``.
      mask: optional 0/1 array like ``v``: the coordinates each row uses (its
        dimension ``m`` is the row's count; masked coordinates of the report are 0).
      hemisphere: static; ``True`` for Duchi's channel (``gamma = 0``, ``P = 1/2``):
        the same law drawn as a Gaussian direction flipped into the chosen
        hemisphere, without the inverse CDF.

    Returns:
      Reports, shape of ``v``, unbiased: ``E Z = v``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> prm = duchi_parameters(1.0, 3, 1.0)
      >>> z = sample(jax.random.key(0), jnp.zeros((4, 3)), prm, hemisphere=True)
      >>> z.shape, bool(jnp.allclose(jnp.linalg.norm(z, axis=-1), 4.327906, atol=1e-6))
      ((4, 3), True)
    """
    v = jnp.asarray(v)
    dtype = v.dtype
    mask = jnp.ones_like(v) if mask is None else jnp.asarray(mask, dtype=dtype)
    batch = v.shape[:-1]
    table = params.table
    prm = [jnp.broadcast_to(jnp.asarray(x, dtype=dtype), batch) for x in params[:7]]
    _, dim, radius, norm, keep_prob, gamma, cap = prm
    k_round, k_keep, k_t, k_g = jax.random.split(key, 4)
    norm_v = jnp.linalg.norm(v * mask, axis=-1)
    # direction of v (e_first used when v = 0: any unit vector of the row's span works)
    first = (jnp.cumsum(mask, axis=-1) == 1).astype(dtype) * mask
    unit, sign = _round_to_sphere(k_round, v * mask, radius, norm_v)
    unit = jnp.where((norm_v > 0)[..., None], unit, first) * sign[..., None]
    in_cap = jax.random.uniform(k_keep, batch, dtype=dtype) < keep_prob
    if hemisphere:  # Duchi: a Gaussian direction flipped into the chosen hemisphere
        g = jax.random.normal(k_g, v.shape, dtype=dtype) * mask
        g = g / jnp.linalg.norm(g, axis=-1, keepdims=True)
        side = jnp.sign(jnp.sum(g * unit, axis=-1)) * jnp.where(in_cap, 1.0, -1.0)
        return (norm * side)[..., None] * g
    if table is None:
        raise ValueError("PrivUnit2 sampling needs the constants' inverse-CDF table")
    # the angle beta to the pole of the chosen region (u on the cap, -u off it), drawn by
    # the inverse CDF of its law restricted to the region; one flat table for all rows
    table = np.asarray(table) if not isinstance(table, jax.Array) else table
    lead = table.shape[:-3]
    row = jnp.broadcast_to(jnp.arange(int(np.prod(lead)), dtype=jnp.int32).reshape(lead), batch)
    region = jnp.where(in_cap, 0, 1)
    uni = jax.random.uniform(k_t, batch, dtype=dtype)
    mass = jnp.where(in_cap, cap, 1 - cap)
    beta = _cap.sample_angle(uni, dim, mass, table, row, region)
    pole = jnp.where(in_cap, 1.0, -1.0)
    cos_b = jnp.where(dim > 1, pole * jnp.cos(beta), pole)  # m = 1: the sphere is {u, -u}
    sin_b = jnp.where(dim > 1, jnp.sin(beta), 0.0)
    g = jax.random.normal(k_g, v.shape, dtype=dtype) * mask
    g = g - jnp.sum(g * unit, axis=-1, keepdims=True) * unit
    g_norm = jnp.linalg.norm(g, axis=-1, keepdims=True)
    ortho = g / jnp.where(g_norm > 0, g_norm, 1.0)
    w = cos_b[..., None] * unit + sin_b[..., None] * ortho
    return norm[..., None] * w


def log_density(z: Array, v: Array, params: ChannelParameters) -> Array:
    r"""Exact log density of the report ``z`` given the input ``v``, relative to the uniform law
    on the output sphere of radius ``params.norm`` (the channel's whole output law).

    With ``u = v/|v|``, ``rho_+ = 1/2 + |v|/(2r)``, ``t = <z/|z|, u>``:

    .. math:: f(z | v) = \rho_+ g(t) + (1 - \rho_+) g(-t),\quad
       g(t) = p / P \text{ if } t \ge \gamma \text{ else } (1-p)/(1-P).

    Args:
      z: reports, shape ``(..., m)`` (on the output sphere).
      v: inputs, broadcastable to ``z``.
      params: the channel's constants (scalars).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> prm = duchi_parameters(1.0, 2, 1.0)
      >>> v = jnp.array([1.0, 0.0])
      >>> z = prm.norm * jnp.array([[1.0, 0.0], [-1.0, 0.0]])
      >>> float(jnp.diff(log_density(z, v, prm))[0])  # log((1-pi)/pi) = -epsilon
      -1.0
    """
    z = jnp.asarray(z)
    v = jnp.asarray(v, dtype=z.dtype)
    nv = jnp.linalg.norm(v, axis=-1)
    u = v / jnp.where(nv > 0, nv, 1.0)[..., None]
    w = z / jnp.linalg.norm(z, axis=-1, keepdims=True)
    t = jnp.sum(w * u, axis=-1)
    p, gamma, cap = (jnp.asarray(x, dtype=z.dtype) for x in
                     (params.keep_prob, params.gamma, params.cap_mass))

    def g(tt):
        return jnp.where(tt >= gamma, p / cap, (1 - p) / (1 - cap))

    rho = 0.5 + nv / (2 * jnp.asarray(params.radius, dtype=z.dtype))
    return jnp.log(rho * g(t) + (1 - rho) * g(-t))


def exact_ldp_epsilon(params: ChannelParameters) -> np.ndarray:
    r"""The channel's exact LDP level ``log sup_{z, v, v'} f(z|v)/f(z|v')`` (host-side).

    The density takes the two values ``p/P`` and ``(1-p)/(1-P)`` at inputs on the
    sphere (mixtures of them inside the ball), so the supremum is
    ``|log(p (1 - P) / ((1 - p) P))|``.

    Args:
      params: the channel's constants.

    Example:
      >>> float(np.round(exact_ldp_epsilon(duchi_parameters(0.7, 4, 2.0)), 12))
      0.7
    """
    p = np.asarray(params.keep_prob, dtype=np.float64)
    cap = np.asarray(params.cap_mass, dtype=np.float64)
    return np.abs(np.log(p) - np.log1p(-p) + np.log1p(-cap) - np.log(cap))


class Channel(NamedTuple):
    """An unbiased LDP channel for the l2 ball: a name and its host-side constants.

    Attributes:
      name: ``"duchi"`` or ``"privunit"``.
      parameters: ``(epsilon, dim, radius, table=True) -> ChannelParameters``.

    Sampling is :func:`sample` with those constants.
    """

    name: str
    parameters: object

    def sample(self, key: Array, v: Array, epsilon: float, radius: float) -> Array:
        """Reports for the rows of ``v`` (``(n, m)``) at LDP level ``epsilon``, ball ``radius``.

        Args:
          key: one PRNG key.
          v: inputs, shape ``(n, m)``, rows of l2 norm at most ``radius``.
          epsilon: LDP level ``> 0``.
          radius: ball radius ``> 0``.

        Raises:
          ValueError: a row outside the ball, or bad constants.
        """
        v = jnp.asarray(v)
        prm = self.parameters(epsilon, v.shape[-1], radius)
        check_in_ball(v, radius)
        return sample(key, v, prm, hemisphere=self.name == "duchi")


def check_in_ball(v, radius, rtol: float = 1e-12) -> None:
    """Raise ``ValueError`` when a row of ``v`` has l2 norm above ``radius`` (concrete inputs only).

    Args:
      v: inputs ``(..., m)``.
      radius: ball radius.
      rtol: relative slack for rounding.
    """
    if isinstance(v, jax.core.Tracer):
        return
    norms = np.linalg.norm(np.asarray(v, dtype=np.float64), axis=-1)
    if not np.all(np.isfinite(norms)) or np.any(norms > np.asarray(radius) * (1 + rtol)):
        raise ValueError(f"inputs must lie in the l2 ball of radius {radius} "
                         f"(largest norm {np.nanmax(norms) if norms.size else 0:.6g})")


DUCHI = Channel("duchi", duchi_parameters)
PRIVUNIT = Channel("privunit", privunit_parameters)
CHANNELS = {"duchi": DUCHI, "privunit": PRIVUNIT}


def get_channel(name) -> Channel:
    """The channel named ``name`` (``"duchi"`` or ``"privunit"``), or ``name`` if already one.

    Raises:
      ValueError: an unknown name.
    """
    if isinstance(name, Channel):
        return name
    if name not in CHANNELS:
        raise ValueError(f"unknown channel {name!r}; known: duchi, privunit")
    return CHANNELS[name]
