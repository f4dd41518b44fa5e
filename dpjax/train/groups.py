"""Clipping groups: a pytree of clip norms that is a prefix of the parameters' pytree.

A single number clips the whole per-example gradient in l2 (global clipping, Abadi et al.
2016); a pytree prefix of the parameters with one clip norm per leaf makes every subtree
under that leaf a group clipped in l2 to its own norm (per-layer clipping: one norm per
layer; per-parameter clipping: the full structure).  Group ``m`` has ``K_m`` coordinates
and clip norm ``C_m``; one example changes the summed gradient by at most ``C_m`` in l2
on group ``m`` (the sensitivity profile of Sec. VI-C of inid-noise-laplace-beats-gaussian).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import numpy as np

from dpjax import _validate
from dpjax.inid import gaussian_scales, laplace_scales


@dataclass(frozen=True)
class Groups:
    """The clipping groups of a parameter pytree.

    Attributes:
      treedef: the parameters' tree structure.
      shapes: the shape of every parameter leaf (flattened order).
      dtypes: the dtype of every parameter leaf.
      leaf_group: the group index of every parameter leaf.
      clip_norms: ``C_m`` per group (NumPy float64).
      sizes: ``K_m`` (coordinates) per group (NumPy int64).
      names: a readable path per group.
    """

    treedef: object
    shapes: tuple
    dtypes: tuple
    leaf_group: tuple
    clip_norms: np.ndarray
    sizes: np.ndarray
    names: tuple

    @property
    def count(self) -> int:
        """The number of groups ``M``."""
        return len(self.names)

    @property
    def dim(self) -> int:
        """The number of coordinates ``K = sum_m K_m``."""
        return int(self.sizes.sum())


def _clip_value(value, name: str) -> float:
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"clip norm of {name} must be a number, got {value!r}") from None
    if not (math.isfinite(c) and c > 0.0):
        raise ValueError(f"clip norm of {name} must be finite and > 0, got {value!r}")
    return c


def make_groups(params, clip_norms) -> Groups:
    """The :class:`Groups` of ``params`` for ``clip_norms`` (a number or a pytree prefix).

    Args:
      params: the parameters (a pytree of arrays or ``jax.ShapeDtypeStruct``).
      clip_norms: a number (global clipping) or a pytree prefix of ``params`` with one
        clip norm ``> 0`` per leaf.

    Returns:
      The groups.

    Raises:
      ValueError: empty parameters, a clip norm that is not finite and ``> 0``, or a
        ``clip_norms`` tree that is not a prefix of ``params``.
      TypeError: a parameter leaf whose dtype is not a real floating type (the noise is
        sampled in it: :func:`dpjax._validate.sample_dtype`).

    Example:
      >>> import jax.numpy as jnp
      >>> params = {"dense1": {"w": jnp.zeros((3, 2)), "b": jnp.zeros(2)}, "dense2": jnp.zeros(4)}
      >>> g = make_groups(params, {"dense1": 1.0, "dense2": 0.5})
      >>> g.sizes.tolist(), g.clip_norms.tolist()
      ([8, 4], [1.0, 0.5])
    """
    leaves, treedef = jax.tree_util.tree_flatten(params)
    if not leaves:
        raise ValueError("params is empty: nothing to clip")
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    # the noise is drawn in each leaf's dtype: integer or complex noise is not the law certified
    dtypes = tuple(_validate.sample_dtype(x.dtype, "the dtype of every parameter leaf")
                   for x in leaves)
    if isinstance(clip_norms, (int, float, np.number)) or (
        isinstance(clip_norms, (np.ndarray, jax.Array)) and np.ndim(clip_norms) == 0
    ):
        c = _clip_value(clip_norms, "the whole gradient")
        size = sum(int(np.prod(s)) for s in shapes)
        return Groups(treedef, shapes, dtypes, (0,) * len(leaves), np.array([c]),
                      np.array([size]), ("all",))
    norm_leaves, norm_def = jax.tree_util.tree_flatten_with_path(clip_norms)
    if not norm_leaves:
        raise ValueError("clip_norms is an empty pytree: give a number or one norm per group")
    ids = jax.tree_util.tree_unflatten(norm_def, list(range(len(norm_leaves))))
    try:
        leaf_ids = jax.tree.map(
            lambda gid, sub: jax.tree.map(lambda _: gid, sub), ids, params
        )
    except (ValueError, TypeError) as err:
        raise ValueError(
            "clip_norms must be a number or a pytree prefix of params with one clip norm per "
            f"group; the structures do not match ({str(err).splitlines()[0]})"
        ) from None
    leaf_group = tuple(int(i) for i in jax.tree_util.tree_leaves(leaf_ids))
    if len(leaf_group) != len(leaves):
        raise ValueError("clip_norms does not cover every parameter leaf")
    names = tuple(jax.tree_util.keystr(path) or "all" for path, _ in norm_leaves)
    norms = np.array([_clip_value(v, n) for (_, v), n in zip(norm_leaves, names, strict=True)])
    sizes = np.zeros(len(names), np.int64)
    for gid, shape in zip(leaf_group, shapes, strict=True):
        sizes[gid] += int(np.prod(shape))
    if np.any(sizes == 0):
        empty = [n for n, s in zip(names, sizes, strict=True) if s == 0]
        raise ValueError(f"clipping groups without parameters: {', '.join(empty)}")
    return Groups(treedef, shapes, dtypes, leaf_group, norms, sizes, names)


def flat_per_layer(params, total_clip_norm: float = 1.0) -> dict:
    r"""Flat per-layer clip norms ``C_m = C_0 / sqrt(M)`` (so ``||(C_m)||_2 = C_0``), one per
    top-level key of ``params`` (Sec. VI-C of inid-noise-laplace-beats-gaussian).

    Args:
      params: a dict of layers.
      total_clip_norm: ``C_0 > 0``.

    Returns:
      A dict ``{layer: C_m}`` (a pytree prefix of ``params``).

    Example:
      >>> flat_per_layer({"a": 0, "b": 0, "c": 0, "d": 0}, 1.0)
      {'a': 0.5, 'b': 0.5, 'c': 0.5, 'd': 0.5}
    """
    if not isinstance(params, dict) or not params:
        raise ValueError("flat_per_layer needs a non-empty dict of layers")
    c0 = _clip_value(total_clip_norm, "total_clip_norm")
    return {k: c0 / math.sqrt(len(params)) for k in params}


def whitened(groups: Groups, scales: np.ndarray, order: int) -> float:
    r"""The dominating pair's scale per unit shift: ``1 / sqrt(sum_m C_m^2 / s_m^2)`` (l2,
    Gaussian, ``order = 2``) or ``1 / sum_m C_m / s_m`` (l1, Laplace, ``order = 1``)."""
    ratio = groups.clip_norms / np.asarray(scales, np.float64)
    if order == 2:
        return 1.0 / math.sqrt(math.fsum(ratio**2))
    return 1.0 / math.fsum(ratio)


def allocate(groups: Groups, multiplier: float, allocation: str, order: int) -> np.ndarray:
    r"""Noise scales per group whose :func:`whitened` scale is ``>= multiplier``.

    Gaussian (``order = 2``, standard deviations ``sigma_m``): ``"inid"`` minimises
    ``sum_m K_m sigma_m^2`` under ``sum_m C_m^2 / sigma_m^2 = mu^2`` (eq. (9) / Theorem 4
    of inid-noise-laplace-beats-gaussian, profile ``C_m``, weights ``K_m``:
    ``sigma_m^2 \propto C_m / sqrt(K_m)``); ``"spr"``: ``sigma_m \propto C_m / sqrt(K_m)``.
    Laplace (``order = 1``, scales ``b_m``): ``"inid"`` minimises ``sum_m 2 K_m b_m^2`` under
    ``sum_m C_m / b_m = mu`` (eq. (12) / Theorem 5 with weights ``K_m``:
    ``b_m \propto (C_m / K_m)^{1/3}``); ``"spr"``: ``b_m \propto C_m / K_m``.  One group:
    ``C multiplier``.  ``mu = 1 / multiplier``; the scales are rounded up until the
    certificate holds in float64.

    Args:
      groups: the clipping groups.
      multiplier: the calibrated scale of the dominating pair per unit shift.
      allocation: ``"inid"`` or ``"spr"``.
      order: ``2`` (Gaussian, l2 clipping) or ``1`` (Laplace, l1 clipping).

    Returns:
      The scales (float64), one per group.

    Example:
      >>> import jax.numpy as jnp
      >>> g = make_groups({"a": jnp.zeros(8), "b": jnp.zeros(1)}, {"a": 1.0, "b": 1.0})
      >>> [round(float(x), 6) for x in allocate(g, 1.0, "inid", order=1)]
      [1.5, 3.0]
    """
    c, k = groups.clip_norms, groups.sizes.astype(np.float64)
    mu = 1.0 / multiplier
    if groups.count == 1:
        scales = c * multiplier
    elif allocation == "inid":
        with jax.enable_x64(True):
            kernel = gaussian_scales if order == 2 else laplace_scales
            scales = np.asarray(kernel(c, mu, 2.0, k), np.float64)
    elif order == 2:  # spr: sigma_m = s C_m / sqrt(K_m), s = sqrt(K) / mu
        scales = c / np.sqrt(k) * math.sqrt(k.sum()) / mu
    else:  # spr: b_m = s C_m / K_m, s = K / mu
        scales = c / k * k.sum() / mu
    for _ in range(64):
        if whitened(groups, scales, order) >= multiplier:
            return scales
        scales = scales * (1.0 + 2.0**-50)
    raise RuntimeError("could not round the group scales up to the certified noise")
