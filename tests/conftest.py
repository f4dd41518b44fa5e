"""Test configuration: float64 and strict dtype promotion for every test.

dpjax itself never flips x64 at import; the tests enable it globally (as a
user of the raw kernels must) and check float32 behaviour in one dedicated
module (test_float32.py) that uses ``jax.enable_x64(False)``.
"""

import os
import sys

import jax
import pytest
from hypothesis import settings

# test modules live in folders mirroring the package (imported in pytest's "importlib"
# mode, pyproject.toml); the shared helpers (_helpers, _references) sit here
sys.path.insert(0, os.path.dirname(__file__))

# the CLI's persistent compilation cache stays out of the user's home during tests
os.environ.setdefault("DPJAX_NO_COMPILATION_CACHE", "1")

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "strict")

settings.register_profile("dpjax", deadline=None, derandomize=True, max_examples=60)
settings.load_profile("dpjax")


@pytest.fixture
def mp():
    """mpmath at 50 digits."""
    import mpmath

    with mpmath.workdps(50):
        yield mpmath


def _memory_maps() -> int:
    """Number of memory mappings of this process (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/maps") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs between test modules when the process holds many.

    Every compiled XLA CPU executable keeps memory mappings; the whole suite compiles
    thousands of programs, and past the kernel's ``vm.max_map_count`` (65530 by default)
    a new compilation's ``mmap`` fails and XLA crashes with a segmentation fault.
    Clearing only above a threshold keeps programs shared between modules cached.
    """
    yield
    if _memory_maps() > 30000:
        jax.clear_caches()
