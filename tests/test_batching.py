"""dpjax._batching: padded batch shapes give the unpadded answers, with few compiles."""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _helpers import jax_events

from dpjax._batching import call_padded, map_leading, padded, padded_elementwise, padded_size


def _pair(x, y):
    """An elementwise kernel with two outputs (one depends on both inputs)."""
    return jnp.log1p(x) * y, jnp.exp(-x)


_padded_pair = padded_elementwise(minimum=4)(jax.jit(_pair))


@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 3), (5,)])
def test_padded_elementwise_equals_the_plain_call(shape):
    x = jnp.linspace(0.1, 2.0, int(np.prod(shape))).reshape(shape)
    got = _padded_pair(x, 2.0)
    want = _pair(x, jnp.float64(2.0))
    for g, w in zip(got, want, strict=True):
        assert g.shape == shape and g.dtype == jnp.float64
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_padded_elementwise_under_jit_vmap_and_grad():
    x = jnp.array([0.5, 1.0, 1.5])
    np.testing.assert_array_equal(jax.jit(_padded_pair)(x, 3.0)[0], _pair(x, 3.0)[0])
    np.testing.assert_array_equal(jax.vmap(lambda v: _padded_pair(v, 3.0)[1])(x), jnp.exp(-x))
    g = jax.grad(lambda v: _padded_pair(v, 3.0)[0])(0.5)
    assert float(g) == pytest.approx(3.0 / 1.5, rel=1e-15)


def test_padded_elementwise_compiles_once_per_bucket():
    kernel = jax.jit(lambda x: x * 2.0)
    wrapped = padded_elementwise(minimum=4)(kernel)
    core = inspect.unwrap(wrapped, stop=lambda f: hasattr(f, "_cache_size"))
    for x in (1.0, jnp.ones(2), jnp.ones((2, 2)), jnp.ones(3)):  # sizes 1, 2, 4, 3: bucket 4
        wrapped(x)
    assert core._cache_size() == 1
    wrapped(jnp.ones(5))  # bucket 8
    assert core._cache_size() == 2


def _scaled_pair(c, x):
    """A kernel of a context ``c`` and an elementwise ``x``, with two outputs."""
    return x * c, jnp.exp(-x)


def test_padded_on_a_concrete_x_lowers_only_its_kernel():
    # a concrete x is padded and cut on the host: no reshape, pad or slice program is
    # lowered beside the kernel's; the answers and the array type are the traced path's
    wrapped = padded(minimum=4)(jax.jit(_scaled_pair))
    x = np.array([[0.5, 1.0, 1.5]])
    with jax_events("/jax/core/compile/jaxpr_to_mlir_module_duration") as lowered:
        with jax.enable_x64(True):
            got = wrapped(2.0, x)
    assert lowered == ["jit(_scaled_pair)"]
    with jax.enable_x64(True):
        traced = jax.jit(lambda v: wrapped(2.0, v))(jnp.asarray(x))
        scalar = wrapped(2.0, 0.5)
    for g, t in zip(got, traced, strict=True):
        assert isinstance(g, jax.Array) and g.shape == (1, 3) and g.dtype == jnp.float64
        np.testing.assert_array_equal(np.asarray(g), np.asarray(t))
    assert scalar[0].shape == () and float(scalar[0]) == 1.0
    with jax.enable_x64(True):  # a traced context, a concrete x: cut by JAX in the trace
        in_trace = jax.jit(lambda c: wrapped(c, x))(2.0)
    np.testing.assert_array_equal(np.asarray(in_trace[0]), np.asarray(got[0]))


def test_call_padded_returns_numpy_of_the_broadcast_shape():
    a, b = call_padded(_pair, np.array([[0.5], [1.0]]), np.array([1.0, 2.0, 3.0]), minimum=8)
    assert isinstance(a, np.ndarray) and a.shape == (2, 3) and b.shape == (2, 3)
    np.testing.assert_array_equal(a, np.log1p([[0.5], [1.0]]) * np.array([1.0, 2.0, 3.0]))
    assert padded_size(3, 8) == 8 and padded_size(9, 8) == 16


_FH = {"alpha": 1.0, "gamma": 2.0}
_STAIR = {"decay": 0.3, "width": 1.0, "gamma": 0.4}
#: host entry points that pad: (mechanism, params, entry point, module, its jitted kernel)
_HOST_CALLS = [
    ("gaussian", {"sigma": 2.0}, "profile", "dpjax.mechanisms.gaussian", "_delta"),
    ("gaussian", {"sigma": 2.0}, "account", "dpjax.mechanisms.gaussian", "_epsilon"),
    ("flipped-huber", _FH, "profile", "dpjax.mechanisms.flipped_huber",
     "log_delta_flipped_huber.jitted"),
    ("flipped-huber", _FH, "account", "dpjax.mechanisms.flipped_huber", "epsilon_flipped_huber"),
    ("staircase", _STAIR, "profile", "dpjax.accounting.staircase", "log_delta_staircase"),
    ("staircase", _STAIR, "account", "dpjax.mechanisms.staircase", "_epsilon_exact"),
]


@pytest.mark.parametrize(
    "mechanism, params, call, module, kernel", _HOST_CALLS, ids=lambda v: str(v)[:24]
)
def test_host_entry_points_compile_once_up_to_a_small_batch(
    mechanism, params, call, module, kernel
):
    """A scalar target and grids of 3, 9 and 16 targets share one compiled program
    (:data:`dpjax._batching.SMALL_BATCH`); the batch's answers are its entries' answers."""
    import functools
    import importlib

    import dpjax
    from dpjax._batching import SMALL_BATCH

    kernel = functools.reduce(getattr, kernel.split("."), importlib.import_module(module))
    kernel.clear_cache()  # an earlier test in this process may hold the bucket
    fn = getattr(dpjax, call)
    name = "epsilon" if call == "profile" else "delta"
    xs = np.linspace(0.2, 2.0, SMALL_BATCH) if call == "profile" else np.geomspace(1e-9, 0.1, 16)
    grids = [fn(mechanism, params, **{name: xs[:n]}, linf=1.0, l2=1.0) for n in (3, 9, 16)]
    one = [float(fn(mechanism, params, **{name: x}, linf=1.0, l2=1.0)) for x in xs]
    assert kernel._cache_size() == 1
    for got in grids:
        np.testing.assert_array_equal(got, one[: got.size])


def test_map_leading_is_vmap_on_any_leading_length():
    """One entry takes the direct call, several a loop: both give ``jax.vmap``'s pytree."""

    def fn(a, pair):
        return {"sum": a + pair[0], "prod": a * pair[1]}

    for n in (1, 2, 3):
        a = jnp.arange(2.0 * n).reshape(n, 2)
        pair = (jnp.full((n, 2), 2.0), jnp.arange(float(n))[:, None] + jnp.ones((n, 2)))
        got, want = map_leading(fn, a, pair), jax.vmap(fn)(a, pair)
        assert jax.tree.structure(got) == jax.tree.structure(want)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
            assert g.shape == w.shape and np.array_equal(g, w)


def test_map_leading_traces_its_body_once_and_unbatched():
    """Several entries are a loop whose body is ``fn`` on one entry: traced once, with no
    batching trace (a jitted helper inside is not batched: one ``jit`` in the loop body,
    of the unbatched shape)."""
    seen = []
    helper = jax.jit(lambda v: jnp.cumsum(v) * 2.0)

    def fn(v):
        seen.append(v.shape)
        return helper(v)

    x = jnp.arange(12.0).reshape(3, 4)
    jaxpr = jax.make_jaxpr(lambda x: map_leading(fn, x))(x)
    assert seen == [(4,)]
    (loop,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan"]
    inner = [e for e in loop.params["jaxpr"].jaxpr.eqns if e.primitive.name in ("jit", "pjit")]
    assert [e.outvars[0].aval.shape for e in inner] == [(4,)]
    assert np.array_equal(map_leading(fn, x), jax.vmap(helper)(x))
