"""Traced programs kept across processes with :mod:`jax.export`: warm starts skip tracing.

JAX's persistent compilation cache (dpjax/_compilation_cache.py) stores the *compiled*
binary, but its key is computed from the lowered program, so every process still traces
and lowers each kernel before it can find the binary; for the certified profiles on the
``dpjax design`` path (flipped Huber, OSGT, truncated Laplace) that re-tracing is most of
a warm run.  :func:`cached_jit` wraps a function of array arguments like :func:`jax.jit`
and, on a call with concrete arguments, looks for its exported (traced and lowered)
program (:func:`jax.export.export`; the ``Exported`` record pickled: its own ``serialize``
needs the optional flatbuffers package) in
``$XDG_CACHE_HOME/dpjax/export``; a hit is deserialized and called, a miss is exported,
written and called.  The exported program is the StableHLO the jit path lowers, so the
results are the same numbers (tests/numerics/test_export_cache.py checks bit equality).

Fail safe: the key holds the jax and jaxlib versions, the backend, the x64 flag, the
function's module and name, the argument shapes/dtypes/weak types and a hash of every
dpjax source file (an edited checkout never reuses a stale program); any error while
loading, exporting or calling the cached program falls back to the plain :func:`jax.jit`
path; tracers (calls inside ``jit``/``vmap``/``grad``) and non-array arguments always take
the plain path.  The cache is used only where dpjax's own compilation cache is in use
(not opted out with ``DPJAX_NO_COMPILATION_CACHE``, no folder configured by the user).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
from functools import lru_cache
from pathlib import Path

import jax
import jaxlib
import numpy as np

from dpjax import _compilation_cache


@lru_cache(maxsize=1)
def _source_hash() -> str:
    """sha256 over the relative path and bytes of every ``.py`` file of the dpjax package."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def export_dir() -> Path | None:
    """The folder of exported programs, or ``None`` when dpjax's own cache is not in use.

    Returns:
      ``$XDG_CACHE_HOME/dpjax/export`` when JAX's compilation cache is dpjax's
      (:func:`dpjax._compilation_cache.cache_dir`), else ``None``.
    """
    if os.environ.get("DPJAX_NO_COMPILATION_CACHE"):
        return None
    xla = _compilation_cache.cache_dir()
    if jax.config.jax_compilation_cache_dir != str(xla):
        return None
    return xla.parent / "export"


def _signature(args) -> tuple | None:
    """(shape, dtype, weak_type) per argument, or ``None`` when one is not a concrete array
    or is spread over several devices (an exported program is lowered for one device)."""
    sig = []
    for a in args:
        if isinstance(a, jax.core.Tracer):
            return None
        if isinstance(a, jax.Array) and len(a.sharding.device_set) > 1:
            return None
        if isinstance(a, (jax.Array, np.ndarray, np.generic)):
            sig.append((tuple(a.shape), str(a.dtype), bool(getattr(a, "weak_type", False))))
        elif isinstance(a, (float, int)) and not isinstance(a, bool):
            aval = jax.api_util.shaped_abstractify(a)
            sig.append((tuple(aval.shape), str(aval.dtype), bool(aval.weak_type)))
        else:
            return None
    return tuple(sig)


class _CachedJit:
    """:func:`jax.jit` of ``fn`` whose traced program is kept on disk (module docstring)."""

    def __init__(self, fn, static_argnames=()):
        self.fn = fn
        self.static_argnames = tuple(static_argnames)
        self.jitted = jax.jit(fn, static_argnames=self.static_argnames)
        self.calls: dict = {}  # signature -> jitted Exported.call (or None: use the jit path)

    def _key(self, sig) -> str:
        parts = (jax.__version__, jaxlib.__version__, jax.default_backend(),
                 str(jax.config.jax_enable_x64), self.fn.__module__, self.fn.__qualname__,
                 repr(sig), _source_hash())
        digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
        return f"{self.fn.__name__}-{digest}"

    def _load_or_export(self, folder: Path, sig, program):
        path = folder / (self._key(sig) + ".jaxexport")
        try:
            exported = pickle.loads(path.read_bytes())
            if not isinstance(exported, jax.export.Exported):
                raise TypeError(path)
        except Exception:  # missing or corrupt entry: export again
            specs = [jax.ShapeDtypeStruct(s, d, weak_type=w) for s, d, w in sig[0]]
            exported = jax.export.export(jax.jit(program))(*specs)
            try:
                folder.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                # jax's own Exported.serialize needs the optional flatbuffers package; a
                # pickle of the dataclass (less its vjp closure, unused) needs nothing
                tmp.write_bytes(pickle.dumps(dataclasses.replace(exported, _get_vjp=None)))
                os.replace(tmp, path)
            except OSError:
                pass
        return jax.jit(exported.call)

    def __call__(self, *args, **kwargs):
        folder = export_dir()
        static = {k: kwargs.pop(k) for k in self.static_argnames if k in kwargs}
        names = tuple(sorted(kwargs))  # array keyword arguments, passed positionally
        arrays = (*args, *(kwargs[k] for k in names))
        sig = _signature(arrays) if folder is not None else None
        statics = _static_key(static)
        if sig is None or statics is None:
            return self.jitted(*args, **kwargs, **static)
        sig = (sig, names, statics)
        call = self.calls.get(sig, False)
        if call is False:
            n = len(args)

            def program(*a):
                return self.fn(*a[:n], **dict(zip(names, a[n:], strict=True)), **static)

            try:
                call = self._load_or_export(folder, sig, program)
            except Exception:
                call = None
            self.calls[sig] = call
        if call is not None:
            try:
                return call(*arrays)
            except Exception:
                self.calls[sig] = None
        return self.jitted(*args, **kwargs, **static)


def _static_key(static: dict) -> str | None:
    """``repr`` of the static arguments (sorted by name), or ``None`` when one has no stable
    ``repr`` across processes (an object shown by its address): then the plain jit path."""
    key = repr(sorted(static.items()))
    return None if " at 0x" in key else key


_WRAPPERS: dict = {}


def cached_jit(fn, static_argnames=()):
    """``jax.jit(fn, static_argnames=...)`` whose traced program is reused across processes.

    Args:
      fn: a function of array arguments (positional or keyword), and of the static
        arguments named in ``static_argnames`` (hashable, with a ``repr`` that names them
        the same way in every process, e.g. a class's method or a named tuple of sizes:
        they are part of the entry's key).
      static_argnames: names of ``fn``'s static keyword arguments.

    Returns:
      A callable with ``fn``'s results; one wrapper per ``fn`` and static names (two
      modules wrapping the same function share its programs, as two ``jax.jit`` of it
      share their trace).

    >>> import jax.numpy as jnp
    >>> f = cached_jit(jnp.sin)
    >>> float(f(jnp.float64(0.0)))
    0.0
    """
    key = (fn, tuple(static_argnames))
    wrapper = _WRAPPERS.get(key)
    if wrapper is None:
        wrapper = _WRAPPERS[key] = _CachedJit(fn, static_argnames)
    return wrapper


def call_cached(fn, *args, static_argnames=(), **kwargs):
    """``fn(*args, **kwargs)`` through :func:`cached_jit` where the export cache is in use
    (:func:`export_dir`), else ``fn`` itself (an already jitted kernel: the same numbers).

    Args:
      fn: a jitted function (its static arguments named in ``static_argnames``).
      *args: its positional arguments.
      static_argnames: names of its static keyword arguments.
      **kwargs: its keyword arguments.

    Returns:
      ``fn``'s results.
    """
    if export_dir() is None:
        return fn(*args, **kwargs)
    return cached_jit(fn, static_argnames)(*args, **kwargs)


#: the name the design-path modules import
exported_jit = cached_jit
