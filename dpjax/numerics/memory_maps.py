r"""Compiled programs against the process's memory-map limit: release them before it is hit.

Every compiled XLA CPU program keeps its machine code in memory mappings of its own, about
100 to 1000 of them for one of dpjax's engine programs (one or more per kernel of the
program), and a process may hold at most the kernel's ``vm.max_map_count`` mappings
(65530 by default on Linux).  A long-lived process that asks for many settings of
different sizes (a sweep over ``sigma``, ``K`` and ``delta``, a study, a notebook) keeps
every program it compiled or loaded, and once the limit is reached the next compilation's
``mmap`` fails and LLVM aborts the whole process ("Cannot allocate memory"); a study of
dpjax's own hit it after a few dozen settings.

:func:`release_near_limit` runs where dpjax is about to compile or load a program
(:mod:`.export_cache`): when the process holds more than ``limit - HEADROOM`` mappings it
drops the programs dpjax's export cache keeps loaded and JAX's caches of compiled programs
(:func:`jax.clear_caches`; a program used again is loaded or compiled again), and warns
once.  Answers do not change: a program compiled again is the same program.  Where the
limit or the count cannot be read (not Linux) nothing is done.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import jax

try:  # whether no trace is in progress (JAX's own check; private, hence the fallback)
    from jax._src.core import trace_state_clean as _outside_traces
except ImportError:  # pragma: no cover (a JAX without it: never release, never wrongly)
    def _outside_traces() -> bool:
        return False

#: Mappings kept free below the limit: release when a process holds more than
#: ``limit - HEADROOM`` (one engine program adds up to about 1000, one calibration's
#: search several programs; the checks run before each new program).
HEADROOM = 20000
#: The Linux default of ``vm.max_map_count``, assumed where it cannot be read.
DEFAULT_LIMIT = 65530

#: Callables that drop compiled programs kept outside JAX's caches (the export cache's
#: loaded programs), run by :func:`release_compiled_programs`.
_RELEASERS: list[Callable[[], None]] = []
_warned = False


class ProgramsReleasedWarning(RuntimeWarning):
    """dpjax dropped compiled programs because the process neared its memory-map limit (a
    :class:`RuntimeWarning`, shown by default, unlike a :class:`ResourceWarning`)."""


def memory_maps() -> int | None:
    """The number of memory mappings this process holds (``None`` where unreadable).

    Returns:
      The line count of ``/proc/self/maps`` (Linux), else ``None``.

    Example:
      >>> n = memory_maps()
      >>> n is None or n > 0
      True
    """
    try:
        count = 0
        with open("/proc/self/maps", "rb") as f:
            while chunk := f.read(1 << 20):
                count += chunk.count(b"\n")
        return count
    except OSError:
        return None


def map_limit() -> int:
    """The kernel's per-process limit on memory mappings.

    Returns:
      ``/proc/sys/vm/max_map_count``, or :data:`DEFAULT_LIMIT` where it cannot be read.

    Example:
      >>> map_limit() > 0
      True
    """
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):
        return DEFAULT_LIMIT


def on_release(release: Callable[[], None]) -> None:
    """Register ``release``, run by :func:`release_compiled_programs` (each one once).

    Args:
      release: a callable without arguments that drops compiled programs its module keeps.
    """
    if release not in _RELEASERS:
        _RELEASERS.append(release)


def release_compiled_programs() -> None:
    """Drop every compiled program dpjax and JAX keep (:data:`_RELEASERS`, then
    :func:`jax.clear_caches`), so that their memory mappings are unmapped once unused."""
    for release in _RELEASERS:
        release()
    jax.clear_caches()


def release_near_limit(headroom: int | None = None) -> bool:
    r"""Release the compiled programs (:func:`release_compiled_programs`) if the process holds
    more than ``limit - headroom`` memory mappings, warning once per process.

    .. math:: \text{release} \iff \text{maps} > \text{vm.max\_map\_count} - \text{headroom}

    Inside a trace (``jit``, ``vmap``, ``grad`` in progress) it does nothing: JAX's caches
    are not cleared under a computation being traced.  dpjax calls it before it loads or
    compiles a program for concrete arguments (:mod:`.export_cache`).

    Args:
      headroom: mappings kept free below the limit (default: :data:`HEADROOM` as it is at
        the call).

    Returns:
      Whether the programs were released.

    Example:
      >>> release_near_limit(headroom=0)  # no process holds more than the limit
      False
    """
    global _warned
    if not _outside_traces():
        return False
    count = memory_maps()
    limit = map_limit()
    if count is None or count <= limit - (HEADROOM if headroom is None else headroom):
        return False
    release_compiled_programs()
    if not _warned:
        _warned = True
        warnings.warn(
            f"dpjax released its compiled programs: the process held {count} memory "
            f"mappings, near the kernel's limit of {limit} (vm.max_map_count), past which "
            "compiling aborts the process; programs used again are loaded or compiled again",
            ProgramsReleasedWarning, stacklevel=2,
        )
    return True


__all__ = [
    "HEADROOM",
    "ProgramsReleasedWarning",
    "map_limit",
    "memory_maps",
    "on_release",
    "release_compiled_programs",
    "release_near_limit",
]
