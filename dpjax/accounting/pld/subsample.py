r"""Poisson subsampling with rate ``q``: the dominating pairs for add and remove adjacency.

For a base pair ``(P0, Q0)`` (``P0 = T``, ``Q0 = T - Delta``, loss ``L0``
non-decreasing in ``t``) the Poisson-subsampled mechanism is dominated by
(Zhu, Dong, Wang 2022, Thm 11; Balle, Barthe, Gaboardi 2018):

* **remove** (the neighbour lacks the record): ``P = q P0 + (1 - q) Q0``,
  ``Q = Q0``; loss ``L = log(1 - q + q e^{L0})``, range ``(log(1-q), inf)``;
* **add** (the neighbour has one more record): ``P = P0``,
  ``Q = (1 - q) P0 + q Q0``; loss ``L = -log(1 - q + q e^{-L0})``, range
  ``(-inf, -log(1-q))``.

Both losses are increasing functions of ``L0``, so the pairs are again
:class:`~dpjax.accounting.pld.discretise.MonotonePair` s with closed-form
inverses, and the whole connect-the-dots machinery applies.  A DP-SGD
accountant composes each over ``T`` steps and reports the worse of the two
(``delta = max``, ``epsilon = max``), as dp_accounting does.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from dpjax._batching import device_array, map_leading
from dpjax.accounting.pld._pld import PLD
from dpjax.accounting.pld.discretise import TAIL, MonotonePair, discretise_pair, noise_pair
from dpjax.numerics import float64_kernel, logaddexp

ADJACENCIES = ("remove", "add")


def _mix(la, lb, log_wa, log_wb):
    return logaddexp(log_wa + la, log_wb + lb)


def _pick(remove, a, b):
    """``a()`` for the remove adjacency, ``b()`` for add (thunks; pytrees of arrays): a
    Python choice when ``remove`` is a Python bool (only that formula is traced), else
    both, selected elementwise on the traced flag."""
    if isinstance(remove, bool):
        return a() if remove else b()
    return jax.tree.map(lambda x, y: jnp.where(remove, x, y), a(), b())


@float64_kernel
def subsampled_pair(base: MonotonePair, sampling_rate, adjacency) -> MonotonePair:
    r"""The Poisson-subsampled dominating pair of ``base`` for one adjacency.

    .. math:: L_{\text{remove}} = \log(1 - q + q e^{L_0}),\qquad
              L_{\text{add}} = -\log(1 - q + q e^{-L_0})

    (Zhu, Dong & Wang 2022, Thm 11; module docstring), with closed-form inverses that
    neither overflow nor cancel as ``q -> 1``.

    Args:
      base: the pair of one use without subsampling (loss non-decreasing in ``t``).
      sampling_rate: ``q`` in ``(0, 1]``.
      adjacency: ``"remove"`` or ``"add"`` (static: only that adjacency's formulas are
        traced; anything else raises ``ValueError``), or a traced boolean, ``True`` for
        remove (both formulas are traced and selected elementwise, so that one program
        mapped over the two adjacencies serves both: :func:`map_adjacencies`).

    Returns:
      The subsampled :class:`~dpjax.accounting.pld.discretise.MonotonePair`.
    """
    if isinstance(adjacency, str):
        if adjacency not in ADJACENCIES:
            raise ValueError(f"adjacency must be one of {ADJACENCIES}, got {adjacency!r}")
        remove = adjacency == "remove"
    else:
        remove = jnp.asarray(adjacency, bool)
    q = jnp.asarray(sampling_rate, jnp.float64)
    lq, l1q = jnp.log(q), jnp.log1p(-q)
    big = 1e300

    def loss(t):
        l0 = base.loss(t)
        return _pick(remove, lambda: logaddexp(l1q, lq + l0), lambda: -logaddexp(l1q, lq - l0))

    def inverse(eps):
        # remove: e^eps = 1 - q + q e^{L0}  <=>  L0 = eps + log(1 - e^{log(1-q) - eps}) - log q
        # add: e^{-eps} = 1 - q + q e^{-L0}  <=>  L0 = log q + eps - log(1 - e^{log(1-q) + eps})
        # no overflow of e^eps, no cancellation for q -> 1 (q = 1: L0 = eps); log(-expm1)
        # keeps L0 to ~u absolute (all the inverse needs) with two transcendentals
        def remove_l0():
            ok = eps > l1q
            return ok, eps + jnp.log(-jnp.expm1(jnp.where(ok, l1q - eps, -1.0))) - lq

        def add_l0():
            ok = -eps > l1q
            return ok, lq + eps - jnp.log(-jnp.expm1(jnp.where(ok, l1q + eps, -1.0)))

        ok, l0 = _pick(remove, remove_l0, add_l0)
        return jnp.where(ok, base.loss_inverse(l0), _pick(remove, lambda: -big, lambda: big))

    def tails(t):
        sp, cp, sq, cq = base.all_tails(t)
        return _pick(
            remove,
            lambda: (_mix(sp, sq, lq, l1q), _mix(cp, cq, lq, l1q), sq, cq),
            lambda: (sp, cp, _mix(sp, sq, l1q, lq), _mix(cp, cq, l1q, lq)),
        )

    def mixed(p_fn, q_fn):
        # the subsampled P: remove mixes P with Q, add keeps P
        return lambda t: _pick(remove, lambda: _mix(p_fn(t), q_fn(t), lq, l1q), lambda: p_fn(t))

    def kept(p_fn, q_fn):
        # the subsampled Q: remove keeps Q, add mixes P with Q
        return lambda t: _pick(remove, lambda: q_fn(t), lambda: _mix(p_fn(t), q_fn(t), l1q, lq))

    return MonotonePair(
        log_sf_p=mixed(base.log_sf_p, base.log_sf_q),
        log_cdf_p=mixed(base.log_cdf_p, base.log_cdf_q),
        log_sf_q=kept(base.log_sf_p, base.log_sf_q),
        log_cdf_q=kept(base.log_cdf_p, base.log_cdf_q),
        loss=loss,
        loss_inverse=inverse,
        t_lo=base.t_lo,
        t_hi=base.t_hi,
        tails=tails,
    )


@float64_kernel
def subsampled_noise_pair(
    noise, sensitivity, sampling_rate, adjacency: str, tail: float = TAIL
) -> MonotonePair:
    """:func:`subsampled_pair` of the additive-noise pair ``(T, T - Delta)`` of ``noise``.

    Args:
      noise: a noise family instance (e.g. :class:`dpjax.noise.Gaussian`).
      sensitivity: the shift ``Delta > 0``.
      sampling_rate: ``q`` in ``(0, 1]``.
      adjacency: ``"remove"`` or ``"add"`` (static).
      tail: the base pair's cut tail (:func:`.discretise.noise_pair`; may be traced).

    Returns:
      The subsampled :class:`~dpjax.accounting.pld.discretise.MonotonePair`
      (Zhu, Dong & Wang 2022, Thm 11).
    """
    return subsampled_pair(noise_pair(noise, sensitivity, tail), sampling_rate, adjacency)


@jax.jit
def _range(noise, sensitivity, sampling_rate, tail=TAIL):
    out = []
    for adj in ADJACENCIES:
        pair = subsampled_noise_pair(noise, sensitivity, sampling_rate, adj, tail)
        out.append((pair.loss(pair.t_lo), pair.loss(pair.t_hi)))
    return out


@float64_kernel
def subsampled_grid(
    noise, sensitivity: float, sampling_rate: float, bin_width: float, tail: float = TAIL
):
    """Host helper: ``{adjacency: (lower, size)}`` covering each subsampled loss range.

    The grid runs from ``floor(L(t_lo) / h) - 1`` to ``ceil(L(t_hi) / h) + 1`` for the loss
    ``L`` of :func:`subsampled_pair` (Zhu, Dong & Wang 2022, Thm 11).

    Args:
      noise, sensitivity, sampling_rate: as in :func:`subsampled_noise_pair`.
      bin_width: grid spacing ``h > 0``.
      tail: the base pair's cut tail (default :data:`.discretise.TAIL`).

    Returns:
      ``{"remove": (lower, size), "add": (lower, size)}`` (host integers).
    """
    ranges = _range(
        noise,
        device_array(sensitivity, np.float64),
        device_array(sampling_rate, np.float64),
        float(tail),
    )
    grids = {}
    for adj, (lo, hi) in zip(ADJACENCIES, ranges, strict=True):
        lower = math.floor(float(lo) / bin_width) - 1
        grids[adj] = (lower, math.ceil(float(hi) / bin_width) + 1 - lower + 1)
    return grids


@functools.partial(jax.jit, static_argnames=("adjacency", "size", "pessimistic"))
@float64_kernel
def discretise_subsampled(
    noise,
    sensitivity,
    sampling_rate,
    adjacency: str,
    bin_width,
    lower,
    size: int,
    pessimistic: bool = True,
    tail: float = TAIL,
) -> PLD:
    """Connect-the-dots PLD of the subsampled pair (jitted; ``size`` static).

    Pessimistic connect-the-dots (Doroshenko et al. 2022) of :func:`subsampled_noise_pair`
    on ``l_i = (lower + i) h``, through
    :func:`~dpjax.accounting.pld.discretise.discretise_pair`.

    Args:
      noise, sensitivity, sampling_rate, adjacency: as in :func:`subsampled_noise_pair`.
      bin_width: grid spacing ``h > 0``.
      lower: integer index of the first grid point.
      size: number of grid points (static).
      pessimistic: round loss mass up (an upper bound) or down (static).
      tail: the base pair's cut tail (traced: every level shares one compiled program;
        default :data:`.discretise.TAIL`).

    Returns:
      The :class:`PLD`.
    """
    pair = subsampled_noise_pair(noise, sensitivity, sampling_rate, adjacency, tail)
    return discretise_pair(pair, bin_width, lower, size, pessimistic)


@float64_kernel
def from_subsampled_noise(
    noise,
    sensitivity: float,
    sampling_rate: float,
    bin_width: float = 1e-4,
    pessimistic: bool = True,
) -> dict[str, PLD]:
    r"""``{"remove": PLD, "add": PLD}`` of one Poisson-subsampled use of ``noise``.

    The guarantee is ``delta(eps) = max(delta_remove(eps), delta_add(eps))`` (Zhu, Dong &
    Wang 2022, Thm 11).

    Args:
      noise, sensitivity, sampling_rate: as in :func:`subsampled_noise_pair`.
      bin_width: grid spacing ``h > 0``.
      pessimistic: round loss mass up (an upper bound) or down.

    Returns:
      One :class:`PLD` per adjacency, each on a grid that covers its loss range (the add
      loss never exceeds ``-log(1 - q)``).

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.accounting.pld import delta_for_epsilon
      >>> from dpjax.noise import Gaussian
      >>> plds = from_subsampled_noise(Gaussian(1.0), 1.0, sampling_rate=0.01)
      >>> {k: round(float(delta_for_epsilon(p, 0.1)), 8) for k, p in plds.items()}
      {'remove': 7.29e-05, 'add': 0.0}
    """
    grids = subsampled_grid(noise, sensitivity, sampling_rate, bin_width)
    return {
        adj: discretise_subsampled(
            noise,
            jnp.asarray(sensitivity, jnp.float64),
            jnp.asarray(sampling_rate, jnp.float64),
            adj,
            jnp.asarray(bin_width, jnp.float64),
            lower,
            size,
            pessimistic,
        )
        for adj, (lower, size) in grids.items()
    }


@float64_kernel
def adjacency_pairs(noise, sensitivity, sampling_rate, subsampled: bool, tail: float = 1e-40):
    """The dominating pairs of one use of ``noise`` at shift ``sensitivity``.

    The base pair ``(T, T - Delta)`` of
    :func:`~dpjax.accounting.pld.discretise.noise_pair` (symmetric noise: one pair covers
    both adjacencies), or, when ``subsampled``, its Poisson-subsampled pairs for
    :data:`ADJACENCIES` (Zhu, Dong & Wang 2022, Thm 11; the worse one is reported).

    Args:
      noise, sensitivity, sampling_rate: as in :func:`subsampled_noise_pair` (the rate is
        ignored unless ``subsampled``).
      subsampled: whether the use is Poisson-subsampled (static).
      tail: tail mass at which the base pair's support is cut.

    Returns:
      A list of one or two :class:`~dpjax.accounting.pld.discretise.MonotonePair` s.
    """
    base = noise_pair(noise, sensitivity, tail)
    if not subsampled:
        return [base]
    return [subsampled_pair(base, sampling_rate, adj) for adj in ADJACENCIES]


@float64_kernel
def map_adjacencies(
    fn, noise, sensitivity, sampling_rate, subsampled: bool, tail=1e-40, per_adjacency=()
):
    """``fn(pair, *args)`` for every pair of :func:`adjacency_pairs`, stacked on a leading axis.

    Subsampled, the two adjacencies are one traced program: ``fn`` is mapped (a loop,
    :func:`~dpjax._batching.map_leading`) over the pair of :func:`subsampled_pair` with a
    traced adjacency flag (remove, then add, the order of :data:`ADJACENCIES`), so that
    what ``fn`` builds (a discretisation, a composition, a query) is traced and compiled
    once, not once per adjacency.

    Args:
      fn: ``(MonotonePair, *args) -> pytree of arrays`` (traceable).
      noise, sensitivity, sampling_rate, subsampled, tail: as in :func:`adjacency_pairs`.
      per_adjacency: arrays with a leading axis of one entry per pair (in the order of
        :data:`ADJACENCIES` when subsampled), handed to ``fn`` entry by entry (default
        none).

    Returns:
      ``fn``'s pytree with a leading axis of length 1 (not subsampled) or 2.
    """
    base = noise_pair(noise, sensitivity, tail)
    per_adjacency = tuple(jnp.asarray(a) for a in per_adjacency)
    if not subsampled:
        got = fn(base, *(a[0] for a in per_adjacency))
        return jax.tree.map(lambda v: jnp.expand_dims(v, 0), got)
    remove = jnp.asarray([adj == "remove" for adj in ADJACENCIES])
    return map_leading(
        lambda r, *a: fn(subsampled_pair(base, sampling_rate, r), *a), remove, *per_adjacency
    )


@functools.partial(jax.jit, static_argnames=("size", "pessimistic"))
@float64_kernel
def discretise_subsampled_pairs(
    noise, sensitivity, sampling_rate, bin_width, lowers, size: int, pessimistic: bool = True,
    tail=TAIL,
) -> tuple[PLD, ...]:
    r""":func:`discretise_subsampled` of both adjacencies in one program (jitted; ``size``
    static): the remove and add PLDs of one Poisson-subsampled use, each on its own grid
    ``l_i = (lowers[j] + i) h`` of ``size`` points.

    .. math:: L_{\text{remove}} = \log(1 - q + q e^{L_0}),\qquad
              L_{\text{add}} = -\log(1 - q + q e^{-L_0})

    (Zhu, Dong & Wang 2022, Thm 11), discretised by connect-the-dots (Doroshenko et al.
    2022).  The two adjacencies are mapped over a traced flag (:func:`map_adjacencies`):
    an event ledger that needs both compiles one discretisation, not two.  Each PLD is the
    one :func:`discretise_subsampled` gives for its adjacency (``tests/accounting/pld/
    test_subsample.py`` compares them).

    Args:
      noise, sensitivity, sampling_rate: as in :func:`subsampled_noise_pair`.
      bin_width: grid spacing ``h > 0``.
      lowers: integer index of each grid's first point, in the order of
        :data:`ADJACENCIES` (remove, add).
      size: number of grid points of both grids (static).
      pessimistic: round loss mass up (an upper bound) or down (static).
      tail: the base pair's cut tail (traced).

    Returns:
      ``(remove PLD, add PLD)``.

    Example:
      >>> import jax; jax.config.update("jax_enable_x64", True)
      >>> from dpjax.noise import Laplace
      >>> grids = subsampled_grid(Laplace(1.0), 1.0, 0.1, 1e-3)
      >>> size = max(s for _, s in grids.values())
      >>> remove, add = discretise_subsampled_pairs(
      ...     Laplace(1.0), 1.0, 0.1, 1e-3, [grids[a][0] for a in ADJACENCIES], size)
      >>> remove.pmf.shape == add.pmf.shape == (size,)
      True
    """
    stacked = map_adjacencies(
        lambda pair, lower: discretise_pair(pair, bin_width, lower, size, pessimistic),
        noise, sensitivity, sampling_rate, True, tail, per_adjacency=(lowers,),
    )
    return tuple(jax.tree.map(lambda v, i=i: v[i], stacked) for i in range(len(ADJACENCIES)))
