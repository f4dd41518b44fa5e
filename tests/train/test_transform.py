"""The DP gradient transformation: clipping, noise, NaN handling, accumulation, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from dpjax.train import make_plan
from dpjax.train.transform import clipped_sum, noise_like

SHRINK = 1.0 - 2.0**-40  # float64 clipping sits this far inside C (module docstring)
PARAMS = {"a": {"w": jnp.zeros((3, 2)), "b": jnp.zeros(2)}, "c": jnp.zeros(4)}


_PLANS = {}


def _plan(clip_norms=1.0):
    # q = 1, T = 1: the closed-form Gaussian calibration (fast); one plan per clip spec
    key = repr(clip_norms)
    if key not in _PLANS:
        _PLANS[key] = make_plan(PARAMS, clip_norms=clip_norms, dataset_size=8,
                                sampling_rate=1.0, steps=1, epsilon=1.0, delta=1e-5)
    return _PLANS[key]


@pytest.fixture(scope="module")
def grads():
    rng = np.random.default_rng(0)
    return jax.tree.map(lambda p: jnp.asarray(rng.normal(size=(5,) + p.shape) * 3.0), PARAMS)


def _np_flat(tree, i):
    return np.concatenate([np.ravel(x[i]) for x in jax.tree_util.tree_leaves(tree)])


def test_clipping_global_analytic(grads):
    summed, bad = clipped_sum(_plan(0.7), grads)
    ref = sum(
        _np_flat(grads, i) * min(1.0, 0.7 * SHRINK / np.linalg.norm(_np_flat(grads, i)))
        for i in range(5)
    )
    np.testing.assert_allclose(_np_flat(jax.tree.map(lambda x: x[None], summed), 0), ref,
                               rtol=1e-12)
    assert int(bad) == 0


@pytest.mark.parametrize("clip_norms", [{"a": 0.5, "c": 2.0},
                                        {"a": {"w": 0.3, "b": 0.1}, "c": 1.0}])
def test_clipping_per_group_analytic(grads, clip_norms):
    summed, _ = clipped_sum(_plan(clip_norms), grads)
    groups = {"a": ["w", "b"], "c": [None]}
    for layer, names in groups.items():
        spec = clip_norms[layer]
        for name in names:
            leaf = grads[layer] if name is None else grads[layer][name]
            out = summed[layer] if name is None else summed[layer][name]
            if isinstance(spec, dict):  # per-parameter groups
                norms = np.linalg.norm(np.reshape(leaf, (5, -1)), axis=1)
                c = spec[name]
            else:
                blk = grads[layer]
                flat = [np.reshape(x, (5, -1)) for x in jax.tree_util.tree_leaves(blk)]
                norms = np.linalg.norm(np.concatenate(flat, axis=1), axis=1)
                c = spec
            f = np.minimum(1.0, c * SHRINK / norms)
            np.testing.assert_allclose(out, np.tensordot(f, leaf, axes=1), rtol=1e-12)


def test_transform_is_clipped_mean_plus_one_noise_draw(grads):
    plan = _plan(1.0)
    tx = plan.transform(seed=3)
    state = tx.init(PARAMS)
    out, new = jax.jit(tx.update)(grads, state, PARAMS)
    summed, _ = clipped_sum(plan, grads)
    _, sub = jax.random.split(state.key)
    z = noise_like(plan, sub, summed)
    expect = jax.tree.map(lambda s, n: (s + n) / plan.expected_batch_size, summed, z)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12), out, expect)
    # "zero noise equals the clipped mean": removing the draw leaves the clipped mean
    mean = jax.tree.map(lambda o, n: o - n / plan.expected_batch_size, out, z)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b / 8.0, atol=1e-12), mean, summed)
    assert int(new.step) == 1


def test_empirical_noise_std_matches_calibration():
    # the schedule of tests/train/test_plan.py: its subsampled-Gaussian calibration is a
    # compiled program the run shares
    params = {"w": jnp.zeros(40000, jnp.float32)}
    plan = make_plan(params, dataset_size=200, batch_size=20, steps=12, epsilon=2.0,
                     delta=1e-5, max_batch_size=51)
    tx = plan.transform(seed=0)
    out, _ = tx.update({"w": jnp.zeros((4, 40000), jnp.float32)}, tx.init(params))
    assert out["w"].dtype == jnp.float32
    expect = plan.noise_std[0] / plan.expected_batch_size
    assert abs(float(jnp.std(out["w"])) / expect - 1.0) < 0.02  # ~5 sd of the sd estimate


def test_nonfinite_examples_are_zeroed_and_counted(grads):
    plan = _plan(1.0)
    tx = plan.transform(seed=1)
    state = tx.init(PARAMS)
    bad = jax.tree.map(lambda x: x, grads)
    bad["a"]["w"] = bad["a"]["w"].at[2, 0, 0].set(jnp.nan)
    bad["c"] = bad["c"].at[4, 1].set(jnp.inf)
    mask = jnp.array([1, 1, 1, 1, 0])  # row 4 is padding: not counted
    out, new = tx.update(bad, state, mask=mask)
    keep = jnp.array([1, 1, 0, 1, 0])
    ref, _ = tx.update(grads, state, mask=keep)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12), out, ref)
    assert int(new.nonfinite) == 1
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree_util.tree_leaves(out))


def test_multisteps_adds_noise_once():
    params = {"w": jnp.zeros(20000)}
    plan = make_plan(params, dataset_size=40, sampling_rate=1.0, steps=2, epsilon=2.0,
                     delta=1e-5, accumulation_steps=4)
    with pytest.raises(ValueError, match="accumulates"):
        plan.transform(seed=0)
    tx = plan.optimizer(optax.sgd(1.0), seed=0)
    state = tx.init(params)
    step = jax.jit(tx.update)
    zeros = {"w": jnp.zeros((plan.max_batch_size // 4, 20000))}
    outs = []
    with jax.numpy_dtype_promotion("standard"):  # optax.MultiSteps mixes bool and int
        for _ in range(4):
            out, state = step(zeros, state, params)
            outs.append(np.asarray(out["w"]))
    assert all(np.all(o == 0) for o in outs[:3])
    expect = plan.noise_std[0] / plan.expected_batch_size  # one draw, not four
    assert abs(np.std(outs[3]) / expect - 1.0) < 0.03


def test_accumulated_signal_is_the_logical_mean():
    params = {"w": jnp.zeros(3)}
    plan = make_plan(params, dataset_size=1000, sampling_rate=1.0, steps=1, epsilon=1e3,
                     delta=0.5, accumulation_steps=2, clip_norms=100.0)
    tx = plan.optimizer(optax.identity(), seed=0)
    state = tx.init(params)
    g = {"w": jnp.ones((plan.max_batch_size // 2, 3))}
    with jax.numpy_dtype_promotion("standard"):  # optax.MultiSteps mixes bool and int
        _, state = tx.update(g, state)
        out, _ = tx.update(g, state)
    rows = plan.max_batch_size
    noise_sd = plan.noise_std[0] / plan.expected_batch_size
    np.testing.assert_allclose(out["w"], rows / 1000.0, atol=8 * noise_sd)


def test_bfloat16_noise_in_parameter_dtype():
    params = {"w": jnp.zeros(8, jnp.bfloat16)}
    plan = make_plan(params, dataset_size=10, sampling_rate=1.0, steps=1, epsilon=1.0,
                     delta=1e-5)
    tx = optax.chain(plan.transform(seed=0), optax.sgd(0.1))
    out, _ = jax.jit(tx.update)({"w": jnp.ones((3, 8), jnp.bfloat16)}, tx.init(params))
    assert out["w"].dtype == jnp.bfloat16


def test_flipped_huber_transform_runs():
    params = {"w": jnp.zeros(5)}
    plan = make_plan(params, dataset_size=10, sampling_rate=1.0, steps=1, epsilon=4.0,
                     delta=1e-5, noise="flipped-huber")
    tx = plan.transform(seed=0)
    out, _ = jax.jit(tx.update)({"w": jnp.ones((2, 5))}, tx.init(params))
    assert out["w"].shape == (5,) and bool(jnp.all(jnp.isfinite(out["w"])))


def test_bad_input_errors():
    plan = _plan(1.0)
    tx = plan.transform(seed=0)
    state = tx.init(PARAMS)
    with pytest.raises(ValueError, match="leading batch axis"):
        tx.update(PARAMS, state)
    per_ex = jax.tree.map(lambda p: jnp.zeros((2,) + p.shape), PARAMS)
    with pytest.raises(ValueError, match="mask must have shape"):
        tx.update(per_ex, state, mask=jnp.ones(3))
    with pytest.raises(ValueError, match="structure"):
        tx.update({"a": per_ex["a"]}, state)
    with pytest.raises(ValueError, match="finite and > 0"):
        _plan(0.0)
    with pytest.raises(ValueError, match="finite and > 0"):
        _plan({"a": 1.0, "c": -2.0})
    with pytest.raises(ValueError, match="prefix"):
        _plan({"a": 1.0})
    with pytest.raises(ValueError, match="seed"):
        plan.transform(seed="x")
