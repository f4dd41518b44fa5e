"""Compiled programs kept across processes: warm starts skip tracing, lowering and compiling.

JAX's persistent compilation cache (dpjax/_compilation_cache.py) stores the *compiled*
binary, but its key is computed from the lowered program, so every process still traces
and lowers each kernel before it can find the binary; for the PLD engine's kernels and the
certified profiles on the ``dpjax design`` path (flipped Huber, OSGT, truncated Laplace)
that re-tracing is most of a warm run.  :func:`cached_jit` wraps a function of array
arguments like :func:`jax.jit` and, on a call with concrete arguments, looks for its
compiled program under a key of its own in ``$XDG_CACHE_HOME/dpjax/export``: a hit is
loaded (:func:`jax.experimental.serialize_executable.deserialize_and_load`) and called, no
tracing; a miss is traced, lowered and compiled once (``jax.jit(fn).lower(...).compile()``,
under an XLA module name of its own, so that JAX's persistent cache never hands back a
program whose serialized copy can lack some of its functions, and not written there, where
no lookup could find it), written here
(:func:`~jax.experimental.serialize_executable.serialize`, zlib-compressed) and called.
The program is the one ``jax.jit`` compiles for the same arguments, so the results are
the same numbers (tests/numerics/test_export_cache.py checks bit equality).

Fail safe: the key holds the jax and jaxlib versions, the backend, its platform version
and device kind, ``XLA_FLAGS`` (the codegen), the x64 flag, the function's module and
name, the argument shapes/dtypes/weak types (the array leaves of pytree arguments, such as
a PLD or a noise family, whose structure and node types, by module and qualified name, are
part of the key too), the static arguments and a hash of every dpjax source file (an
edited checkout never reuses a stale program); any error while loading, compiling, writing
or calling the cached program falls back to the plain :func:`jax.jit` path (a program that
cannot be serialized is used in its process and not written; an entry that loads but fails
when called is deleted, and the next process writes it again); tracers (calls inside
``jit``/``vmap``/``grad``), non-array leaves and arrays spread over several devices always
take the plain path. The cache is used only where dpjax's own compilation cache is in use
(not opted out with ``DPJAX_NO_COMPILATION_CACHE``, no folder configured by the user).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import pickle
import threading
import zlib
from functools import lru_cache
from pathlib import Path

import jax
import jaxlib
import numpy as np
from jax.experimental import serialize_executable

from dpjax import _compilation_cache
from dpjax.numerics.memory_maps import on_release, release_near_limit

#: Suffix of an entry: a zlib-compressed pickle of ``serialize_executable.serialize``.
SUFFIX = ".xlaexe"


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
    """The folder of cached programs, or ``None`` when dpjax's own cache is not in use.

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
    or is spread over several devices (a cached program is compiled for one device)."""
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
        self.calls: dict = {}  # signature -> compiled program (or None: use the jit path)
        self.entries: dict = {}  # signature -> the entry its program was loaded from

    def _key(self, sig) -> str:
        device = jax.devices()[0]
        parts = (jax.__version__, jaxlib.__version__, jax.default_backend(),
                 device.client.platform_version, device.device_kind,
                 os.environ.get("XLA_FLAGS", ""), str(jax.config.jax_enable_x64),
                 self.fn.__module__, self.fn.__qualname__, repr(sig), _source_hash())
        digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
        return f"{self.fn.__name__}-{digest}"

    def _load_or_compile(self, folder: Path, sig, program):
        path = folder / (self._key(sig) + SUFFIX)
        try:
            loaded = _load(path.read_bytes())
            self.entries[sig] = path
            return loaded
        except Exception:  # missing or corrupt entry: compile again
            pass
        specs = [jax.ShapeDtypeStruct(s, d, weak_type=w) for s, d, w in sig[0]]
        # a name of its own for the XLA module, which prefixes JAX's own cache key: always a
        # real compile, never a program JAX's cache loads (a loaded program's serialized
        # copy can lack some of its functions and fail with NOT_FOUND when called)
        program.__name__ = program.__qualname__ = f"{self.fn.__name__}_{os.urandom(6).hex()}"
        compiled = compile_program(program, specs)
        try:
            data = zlib.compress(pickle.dumps(serialize_executable.serialize(compiled)), 1)
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except Exception:  # no disk, or a program serialize cannot write: used, not kept
            pass
        return compiled

    def __call__(self, *args, **kwargs):
        folder = export_dir()
        static = {k: kwargs.pop(k) for k in self.static_argnames if k in kwargs}
        # the array leaves of the arguments (pytrees, e.g. a PLD or a noise, are flattened;
        # their structure, node types included, is part of the key), passed positionally
        arrays, tree = jax.tree.flatten((args, kwargs))
        sig = _signature(arrays) if folder is not None else None
        statics = _static_key(static)
        if sig is None or statics is None:
            return self.jitted(*args, **kwargs, **static)
        sig = (sig, _tree_key(tree), statics)
        call = self.calls.get(sig, False)
        if call is False:

            def program(*leaves):
                a, kw = jax.tree.unflatten(tree, leaves)
                return self.fn(*a, **kw, **static)

            release_near_limit()  # a new program: never past the process's map limit
            try:
                call = self._load_or_compile(folder, sig, program)
            except Exception:
                call = None
            self.calls[sig] = call
        if call is not None:
            try:
                return call(*arrays)
            except Exception:  # an entry that loads but does not run is removed
                self.calls[sig] = None
                path = self.entries.pop(sig, None)
                if path is not None:
                    with contextlib.suppress(OSError):
                        path.unlink(missing_ok=True)
        return self.jitted(*args, **kwargs, **static)


def _tree_key(tree) -> str:
    """The structure of flattened arguments, each node named by its type's module and
    qualified name and its auxiliary data (``repr`` of a tree names a namedtuple by its bare
    class name: two families of one name must not share a program)."""
    def node(t) -> str:
        data = t.node_data()
        if data is None:
            return "*"
        kind, aux = data
        inner = ",".join(node(c) for c in t.children())
        return f"{kind.__module__}.{kind.__qualname__}[{aux!r}]({inner})"

    return node(tree)


def _load(data: bytes):
    """The program an entry's bytes hold, loaded for the default device."""
    payload, in_tree, out_tree = pickle.loads(zlib.decompress(data))
    return serialize_executable.deserialize_and_load(
        payload, in_tree, out_tree, execution_devices=jax.devices()[:1])


#: JAX's persistent-cache threshold (seconds of compile time below which a program is not
#: written there), which :func:`compile_program` lifts while it compiles.
THRESHOLD = "jax_persistent_cache_min_compile_time_secs"
#: Held while :func:`compile_program` compiles with :data:`THRESHOLD` lifted: two dpjax
#: threads never interleave lifting and restoring it.
_COMPILE_LOCK = threading.Lock()


def compile_program(program, specs):
    """``jax.jit(program)`` traced, lowered and compiled for argument ``specs`` (a list of
    :class:`jax.ShapeDtypeStruct`): the one place a cache miss compiles (tests ban it to
    check that a warm call loads its program).

    JAX's persistent cache does not keep this program: its module name is its own (a random
    suffix, :meth:`_CachedJit._load_or_compile`), so no later lookup could find the entry,
    which would only cost the time to serialize it and its disk space.  The threshold
    :data:`THRESHOLD` is lifted to ``inf`` while it compiles and restored after (under
    :data:`_COMPILE_LOCK`); a program another thread compiles meanwhile is then not written
    to JAX's cache either (a lost entry, never a wrong one).
    """
    lowered = jax.jit(program).lower(*specs)
    with _COMPILE_LOCK:
        floor = getattr(jax.config, THRESHOLD)
        jax.config.update(THRESHOLD, math.inf)
        try:
            return lowered.compile()
        finally:
            jax.config.update(THRESHOLD, floor)


def _static_key(static: dict) -> str | None:
    """``repr`` of the static arguments (sorted by name), or ``None`` when one has no stable
    ``repr`` across processes (an object shown by its address): then the plain jit path."""
    key = repr(sorted(static.items()))
    return None if " at 0x" in key else key


_WRAPPERS: dict = {}


def cached_jit(fn, static_argnames=()):
    """``jax.jit(fn, static_argnames=...)`` whose traced program is reused across processes.

    Args:
      fn: a function of array arguments or pytrees of arrays (positional or keyword), and
        of the static arguments named in ``static_argnames`` (hashable, with a ``repr``
        that names them the same way in every process, e.g. a class's method or a named
        tuple of sizes: they are part of the entry's key).
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


def _release_loaded() -> None:
    """Drop the programs every :func:`cached_jit` wrapper holds (the next call loads its
    entry again): how :mod:`.memory_maps` frees their memory mappings."""
    for wrapper in _WRAPPERS.values():
        wrapper.calls.clear()
        wrapper.entries.clear()


on_release(_release_loaded)

#: the name the design-path modules import
exported_jit = cached_jit
