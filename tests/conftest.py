"""Test configuration: float64 and strict dtype promotion for every test.

dpjax itself never flips x64 at import; the tests enable it globally (as a
user of the raw kernels must) and check float32 behaviour in one dedicated
module (test_float32.py) that uses ``jax.enable_x64(False)``.
"""

import gc
import os
import shutil
import sys
import tempfile
import warnings

# One persistent XLA compilation cache per test run, shared by the xdist workers and the
# CLI subprocesses that the tests start (they inherit the environment): a kernel compiled
# by one process is loaded by the others. It is a fresh temporary folder, so no test
# depends on what an earlier run compiled, and the user's ~/.cache is never touched. A
# cache folder the user configured (JAX_COMPILATION_CACHE_DIR) wins. Set before jax is
# imported, which reads these variables once.
_RUN_CACHE = None
if "PYTEST_XDIST_WORKER" not in os.environ and "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _RUN_CACHE = tempfile.mkdtemp(prefix="dpjax-test-xla-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _RUN_CACHE
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.05")

from dpjax.cli._main import (  # noqa: E402 (imports neither JAX nor NumPy)
    ONE_SHOT_XLA_FLAGS,
    add_xla_flags,
    single_threaded_blas,
)

# OpenBLAS on one thread in the xdist workers and the CLI subprocesses (they inherit the
# environment), as in a `dpjax` command: with one worker per core its spinning threads only
# took CPU time from the other worker (docs/development.md)
single_threaded_blas(os.environ)

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# test modules live in folders mirroring the package (imported in pytest's "importlib"
# mode, pyproject.toml); the shared helpers (_helpers, _references) sit here
sys.path.insert(0, os.path.dirname(__file__))

# dpjax's own persistent cache (~/.cache/dpjax) stays out of the user's home during tests
os.environ.setdefault("DPJAX_NO_COMPILATION_CACHE", "1")

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "strict")

settings.register_profile("dpjax", deadline=None, derandomize=True, max_examples=60)
settings.load_profile("dpjax")


#: XLA flags of the default tier: the ``dpjax`` command's one-shot codegen
#: (:data:`dpjax.cli._main.ONE_SHOT_XLA_FLAGS`: XLA CPU's element-wise emitters, LLVM at
#: level 1 with its vectorizers off) and each program's LLVM module compiled in one piece
#: instead of split over threads.  The default tier is dominated by compiling
#: (bench/profile_suite.py); this codegen compiles the engine's kernels in much less time,
#: runs large grids somewhat slower and gives the same numbers
#: (tests/test_default_tier_codegen.py); with one xdist worker per core the cores are
#: already busy, and the split's threads only add work (docs/development.md).  Any other
#: selection (the slow tier, ``-m 'slow or not slow'``) compiles with XLA's defaults, the
#: codegen users get.
DEFAULT_TIER_XLA_FLAGS = f"{ONE_SHOT_XLA_FLAGS} --xla_cpu_parallel_codegen_split_count=1"


def pytest_configure(config):
    """The default tier's XLA flags (:data:`DEFAULT_TIER_XLA_FLAGS`), unless ``XLA_FLAGS``
    sets any of them already (:func:`dpjax.cli._main.add_xla_flags`), set before any backend
    starts: in this process, in every xdist worker (each runs this hook) and in the CLI
    subprocesses the tests start (they inherit the environment)."""
    if (config.getoption("markexpr") or "").strip() == "not slow":
        add_xla_flags(DEFAULT_TIER_XLA_FLAGS, os.environ)


def pytest_unconfigure(config):
    """Freeze the heap, then remove this run's compilation cache (created by the controlling
    process only).

    pytest's unraisable-exception plugin runs five full garbage collections after this hook,
    at the end of every process's session; in an xdist worker they traverse the millions of
    objects of JAX's caches, about 10 s per worker of the default tier
    (``bench/pyspy_breakdown.py``, docs/development.md), while the controlling process
    waits for the workers to exit.  :func:`gc.freeze` leaves them nothing to traverse; the
    process exits right after (a ``__del__`` that would raise in garbage left at that point
    is no longer reported; every test's own unraisable exceptions still are).
    """
    gc.freeze()
    if _RUN_CACHE is not None:
        shutil.rmtree(_RUN_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _mpmath_precision_restored():
    """A test that sets ``mpmath.mp.dps`` leaves the next one the precision it found: xdist
    orders tests differently from run to run, and a reference computed at another test's
    20 digits (``tests/spherical/test_scale.py``) failed a test that needs 50."""
    import mpmath

    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


@pytest.fixture
def mp():
    """mpmath at 50 digits."""
    import mpmath

    with mpmath.workdps(50):
        yield mpmath


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs between test modules when the process holds many.

    Every compiled XLA CPU executable keeps memory mappings; the whole suite compiles
    thousands of programs, and past the kernel's ``vm.max_map_count`` (65530 by default)
    a new compilation's ``mmap`` fails and XLA crashes with a segmentation fault.
    Clearing only within :data:`dpjax.numerics.memory_maps.HEADROOM` of that limit (the
    library's own check, :func:`~dpjax.numerics.memory_maps.release_near_limit`) keeps
    programs shared between modules cached (a clear costs seconds, and every program used
    after it is compiled or loaded again; at a fixed 30,000 each default-tier worker cleared
    once, near its end).  The most one default-tier module added in a worker was about 4,700
    mappings (2026-12-02, ``tests/test_doctests.py``), well inside that headroom.
    """
    yield
    from dpjax.numerics import memory_maps  # what a long-lived user process gets too

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", memory_maps.ProgramsReleasedWarning)
        memory_maps.release_near_limit()
