"""Call a jitted batch kernel on a canonical padded shape.

A jitted kernel compiles once per input shape.  The façade flattens the
broadcast targets and pads them to the next power of two (repeating the last
element), so scalars, length-3 and length-4 targets share one compilation;
outputs are cut back and reshaped.  Used only on host arrays at the façade.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
import numpy as np


def padded_size(n: int) -> int:
    """Next power of two >= ``n`` (at least 1)."""
    return 1 << max(int(n) - 1, 0).bit_length()


def call_padded(kernel: Callable, *args) -> tuple[np.ndarray, ...]:
    """``kernel(*args)`` elementwise over broadcast ``args``, compiled for a padded 1-D shape.

    ``kernel`` must be elementwise (outputs shaped like its broadcast inputs)
    and return an array or a tuple of arrays.  Returns NumPy arrays shaped
    like the broadcast inputs.
    """
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in args))
    shape = arrays[0].shape
    n = int(np.prod(shape, dtype=np.int64))
    size = padded_size(n)
    flat = [np.pad(a.ravel(), (0, size - n), mode="edge") for a in arrays]
    out = kernel(*(jnp.asarray(f) for f in flat))
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    result = tuple(np.asarray(o)[:n].reshape(shape) for o in outs)
    return result[0] if single else result
