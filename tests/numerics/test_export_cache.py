"""The export cache (dpjax/numerics/export_cache.py): a program loaded from disk gives the
jit path's numbers bit for bit, and a corrupt or missing entry falls back safely."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.accounting.truncated_laplace import log_delta_truncated_laplace
from dpjax.numerics import export_cache

# a small certified profile of the design path, on a batch of scales (np inputs, a python
# float sensitivity: the argument kinds the calibration passes)
ARGS = (np.full(5, 0.3), np.geomspace(0.5, 50.0, 5), np.geomspace(2.0, 400.0, 5), 1.0)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(export_cache, "export_dir", lambda: tmp_path)
    return tmp_path


def _reference():
    with jax.enable_x64(True):
        return np.asarray(jax.jit(log_delta_truncated_laplace)(*ARGS))


def _fresh_call():
    # a new wrapper: no in-memory program, as in a fresh process
    with jax.enable_x64(True):
        return np.asarray(export_cache._CachedJit(log_delta_truncated_laplace)(*ARGS))


def _no_compile(*a, **k):
    raise RuntimeError("compiling is broken here")


def test_loaded_program_is_bit_identical_to_jit(folder, monkeypatch):
    from _helpers import loaded_from_export_cache

    def call():  # through the module's wrappers, emptied by the helper as in a new process
        with jax.enable_x64(True):
            return np.asarray(export_cache.cached_jit(log_delta_truncated_laplace)(*ARGS))

    ref = _reference()
    # the first call compiles and writes the entry; the second loads it, untraced
    first, second = loaded_from_export_cache(
        call, folder, monkeypatch, "log_delta_truncated_laplace")
    (entry,) = folder.glob("*" + export_cache.SUFFIX)
    assert np.isfinite(ref).all()
    np.testing.assert_array_equal(first, ref)
    np.testing.assert_array_equal(second, ref)
    assert entry.exists()


@pytest.mark.parametrize("content", [b"", b"not a pickle", b"\x80\x04K\x01."])  # last: int 1
def test_corrupt_entry_falls_back_and_is_rewritten(folder, content):
    ref = _reference()
    _fresh_call()
    (entry,) = folder.glob("*" + export_cache.SUFFIX)
    entry.write_bytes(content)
    np.testing.assert_array_equal(_fresh_call(), ref)
    assert entry.read_bytes() != content  # compiled and written again


def test_failing_compile_uses_jit(folder, monkeypatch):
    ref = _reference()
    monkeypatch.setattr(export_cache, "compile_program", _no_compile)  # the jit path
    np.testing.assert_array_equal(_fresh_call(), ref)
    assert not list(folder.glob("*" + export_cache.SUFFIX))


def _only_in_this_test(x):
    return jnp.sin(x) * jnp.cos(x) + jnp.log1p(x * x)


def _control_in_this_test(x):  # the same program under a name of its own
    return _only_in_this_test(x)


def test_a_compiled_miss_is_kept_here_not_in_jax_persistent_cache(folder):
    """A miss compiles under a module name of its own, so JAX's persistent cache could never
    find it again: it is not written there (a plain ``jax.jit`` of the same function is, the
    control), and JAX's threshold is restored after the compile."""
    jax_dir = jax.config.jax_compilation_cache_dir
    if not jax_dir:
        pytest.skip("JAX's persistent cache is off (the tests' conftest turns it on)")
    name = export_cache.THRESHOLD
    floor = getattr(jax.config, name)
    jax.config.update(name, 0.0)  # every compiled program is written, however quick
    try:
        with jax.enable_x64(True):
            x = jnp.linspace(0.0, 1.0, 7)
            got = np.asarray(export_cache._CachedJit(_only_in_this_test)(x))
            ref = np.asarray(jax.jit(_control_in_this_test)(x))
        assert getattr(jax.config, name) == 0.0  # restored
    finally:
        jax.config.update(name, floor)
    np.testing.assert_array_equal(got, ref)
    written = [f.name for f in Path(jax_dir).iterdir()]
    assert any(n.startswith("jit__control_in_this_test-") for n in written)
    assert not any(n.startswith("jit__only_in_this_test") for n in written)
    assert len(list(folder.glob("*" + export_cache.SUFFIX))) == 1


def test_tracers_take_the_jit_path(folder):
    wrapper = export_cache._CachedJit(log_delta_truncated_laplace)
    with jax.enable_x64(True):
        inner = np.asarray(jax.jit(lambda *a: wrapper(*a))(*ARGS))
    np.testing.assert_array_equal(inner, _reference())
    assert not list(folder.glob("*" + export_cache.SUFFIX))


def test_off_when_dpjax_cache_is_not_in_use(monkeypatch):
    monkeypatch.setenv("DPJAX_NO_COMPILATION_CACHE", "1")
    assert export_cache.export_dir() is None
    monkeypatch.delenv("DPJAX_NO_COMPILATION_CACHE")
    # the test run's own XLA cache folder (tests/conftest.py), not dpjax's: off as well
    assert jax.config.jax_compilation_cache_dir != str(export_cache._compilation_cache.cache_dir())
    assert export_cache.export_dir() is None


def _engine_kernel_call(composed, queries):
    """The PLD engine's two programs, ``composed`` then ``queries`` on its fields."""
    from dpjax.accounting.pld import engine
    from dpjax.accounting.pld.plan import Sizes
    from dpjax.noise.gaussian import Gaussian

    with jax.enable_x64(True):
        args = engine.scalar_args(2.0, 0.0, 1.0, 0.3, 5)
        x = np.array([1e-3, 1e-5])
        fields = composed(*args, noise_fn=Gaussian.from_scale, bin_width=np.float64(1e-2),
                          sizes=Sizes(grid=1024, fft=2048), subsampled=True)
        return jax.tree.map(np.asarray, queries(*fields, x))


def test_static_arguments_are_part_of_the_key_and_loaded_bit_identical(folder, monkeypatch):
    """The PLD engine's kernels (static family, sizes, adjacency flag and a traced keyword bin
    width; array fields in, named-tuple results out) through the cache: the same bits as the
    kernels, and fresh wrappers load the entries without tracing."""
    from _helpers import loaded_from_export_cache

    from dpjax.accounting.pld import engine

    kernels = (engine._composed_kernel, engine._queries_kernel)
    ref = _engine_kernel_call(*kernels)

    def call():  # the module's wrappers, emptied by the helper as in a new process
        return _engine_kernel_call(export_cache.cached_jit(kernels[0], engine.STATIC_ARGNAMES),
                                   export_cache.cached_jit(kernels[1]))

    first, second = loaded_from_export_cache(call, folder, monkeypatch, "_queries_kernel")
    entries = sorted(folder.glob("*" + export_cache.SUFFIX))
    assert len(entries) == 2
    for got in (first, second):
        assert type(got) is type(ref)
        jax.tree.map(np.testing.assert_array_equal, got, ref)
    assert np.all(np.isfinite(ref[0].epsilon)) and all(e.exists() for e in entries)


def test_static_argument_without_a_stable_repr_takes_the_jit_path(folder):
    def scaled(x, *, factor):
        return x * factor.value

    class Factor:  # hashable, shown by its address: no stable key across processes
        value = 3.0

    wrapper = export_cache._CachedJit(scaled, ("factor",))
    with jax.enable_x64(True):
        assert float(wrapper(np.float64(2.0), factor=Factor())) == 6.0
    assert not list(folder.glob("*" + export_cache.SUFFIX))


def test_entry_that_does_not_run_is_removed_and_rewritten(folder, monkeypatch):
    """An entry whose program loads but fails when called (as a serialized copy of a program
    that JAX's persistent cache loaded can) falls back to the jit path and is removed; the
    next process compiles and writes it again."""

    class Broken:
        def __call__(self, *arrays):
            raise RuntimeError("NOT_FOUND: function not found")

    ref = _reference()
    _fresh_call()
    (entry,) = folder.glob("*" + export_cache.SUFFIX)
    with monkeypatch.context() as m:
        m.setattr(export_cache, "_load", lambda data: Broken())
        np.testing.assert_array_equal(_fresh_call(), ref)
    assert not entry.exists()
    np.testing.assert_array_equal(_fresh_call(), ref)
    assert entry.exists()


def test_pytree_arguments_ledger_programs_loaded_bit_identical(folder, monkeypatch):
    """The event ledger's programs take pytrees (a noise family, PLDs): their array leaves
    are the program's arguments and their structure part of the key.  A Laplace release and
    five Poisson-subsampled Laplace uses (discretisation, self-composition, the FFT product):
    the same bits as with the cache off, and a fresh process loads every program."""
    from _helpers import loaded_from_export_cache

    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    def ledger():
        acc = PLDAccountant()
        acc.compose(ev.Laplace(2.0))
        acc.compose(ev.PoissonSampled(0.2, ev.Laplace(1.0)), 5)
        return acc.get_epsilon(1e-6), acc.get_delta(1.0)

    monkeypatch.setattr(export_cache, "export_dir", lambda: None)
    ref = ledger()
    first, second = loaded_from_export_cache(ledger, folder, monkeypatch, "_product")
    names = {p.name.split("-")[0] for p in folder.glob("*" + export_cache.SUFFIX)}
    assert {"discretise_noise", "discretise_subsampled_pairs", "self_compose", "_product"} <= names
    assert first == ref and second == ref and 0.0 < ref[0] < 10.0


def test_pytree_node_types_are_part_of_the_key(folder):
    """Two namedtuple classes of one name and shape (in JAX's ``repr`` of a tree both are
    ``namedtuple[Scale]``) never share a program."""
    import collections

    first = collections.namedtuple("Scale", ["value"])
    second = collections.namedtuple("Scale", ["value"])
    second.__qualname__ = "Other.Scale"

    def times(s, x):
        return x * (s.value if isinstance(s, first) else 2.0 * s.value)

    wrapper = export_cache._CachedJit(times)
    with jax.enable_x64(True):
        a = float(wrapper(first(np.float64(3.0)), np.float64(1.0)))
        b = float(export_cache._CachedJit(times)(second(np.float64(3.0)), np.float64(1.0)))
    assert (a, b) == (3.0, 6.0)
    assert len(list(folder.glob("*" + export_cache.SUFFIX))) == 2
