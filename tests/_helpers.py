"""Helpers shared by several test modules (imported as ``_helpers``; not a test file)."""

import contextlib

import jax
import numpy as np


def padded_jit(fn, size=512):
    """Jit ``fn`` on float64 inputs flattened and padded to a multiple of ``size``: one
    compile per padded length (op-by-op dispatch and per-shape compiles are slow)."""
    jf = jax.jit(fn)

    def call(*args):
        arrs = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
        shape, n = arrs[0].shape, arrs[0].size
        m = -(-n // size) * size
        flat = [np.concatenate([a.reshape(-1), np.full(m - n, a.reshape(-1)[0])]) for a in arrs]
        return np.asarray(jf(*flat))[:n].reshape(shape)

    return call


def once_per_arguments(fn):
    """``fn`` (a pure function returning a tuple of arrays) run once per distinct positional
    arguments in this process: a later call with equal arguments gets copies of the first
    answer instead of the same computation again; any other arguments run ``fn``.  For a
    test that asks a library path which must reach the same expensive search as another
    test (the arguments it passes are then what is checked), without running it twice."""
    seen = []

    def run(*args):
        key = [np.asarray(a).tolist() for a in args]
        for k, out in seen:
            if k == key:
                return tuple(np.copy(x) for x in out)
        out = fn(*args)
        seen.append((key, out))
        return tuple(np.copy(x) for x in out)

    return run


def shell_cell_frequencies(m, n, i, size, rng):
    """Monte Carlo law of the cell index ``j - i + n`` of ``|x - e_1|`` for ``x`` uniform in
    the shell ``|x| in [i/n, (i+1)/n)`` of ``R^m`` (``2n + 1`` frequencies)."""
    a, b = i / n, (i + 1) / n
    uu = rng.random(size)
    rho = b * (uu + (1.0 - uu) * (a / b) ** m) ** (1.0 / m)  # rho^m uniform
    g = rng.standard_normal((size, m))
    x = rho[:, None] * g / np.linalg.norm(g, axis=1, keepdims=True)  # direction uniform
    x[:, 0] -= 1.0
    j = np.floor(np.linalg.norm(x, axis=1) * n).astype(int)
    return np.bincount(j - i + n, minlength=2 * n + 1) / size


def assert_nonincreasing(at_lower, at_higher, rtol=1e-12):
    """``at_higher <= at_lower`` up to ``rtol`` relative round-off (log-deltas: ``-inf`` at
    the higher argument always passes)."""
    assert at_higher <= at_lower + rtol * abs(at_lower) or at_higher == -np.inf, (
        at_lower,
        at_higher,
    )


def assert_matches_reference(got, ref, rtol=1e-10, floor=1e-14):
    """``got`` within ``rtol`` relative of ``ref`` where ``ref > floor``; below the floor
    only ``got <= floor`` is required (values under the floor carry no digits worth comparing)."""
    if ref > floor:
        assert abs(got - ref) <= rtol * ref, (got, ref)
    else:
        assert got <= floor, (got, ref)


def tiered(default, *larger):
    """``pytest.mark.parametrize`` values: the default tier's (smallest honest) instance and
    the ``slow`` tier's larger instances of the same property.

    >>> [getattr(p, "values", p) for p in tiered(3, 30)]
    [3, (30,)]
    """
    import pytest

    return [default] + [pytest.param(v, marks=pytest.mark.slow) for v in larger]


def loaded_from_export_cache(call, folder, monkeypatch, entry):
    """``call()`` twice, as two fresh processes sharing dpjax's export cache in ``folder``
    (dpjax/numerics/export_cache.py) would run it: the first compiles and writes its programs
    (``entry``, a kernel's name, among them); the second, with compiling (tracing) banned,
    must load every program it calls from ``folder``: no wrapper fell back to the jit path.
    ``call`` clears any memo of answers itself.  Returns ``(first, second)``."""
    from dpjax.numerics import export_cache

    monkeypatch.setattr(export_cache, "export_dir", lambda: folder)
    monkeypatch.setattr(export_cache, "_WRAPPERS", {})
    first = call()
    assert list(folder.glob(f"{entry}-*{export_cache.SUFFIX}")), sorted(
        p.name for p in folder.iterdir())

    def traced_again(*a, **k):
        raise AssertionError("traced again: the cached program was not used")

    monkeypatch.setattr(export_cache, "_WRAPPERS", {})  # as in a fresh process
    monkeypatch.setattr(export_cache, "compile_program", traced_again)
    second = call()
    fell_back = [w.fn.__name__ for w in export_cache._WRAPPERS.values()
                 if any(c is None for c in w.calls.values())]
    assert export_cache._WRAPPERS and not fell_back, fell_back
    return first, second


def record_calls(monkeypatch, owner, name, of, take):
    """Wrap ``owner.name`` (e.g. a module's ``call_cached``) for the test: every call whose
    first argument is ``of`` appends ``take(*args, **kwargs)`` to the returned list."""
    seen, real = [], getattr(owner, name)

    def recording(*args, **kwargs):
        if args and args[0] is of:
            seen.append(take(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return seen


@contextlib.contextmanager
def jax_events(name: str):
    """The ``fun_name`` of every JAX monitoring event ``name`` (e.g.
    ``"/jax/core/compile/backend_compile_duration"``) recorded inside the block, in a list
    the block receives (the listener is removed on exit)."""
    seen = []

    def listen(event, duration, **kwargs):
        if event == name:
            seen.append(kwargs.get("fun_name"))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
