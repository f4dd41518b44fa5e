"""The one batching helper: canonical padded batch shapes (few compiles), and sharding.

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


def bucket(n: int) -> int:
    """Round a size up to ``{1, 1.25, 1.5, 1.75} * 2^k`` (at least 8): a finer ladder than
    :func:`padded_size` for static grid lengths (few distinct compiles, at most 25% waste)."""
    n = max(int(n), 8)
    p = 1 << (n.bit_length() - 1)
    for f in (1.0, 1.25, 1.5, 1.75, 2.0):
        if n <= int(p * f):
            return int(p * f)
    return 2 * p


def shard(*arrays, use_devices: bool = True) -> tuple[list, int]:
    """Flatten broadcast host ``arrays`` and pad them (repeating the last row) to
    :func:`padded_size`, so that batches of similar size share one compiled kernel; with
    several devices, also to a multiple of their number, sharded along a 1-D mesh
    (``jax.sharding``): a vectorised kernel then runs one slice of the batch per device.
    Results equal the single-device run (same program per row).

    Returns:
      ``(arrays, n)``: the padded (possibly sharded) device arrays and the true length.
    """
    import jax

    flat = [np.asarray(a, np.float64).reshape(-1) for a in np.broadcast_arrays(*arrays)]
    devices = jax.devices() if use_devices else jax.devices()[:1]
    n = flat[0].size
    m = padded_size(n)
    if len(devices) < 2 or n < 2:
        return [jnp.asarray(np.pad(a, (0, m - n), mode="edge")) for a in flat], n
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    m = -(-m // len(devices)) * len(devices)
    mesh = Mesh(np.asarray(devices), ("grid",))
    sharding = NamedSharding(mesh, PartitionSpec("grid"))
    return [jax.device_put(np.pad(a, (0, m - n), mode="edge"), sharding) for a in flat], n
