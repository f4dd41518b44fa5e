"""Test configuration: float64 and strict dtype promotion for every test.

dpjax itself never flips x64 at import; the tests enable it globally (as a
user of the raw kernels must) and check float32 behaviour in one dedicated
module (test_float32.py) that uses ``jax.enable_x64(False)``.
"""

import os

import jax
import pytest
from hypothesis import settings

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
