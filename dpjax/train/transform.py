r"""The DP gradient transformation of a :class:`~dpjax.train.plan.PrivacyPlan` (optax).

``update(per_example_grads, state, params=None, *, mask=None)`` takes gradients with a
leading batch axis (the padded batch of :mod:`dpjax.train.sampler`; ``mask`` marks the
real rows) and returns

.. math:: \frac{1}{qN}\Big(\sum_{i:\ \text{mask}_i} \operatorname{clip}(g_i) + Z\Big),
          \qquad \operatorname{clip}(g_i)_m = g_{i,m} \min\Big(1, \frac{C_m}{\|g_{i,m}\|_2}\Big)

per clipping group ``m`` in l2 (``l1`` for Laplace noise: ``||g_{i,m}||_1``) (Abadi et al.
2016; per-group clipping: Sec. VI-C of
inid-noise-laplace-beats-gaussian), with ``Z`` the plan's noise drawn **once per logical
step**, calibrated to the *sum* (sensitivity ``C_m``), and the fixed denominator ``q N``
(the expected batch size), so neither padding nor the Poisson batch size leaks.  A
per-example gradient with a NaN or infinite entry is replaced by zero (a function of that
example alone: privacy is unchanged) and counted in the state; so is a row whose squared
norm overflows.  Noise is sampled in the
gradients' dtype; clipping and summing run in at least float32, clipping at
``C (1 - 2^-14)`` (``C (1 - 2^-40)`` in float64) so that rounding in the norm cannot let a
clipped row exceed ``C``; in l1 at ``C (1 - 2 (K_m + 4) u)`` (``u`` the unit roundoff),
inside the worst-case error of any order of summing ``K_m`` non-negative terms
(``(K_m - 1) u / (1 - (K_m - 1) u)``, Higham 2002, eq. (4.4)) and of the two roundings of
the factor and the product.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from dpjax.noise.flipped_huber import FlippedHuber


class DPAggregateState(NamedTuple):
    """State of the DP transform.

    Attributes:
      key: the PRNG key of the next noise draw.
      step: logical steps taken (noise draws).
      nonfinite: per-example gradients zeroed because of NaN/inf entries (cumulative).
    """

    key: jax.Array
    step: jax.Array
    nonfinite: jax.Array


class ClipSumState(NamedTuple):
    """State of the clip-and-sum stage of :func:`dp_optimizer` (the NaN/inf count)."""

    nonfinite: jax.Array


def _key(seed):
    if isinstance(seed, (int,)) and not isinstance(seed, bool):
        return jax.random.key(seed)
    if isinstance(seed, jax.Array):
        return seed
    raise ValueError(f"seed must be an int or a JAX PRNG key, got {seed!r}")


def _check(plan, updates, mask):
    """The per-example leaves (flattened like the parameters) and the batch size."""
    groups = plan.groups
    leaves, treedef = jax.tree_util.tree_flatten(updates)
    if treedef != groups.treedef:
        raise ValueError(
            f"per-example gradients have structure {treedef}, "
            f"the plan's parameters {groups.treedef}"
        )
    batch = None
    for leaf, shape in zip(leaves, groups.shapes, strict=True):
        if tuple(leaf.shape) == shape or tuple(leaf.shape[1:]) != shape:
            raise ValueError(
                "the DP transform needs per-example gradients with a leading batch axis: got "
                f"shape {tuple(leaf.shape)} for a parameter of shape {shape} (aggregated "
                "gradients cannot be clipped per example; use vmap(grad))"
            )
        if batch is not None and leaf.shape[0] != batch:
            raise ValueError(f"batch axes differ across leaves: {batch} and {leaf.shape[0]}")
        batch = leaf.shape[0]
    if mask is not None and tuple(jnp.shape(mask)) != (batch,):
        raise ValueError(f"mask must have shape ({batch},), got {tuple(jnp.shape(mask))}")
    return leaves, batch


def clipped_sum(plan, updates, mask=None):
    """``(sum of clipped per-example gradients (a pytree like the parameters), nonfinite)``.

    Args:
      plan: the :class:`~dpjax.train.plan.PrivacyPlan` (its clipping groups).
      updates: per-example gradients (leading batch axis).
      mask: ``(batch,)`` booleans (or 0/1) marking real rows; default all rows.

    Returns:
      The clipped sum and the number of real rows zeroed for NaN/inf (int32).
    """
    leaves, batch = _check(plan, updates, mask)
    groups = plan.groups
    # rows as (batch, K_leaf) matrices; the weighted sum over the batch is a matrix-vector
    # product (written as a broadcast multiply and a sum over axis 0 it is far slower on CPU)
    rows = [x.astype(_work_dtype(x.dtype)).reshape(batch, -1) for x in leaves]
    acc = jnp.float64 if any(r.dtype == jnp.float64 for r in rows) else jnp.float32
    l1 = plan.clip_norm_order == 1
    narrow = jnp.float32 if any(r.dtype == jnp.float32 for r in rows) else jnp.float64
    power = jnp.abs if l1 else jnp.square
    sq_leaf = [jnp.sum(power(r), axis=1).astype(acc) for r in rows]
    keep = jnp.ones((batch,), bool) if mask is None else jnp.asarray(mask).astype(bool)
    finite = functools.reduce(jnp.logical_and, [jnp.isfinite(q) for q in sq_leaf])
    nonfinite = jnp.sum(keep & ~finite).astype(jnp.int32)
    keep &= finite
    sq = [jnp.zeros((batch,), acc) for _ in range(groups.count)]
    for q, g in zip(sq_leaf, groups.leaf_group, strict=True):
        sq[g] = sq[g] + jnp.where(finite, q, 0.0)
    factors = []
    for g in range(groups.count):
        norm = sq[g] if l1 else jnp.sqrt(sq[g])
        # clip a little inside C: rounding in the norm cannot push a clipped row past C
        shrink = _l1_shrink(int(groups.sizes[g]), narrow) if l1 else (
            1.0 - (2.0**-14 if acc == jnp.float32 else 2.0**-40))
        c = jnp.asarray(groups.clip_norms[g] * shrink, acc)
        big = norm > c
        factors.append(jnp.where(keep, jnp.where(big, c / jnp.where(big, norm, c), 1.0), 0.0))
    def weighted_sums(clean: bool):
        out = []
        for r, x, g in zip(rows, leaves, groups.leaf_group, strict=True):
            if clean:  # NaN * 0 is NaN: zero non-finite rows before the product
                r = jnp.where(finite[:, None], r, 0.0)
            out.append(_dot("b,bk->k", factors[g].astype(r.dtype), r).reshape(x.shape[1:]))
        return out

    # the zeroing pass costs more than the product: only when some row is not finite
    out = jax.lax.cond(
        jnp.all(finite), lambda: weighted_sums(False), lambda: weighted_sums(True)
    )
    return jax.tree_util.tree_unflatten(groups.treedef, out), nonfinite


def _l1_shrink(size: int, dtype) -> float:
    """``1 - 2 (K + 4) u``: l1 clipping inside ``C`` by the worst-case rounding (docstring);
    ``u`` of the narrowest dtype the norm is summed in."""
    u = 2.0**-24 if dtype == jnp.float32 else 2.0**-53
    shrink = 1.0 - 2.0 * (size + 4) * u
    if shrink < 0.5:
        raise ValueError(
            f"an l1 clipping group of {size} coordinates is too large to clip soundly in "
            f"{jnp.dtype(dtype).name}; split it into smaller groups or use float64 parameters"
        )
    return shrink


def _dot(spec, a, b):
    """``einsum`` at full precision (TPUs would otherwise multiply in bfloat16)."""
    return jnp.einsum(spec, a, b, precision=jax.lax.Precision.HIGHEST)


def _work_dtype(dtype):
    """float64 stays, anything narrower is clipped and summed in float32."""
    return jnp.float64 if jnp.dtype(dtype) == jnp.float64 else jnp.float32


def _rows(v, x):
    return v.reshape((-1,) + (1,) * (x.ndim - 1))


def noise_like(plan, key, tree):
    """One draw of the plan's noise for every leaf of ``tree``, in the parameters' dtypes.

    Gaussian: ``N(0, sigma_m^2)`` per coordinate of group ``m``; Laplace: ``Lap(0, b_m)``;
    flipped Huber: ``FH(alpha, gamma^2)`` per coordinate (:class:`dpjax.noise.FlippedHuber`).
    """
    leaves = jax.tree_util.tree_leaves(tree)
    keys = jax.random.split(key, len(leaves))
    out = []
    groups = plan.groups
    for k, x, g, dt in zip(keys, leaves, groups.leaf_group, groups.dtypes, strict=True):
        if plan.noise == "laplace":
            z = jax.random.laplace(k, x.shape, dt) * jnp.asarray(plan.laplace_scale[g], dt)
        elif plan.noise == "gaussian" or plan.fh_alpha == 0.0:  # FH(0, gamma) = N(0, gamma^2)
            z = jax.random.normal(k, x.shape, dt) * jnp.asarray(plan.noise_std[g], dt)
        else:
            z = FlippedHuber(plan.fh_alpha, plan.fh_gamma).sample(k, x.shape, dt)
        out.append(z)
    return jax.tree_util.tree_unflatten(groups.treedef, out)


def _privatize(plan, summed, key):
    """``(summed + Z) / (q N)``, added in the dtypes of ``summed``."""
    z = noise_like(plan, key, summed)
    denom = plan.expected_batch_size
    return jax.tree.map(
        lambda s, n: ((s + n.astype(s.dtype)) / denom).astype(n.dtype), summed, z
    )  # python scalars are weakly typed: no promotion


def _output_dtypes(plan, tree):
    return jax.tree_util.tree_unflatten(
        plan.groups.treedef,
        [
            x.astype(dt)
            for x, dt in zip(jax.tree_util.tree_leaves(tree), plan.groups.dtypes, strict=True)
        ],
    )


def dp_transform(plan, seed) -> optax.GradientTransformationExtraArgs:
    """Clip per example, sum, add the plan's noise once, divide by ``q N`` (module docstring).

    Args:
      plan: a :class:`~dpjax.train.plan.PrivacyPlan` with ``accumulation_steps == 1``.
      seed: an int or a JAX PRNG key for the noise.

    Returns:
      An optax transformation; ``update(grads, state, params=None, mask=None)``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from dpjax.train import make_plan
      >>> params = {"w": jnp.zeros(3)}
      >>> plan = make_plan(params, dataset_size=200, batch_size=20, steps=12,
      ...                  epsilon=2.0, delta=1e-5)
      >>> tx = plan.transform(seed=0)
      >>> state = tx.init(params)
      >>> out, state = tx.update({"w": jnp.ones((4, 3))}, state, params)
      >>> out["w"].shape, int(state.step)
      ((3,), 1)
    """
    if plan.accumulation_steps != 1:
        raise ValueError(
            "this plan accumulates micro-batches: use plan.optimizer(inner, seed), which adds "
            "noise once per logical step"
        )
    key0 = _key(seed)

    def init(params):
        del params
        return DPAggregateState(key0, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))

    def update(updates, state, params=None, *, mask=None, **extra):
        del params, extra
        summed, bad = clipped_sum(plan, updates, mask)
        key, sub = jax.random.split(state.key)
        out = _output_dtypes(plan, _privatize(plan, summed, sub))
        return out, DPAggregateState(key, state.step + 1, state.nonfinite + bad)

    return optax.GradientTransformationExtraArgs(init, update)


def _clip_sum_stage(plan) -> optax.GradientTransformationExtraArgs:
    def init(params):
        del params
        return ClipSumState(jnp.zeros((), jnp.int32))

    def update(updates, state, params=None, *, mask=None, **extra):
        del params, extra
        summed, bad = clipped_sum(plan, updates, mask)
        return summed, ClipSumState(state.nonfinite + bad)

    return optax.GradientTransformationExtraArgs(init, update)


def _noise_stage(plan, seed) -> optax.GradientTransformationExtraArgs:
    key0 = _key(seed)

    def init(params):
        del params
        return DPAggregateState(key0, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))

    def update(updates, state, params=None, **extra):
        del params, extra
        key, sub = jax.random.split(state.key)
        out = _output_dtypes(plan, _privatize(plan, updates, sub))
        return out, DPAggregateState(key, state.step + 1, state.nonfinite)

    return optax.GradientTransformationExtraArgs(init, update)


def dp_optimizer(plan, inner: optax.GradientTransformation, seed):
    r"""``inner`` fed by the DP transform; with gradient accumulation when the plan has it.

    ``accumulation_steps = 1``: ``optax.chain(dp_transform(plan, seed), inner)``.
    ``k > 1``: ``chain(clip-and-sum, optax.MultiSteps(chain(noise, inner), k))``: each
    micro-step's per-example gradients are clipped and summed; MultiSteps adds up the
    ``k`` sums (the logical step's sum), and on every ``k``-th call the noise stage adds
    the noise **once** and divides by ``q N``; ``inner`` sees one update per logical
    step (its state, e.g. Adam's moments, does not tick on micro-steps).

    Args:
      plan: the :class:`~dpjax.train.plan.PrivacyPlan`.
      inner: the optimizer (e.g. ``optax.sgd(0.1)``).
      seed: an int or a JAX PRNG key for the noise.

    Returns:
      An optax transformation taking per-example gradients and ``mask``.
    """
    if plan.accumulation_steps == 1:
        return optax.chain(dp_transform(plan, seed), inner)
    acc = jnp.float64 if jnp.float64 in plan.groups.dtypes else jnp.float32
    multi = optax.MultiSteps(
        optax.chain(_noise_stage(plan, seed), inner),
        every_k_schedule=plan.accumulation_steps,
        use_grad_mean=False,  # the logical step's sum of clipped gradients
        accumulator_dtype=acc,
    )
    return optax.chain(_clip_sum_stage(plan), multi.gradient_transformation())
