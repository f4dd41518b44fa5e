"""JAX's persistent compilation cache, on by default for dpjax (library and command line).

dpjax's kernels are compiled by XLA on first use; keeping the compiled programs on disk
makes every later process start in well under a second instead of recompiling.  At
import, dpjax points JAX's cache at ``$XDG_CACHE_HOME/dpjax/xla`` (default
``~/.cache/dpjax/xla``) unless

- ``DPJAX_NO_COMPILATION_CACHE=1`` is set (opt out), or
- a cache directory is already configured (``JAX_COMPILATION_CACHE_DIR`` or
  ``jax.config.jax_compilation_cache_dir``): the user's choice wins, or
- the folder cannot be created (read-only home): dpjax runs without it.

Entries are keyed by the program, the jax/jaxlib versions and the device, so an entry is
never used for another program; the folder can be deleted at any time.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

#: programs compiling faster than this are not written to the cache (seconds).  0: every
#: program is kept, so a warm process compiles nothing; under 0.2 s, the dozen small
#: search-stage programs of a ``dpjax design`` were compiled again by every process
#: (JAX logs each as a persistent-cache miss), which bench/bench_design.py, run at 0,
#: did not show.
MIN_COMPILE_TIME_SECS = 0.0


def cache_dir() -> Path:
    """The folder dpjax uses for compiled programs: ``$XDG_CACHE_HOME/dpjax/xla``.

    Returns:
      The path (not created).
    """
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "dpjax" / "xla"


def enable() -> Path | None:
    """Turn JAX's persistent compilation cache on in :func:`cache_dir` (module docstring).

    Returns:
      The folder in use, or ``None`` when dpjax left JAX's setting alone (opted out,
      configured by the user, or not writable).
    """
    import jax  # deferred: jax (`import dpjax`, `dpjax --version` and `--help` import no JAX)

    if os.environ.get("DPJAX_NO_COMPILATION_CACHE") or os.environ.get(
        "JAX_COMPILATION_CACHE_DIR"
    ) or jax.config.jax_compilation_cache_dir:
        return None
    path = cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_SECS)
    return path


class _AfterJaxImport:
    """A one-shot import hook (``sys.meta_path``) that runs :func:`enable` once ``jax`` is
    imported: ``import dpjax`` itself does not import JAX (the CLI's ``--version`` and
    ``--help`` never need it), yet the cache is configured before JAX compiles anything.

    It finds ``jax`` through the other finders and wraps only that loader's
    ``exec_module`` for the one call, so JAX is imported exactly as without the hook.
    """

    def find_spec(self, name, path=None, target=None):  # noqa: D102 (importlib's contract)
        if name != "jax":
            return None
        _remove_hook()
        spec = importlib.util.find_spec("jax")
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            try:
                run(module)
            finally:
                del loader.exec_module
            enable()

        loader.exec_module = exec_module
        return spec


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AfterJaxImport)]


def enable_with_jax() -> None:
    """Run :func:`enable` now if JAX is imported, else as soon as it is (:class:`_AfterJaxImport`).

    Called by ``import dpjax``.
    """
    if "jax" in sys.modules:
        enable()
    elif not any(isinstance(f, _AfterJaxImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterJaxImport())
