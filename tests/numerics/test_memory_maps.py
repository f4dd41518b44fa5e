"""dpjax releases compiled programs before the process's memory-map limit (memory_maps.py).

A process that compiles many programs runs out of ``vm.max_map_count`` mappings and LLVM
aborts it; :func:`release_near_limit` drops the programs before that, warning once, and a
program used again gives the same answer.  The limit is made small here (``headroom``
larger than the limit) instead of compiling tens of thousands of mappings' worth.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpjax.numerics import export_cache, memory_maps


@pytest.fixture
def fresh_warning(monkeypatch):
    monkeypatch.setattr(memory_maps, "_warned", False)


def test_counts_the_process_mappings():
    n = memory_maps.memory_maps()
    if n is None:
        pytest.skip("no /proc/self/maps")
    with open("/proc/self/maps") as f:
        lines = len(f.readlines())
    assert abs(n - lines) <= 8  # the read itself may map a page or two
    assert memory_maps.map_limit() > 0


def test_far_below_the_limit_nothing_is_released(monkeypatch):
    monkeypatch.setattr(memory_maps, "map_limit", lambda: 10**9)  # whatever this host's
    f = jax.jit(lambda x: x * 3.0)
    f(jnp.float64(1.0))
    assert not memory_maps.release_near_limit()
    assert f._cache_size() == 1


@pytest.mark.skipif(memory_maps.memory_maps() is None, reason="no /proc/self/maps")
def test_near_the_limit_programs_are_released_once_warned_and_unmapped(fresh_warning):
    programs = [jax.jit(lambda x, k=k: jnp.sin(x) * k + jnp.cumsum(x)) for k in range(6)]
    x = jnp.linspace(0.0, 1.0, 64)
    before = [np.asarray(p(x)) for p in programs]
    mapped = memory_maps.memory_maps()
    with pytest.warns(memory_maps.ProgramsReleasedWarning, match="vm.max_map_count"):
        assert memory_maps.release_near_limit(headroom=memory_maps.map_limit())
    assert all(p._cache_size() == 0 for p in programs)
    # a category Python shows by default (ResourceWarning and DeprecationWarning it hides)
    hidden = (ResourceWarning, DeprecationWarning)
    assert not issubclass(memory_maps.ProgramsReleasedWarning, hidden)
    assert memory_maps.memory_maps() < mapped  # their machine code was unmapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        assert memory_maps.release_near_limit(headroom=memory_maps.map_limit())
    for p, b in zip(programs, before, strict=True):  # compiled again: the same numbers
        np.testing.assert_array_equal(np.asarray(p(x)), b)


def test_inside_a_trace_nothing_is_released(fresh_warning):
    seen = []

    @jax.jit
    def f(x):
        seen.append(memory_maps.release_near_limit(headroom=memory_maps.map_limit()))
        return x + 1.0

    f(jnp.float64(1.0))
    assert seen == [False]


def test_export_cache_programs_are_dropped_and_loaded_again(tmp_path, monkeypatch, fresh_warning):
    """A :func:`~dpjax.numerics.export_cache.cached_jit` program is checked against the
    limit before it is loaded or compiled; a release drops the loaded programs, and the
    next call loads the same program from its entry."""
    monkeypatch.setattr(export_cache, "export_dir", lambda: tmp_path)
    monkeypatch.setattr(memory_maps, "map_limit", lambda: 10**9)  # whatever this host's

    def poly(x):
        return x * x - 2.0 * x

    wrapped = export_cache.cached_jit(poly)
    x = np.linspace(0.0, 3.0, 5)
    first = np.asarray(wrapped(x))
    assert wrapped.calls and wrapped.entries == {} and list(tmp_path.iterdir())
    checks = []
    monkeypatch.setattr(export_cache, "release_near_limit", lambda: checks.append(1) or (
        memory_maps.release_near_limit(headroom=2 * 10**9)))
    wrapped.calls.clear()  # a miss: checked, released, loaded from the entry
    with pytest.warns(memory_maps.ProgramsReleasedWarning):
        again = np.asarray(wrapped(x))
    assert checks == [1] and wrapped.entries  # loaded from its entry, after the release
    np.testing.assert_array_equal(again, first)
    memory_maps.release_compiled_programs()
    assert wrapped.calls == {} and wrapped.entries == {}
