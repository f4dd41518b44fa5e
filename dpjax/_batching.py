"""The one batching helper: canonical padded batch shapes (few compiles), and sharding.

A jitted kernel compiles once per input shape.  Batches are flattened and padded up to a
canonical size, so that scalars and batches of up to :data:`SMALL_BATCH` targets share one
compilation; outputs are cut back and reshaped.  Two ladders of sizes:

* :func:`padded_size`: the next power of two (at least ``minimum``), for batches of
  targets (:func:`call_padded` on the host, :func:`padded` and :func:`padded_elementwise`
  traceable, :func:`shard` across devices);
* :func:`ladder`: ``{1.5, 2} * 2^k`` (five rungs an octave above ``2^20``), a finer ladder
  for static grid and FFT lengths.

Padding repeats the last element (:func:`pad`), which keeps an elementwise kernel's
padded rows valid inputs; a kernel that reduces over the batch (e.g. a sum over the
coordinates of a profile) pads with a neutral value instead (``pad(x, size, fill=0)``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

#: least padded size of a batch of targets at a host entry point (:func:`call_padded`):
#: scalars and grids of up to 16 targets share one compiled program per kernel.
SMALL_BATCH = 16


def padded_size(n: int, minimum: int = 1) -> int:
    """The next power of two ``>= max(n, minimum)``.

    Args:
      n: the true batch size.
      minimum: the least size returned (a power of two, so that the ladder stays one).

    Returns:
      ``2^ceil(log2(max(n, minimum, 1)))``.
    """
    return 1 << (max(int(n), int(minimum), 1) - 1).bit_length()


#: Above this many points a length costs more to run than to compile: :func:`ladder` has
#: five rungs an octave there instead of two.
FINE_LADDER_ABOVE = 2**20
#: The rungs of an octave ``(p/2, p]`` above :data:`FINE_LADDER_ABOVE`, in sixteenths of
#: ``p``: ``9/16, 5/8, 3/4, 7/8, 1`` (fast FFT lengths ``2^a 3^b 5^c 7^d``, at most a
#: fifth more points than needed).
_FINE_RUNGS = (9, 10, 12, 14, 16)


def rungs(p: int) -> list[int]:
    """The ladder's sizes in the octave ``(p/2, p]`` (``p`` a power of two), ascending.

    Args:
      p: a power of two.

    Returns:
      ``[3p/4, p]`` up to :data:`FINE_LADDER_ABOVE`, ``p r / 16`` for ``r`` in
      ``9, 10, 12, 14, 16`` above it.
    """
    if p > FINE_LADDER_ABOVE:
        return [p * r // 16 for r in _FINE_RUNGS]
    return [3 * p // 4, p]


def ladder(n: float) -> int:
    r"""The least size ``>= n`` on dpjax's ladder of static grid and FFT lengths (at least 8).

    .. math:: \text{ladder}(n) = \min\{m \in R : m \ge \max(n, 8)\},\quad
              R = \{2^k, 1.5 \cdot 2^k\} \cup
              \{2^k \cdot \tfrac{r}{16} : r \in \{18, 20, 24, 28\},\
              2^k > 2^{20}\}

    Two steps an octave up to :data:`FINE_LADDER_ABOVE` (at most a third more points than
    needed), five above it, where a length costs more to run than to compile (at most a
    fifth more); every one a fast FFT length (``2^a 3^b 5^c 7^d``).  The PLD engine's grid
    and FFT lengths (:func:`dpjax.accounting.pld.plan.sizes_for`) and the ledger's grids
    (:mod:`dpjax.accounting.events.plds`, :mod:`dpjax.accounting.pld.mixture`,
    :mod:`dpjax.accounting.pld.atoms`) all fall on it, so that a new ``K``, scale, rate or
    bin width, and a new ledger, reuse compiled programs.  A longer grid or FFT is exact
    padding (the grid reaches further, the window cuts less tail).

    Args:
      n: the size needed.

    Returns:
      The ladder size, a host integer.

    Example:
      >>> [ladder(n) for n in (3, 100, 128, 129, 193)]
      [8, 128, 128, 192, 256]
      >>> ladder(13_365_590)  # 7 * 2^21, where the two-step ladder gives 2^24
      14680064
    """
    n = max(int(math.ceil(n)), 8)
    p = 1 << (n - 1).bit_length()  # least power of two >= n
    return next(m for m in rungs(p) if m >= n)


def device_array(x, dtype=None):
    """``jnp.asarray(x, dtype)`` of a host value, put on the default device directly.

    ``jnp.asarray`` stages a NumPy array through a small compiled program (``lax.stage``;
    a Python number given a ``dtype`` through ``convert_element_type``), one per shape and
    dtype, which a fresh process compiles before its first answer; ``jax.device_put`` makes
    the same array (dtype after JAX's canonicalisation, shape, not weakly typed) with no
    program.  A JAX array or a tracer goes through ``jnp.asarray``.

    Args:
      x: a NumPy array, or a Python number with ``dtype`` given (without one, ``jnp.asarray``
        makes a number weakly typed: use it there).
      dtype: the dtype (default: ``x``'s).

    Returns:
      The JAX array.

    Example:
      >>> import numpy as np
      >>> a = device_array(np.arange(3.0))
      >>> a.shape, a.weak_type
      ((3,), False)
    """
    if isinstance(x, (jax.Array, jax.core.Tracer)):
        return jnp.asarray(x, dtype)
    return jax.device_put(np.asarray(x, dtype))


def pad(x, size: int, fill: float | None = None):
    """``x`` flattened and padded to ``size`` entries (NumPy in, NumPy out; JAX in, JAX out).

    Args:
      x: an array (NumPy, or JAX: traceable).
      size: the padded length, ``>= x.size``.
      fill: the value of the padding; ``None`` repeats the last element (zeros if ``x`` is
        empty).

    Returns:
      The 1-D padded array.
    """
    xp = np if isinstance(x, np.ndarray) else jnp
    flat = xp.reshape(x, -1)
    n = flat.shape[0]
    if fill is not None:
        return xp.concatenate([flat, xp.full(size - n, fill, flat.dtype)])
    if n == 0:
        return xp.zeros(size, flat.dtype)
    return xp.pad(flat, (0, size - n), mode="edge")


def call_padded(
    kernel: Callable, *args, minimum: int = SMALL_BATCH
) -> tuple[np.ndarray, ...]:
    """``kernel(*args)`` elementwise over broadcast ``args``, compiled for a padded 1-D shape.

    Args:
      kernel: elementwise in its arguments (outputs shaped like its broadcast inputs);
        returns an array or a tuple of arrays.
      *args: host arrays (broadcast together, as float64).
      minimum: least padded size (:func:`padded_size`); the default
        :data:`SMALL_BATCH` gives a scalar and a small grid one program.

    Returns:
      NumPy arrays shaped like the broadcast inputs (one, or a tuple like ``kernel``'s).
    """
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in args))
    return _call_flat(kernel, arrays, minimum, lambda o: np.asarray(o))


def _call_flat(kernel: Callable, arrays, minimum: int, convert: Callable):
    """``kernel`` on the broadcast ``arrays`` flattened and padded to :func:`padded_size`;
    each output cut back to the true length, ``convert``-ed and reshaped."""
    shape = arrays[0].shape
    n = int(np.prod(shape, dtype=np.int64))
    size = padded_size(n, minimum)
    out = kernel(*(device_array(pad(a, size)) for a in arrays))
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    result = tuple(convert(o)[:n].reshape(shape) for o in outs)
    return result[0] if single else result


def padded_elementwise(minimum: int = 1) -> Callable:
    """Decorator: a kernel elementwise in all its arguments, evaluated on padded flat copies.

    The traceable (JAX in, JAX out) counterpart of :func:`call_padded`: the arguments are
    broadcast, cast to float64, flattened and padded to :func:`padded_size`, so that every
    batch up to the same power of two (scalars included) shares one compiled program;
    each output (an array or a tuple of arrays) is cut back and reshaped to the broadcast
    shape.  Works eagerly and inside ``jit``, ``vmap`` and ``grad``.

    Args:
      minimum: least padded size.

    Returns:
      The decorator.
    """

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args):
            arrays = jnp.broadcast_arrays(*(jnp.asarray(a, jnp.float64) for a in args))
            return _call_flat(fn, arrays, minimum, lambda o: o)

        return wrapper

    return decorate


def _host_if_concrete(out):
    """``out`` as a NumPy array, or as it is where it is traced (a ``context`` of
    :func:`padded` traced inside ``jit``)."""
    return out if isinstance(out, jax.core.Tracer) else np.asarray(out)


def padded(minimum: int = 1) -> Callable:
    """Decorator: ``fn(context, x)``, elementwise in ``x``, evaluated on a padded flat ``x``.

    Traceable (a traced ``x`` is padded and cut by JAX), so the decorated function also
    works inside ``jit`` and ``vmap``; the padded length is :func:`padded_size` of
    ``x.size``.  A concrete ``x`` is padded on the host (NumPy) and a concrete result cut
    there, so that a call compiles ``fn``'s program only, not also small programs that
    reshape, pad and slice around it; the result is a device array (a tracer where
    ``context`` is traced) either way.

    Args:
      minimum: least padded size.

    Returns:
      The decorator; the decorated function returns an array (or a tuple of arrays, as
      ``fn`` does) shaped like ``x``.
    """

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(context, x):
            flat = lambda v: fn(context, v)  # noqa: E731
            if isinstance(x, jax.core.Tracer):
                return _call_flat(flat, [jnp.asarray(x, jnp.float64)], minimum, lambda o: o)
            out = _call_flat(flat, [np.asarray(x, np.float64)], minimum, _host_if_concrete)
            return jax.tree.map(device_array, out)

        return wrapper

    return decorate


def map_leading(fn: Callable, *stacked):
    """``fn`` of each entry along the leading axis of the pytrees ``stacked``, stacked again.

    A loop over that axis (:func:`jax.lax.map`), or, when it has length 1, one direct call
    whose outputs gain the axis.  Either way ``fn`` is traced once, on one entry, without a
    batching trace: its callers map grid-sized work (a composition, a query of a PLD, one
    use's moments) over few entries (two adjacencies, a handful of targets), where a batch
    runs no faster than a loop and :func:`jax.vmap` would roughly double the time to trace
    and lower the program (every jitted helper inside ``fn`` batched anew).

    Args:
      fn: ``(*entries) -> pytree of arrays`` (traceable).
      *stacked: pytrees of arrays sharing a leading axis.

    Returns:
      ``fn``'s pytree with that leading axis.

    Example:
      >>> import jax.numpy as jnp
      >>> map_leading(lambda a, b: a * b, jnp.ones((1, 2)), jnp.full((1, 2), 3.0)).shape
      (1, 2)
      >>> map_leading(jnp.sum, jnp.arange(6.0).reshape(3, 2)).tolist()
      [1.0, 5.0, 9.0]
    """
    if jax.tree.leaves(stacked)[0].shape[0] == 1:
        return jax.tree.map(lambda v: v[None], fn(*jax.tree.map(lambda v: v[0], stacked)))
    return jax.lax.map(lambda entry: fn(*entry), stacked)


def shard(*arrays, use_devices: bool = True) -> tuple[list, int]:
    """Flatten and pad broadcast host ``arrays``; with several devices, shard them.

    Rows are padded (repeating the last row) to :func:`padded_size`, so that batches of
    similar size share one compiled kernel; with several devices, also to a multiple of
    their number, sharded along a 1-D mesh (``jax.sharding``): a vectorised kernel then
    runs one slice of the batch per device.  Results equal the single-device run (same
    program per row).

    Args:
      *arrays: host arrays (broadcast together, as float64).
      use_devices: ``False`` keeps everything on the first device.

    Returns:
      ``(arrays, n)``: the padded (possibly sharded) device arrays and the true length.
    """
    flat = [np.asarray(a, np.float64).reshape(-1) for a in np.broadcast_arrays(*arrays)]
    devices = jax.devices() if use_devices else jax.devices()[:1]
    n = flat[0].size
    m = padded_size(n)
    if len(devices) < 2 or n < 2:
        return [device_array(pad(a, m)) for a in flat], n
    m = -(-m // len(devices)) * len(devices)
    mesh = Mesh(np.asarray(devices), ("grid",))
    sharding = NamedSharding(mesh, PartitionSpec("grid"))
    return [jax.device_put(pad(a, m), sharding) for a in flat], n
