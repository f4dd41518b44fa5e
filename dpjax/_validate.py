"""Input validation shared by every public entry point.

Each check raises ``ValueError`` naming the argument, the offending value and
what is allowed (bad input is a ``ValueError``; an infeasible target has its own
exception, :class:`dpjax.errors.InfeasibleTargetError`).  Checks run on concrete host values
(the façade layer); kernels themselves never branch on data.

Only real numbers are numbers here: strings (``"0.3"``), booleans and
complex values are rejected rather than converted.  Positive quantities
(scales, sensitivities) must be *normal* float64 numbers: XLA flushes
subnormals (below ``2.2250738585072014e-308``) to zero, which would turn a
noise scale into "no noise" inside a kernel.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

#: Smallest positive normal float64 (XLA flushes anything smaller to zero).
TINY = float(np.finfo(np.float64).tiny)
#: Largest composition count accepted (it is converted to float64 for closed forms).
MAX_COMPOSITIONS = 10**300
#: The dtypes noise may be sampled in: the real floating types the tail-exact samplers
#: (:mod:`dpjax.noise._tail`) are built for.  Integer, boolean and complex outputs would
#: round or discard the noise, and float8 types have no infinity and saturate to NaN.
SAMPLE_DTYPES = ("bfloat16", "float16", "float32", "float64")


def shown(value) -> str:
    """``value`` as a user reads it: NumPy scalars and arrays as plain numbers and lists.

    Args:
      value: any value quoted in an error message.

    Returns:
      Its ``repr``, with NumPy types turned into Python ones first.

    Example:
      >>> shown(np.float64(-1.0)), shown(np.array([1.0, 2.0])), shown("0.3")
      ('-1.0', '[1.0, 2.0]', "'0.3'")
    """
    if isinstance(value, (np.generic, np.ndarray)):
        value = np.asarray(value).tolist()
    return repr(value)


def as_array(name: str, value) -> np.ndarray:
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raw = None
    if raw is None or raw.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be a real number or array of real numbers (not a string, boolean "
            f"or complex), got {shown(value)}"
        )
    arr = raw.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got {shown(value)}")
    return arr


def _first_bad(arr: np.ndarray, bad: np.ndarray):
    return arr[bad].flat[0] if np.ndim(arr) else float(arr)


def _subnormal(arr: np.ndarray) -> np.ndarray:
    return (arr > 0) & (arr < TINY)


def _raise(name: str, allowed: str, arr: np.ndarray, bad: np.ndarray):
    value = _first_bad(arr, bad)
    note = (
        f" (a subnormal float64, which XLA flushes to 0; the least positive value allowed is "
        f"{TINY!r})"
        if 0 < abs(value) < TINY
        else ""
    )
    raise ValueError(f"{name} must {allowed}, got {shown(value)}{note}")


def epsilon(value, name: str = "epsilon") -> np.ndarray:
    """Validate a privacy budget: ``epsilon >= 0`` and finite; 0 or a normal float64.

    ``inf`` is not a privacy guarantee (eq. (1) of flipped-huber-mechanism needs a finite
    ``epsilon``).

    Args:
      value: the user's epsilon (number or array).
      name: the argument's name, for the message.

    Returns:
      ``value`` as a float64 array.

    Raises:
      ValueError: not real, empty, negative, non-finite or subnormal.

    Example:
      >>> epsilon(-1.0)  # doctest: +IGNORE_EXCEPTION_DETAIL
      Traceback (most recent call last):
      ValueError: epsilon must be finite and >= 0, got -1.0
    """
    arr = as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0) | _subnormal(arr)
    if np.any(bad):
        _raise(name, "be finite and >= 0", arr, bad)
    return arr


def delta(value, name: str = "delta") -> np.ndarray:
    """Validate a privacy leakage: ``delta`` in ``[0, 1)``; 0 or a normal float64.

    Args:
      value: the user's delta (number or array).
      name: the argument's name, for the message.

    Returns:
      ``value`` as a float64 array; a ``ValueError`` when it is not real, empty, outside
      ``[0, 1)`` or subnormal.
    """
    arr = as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr >= 1) | _subnormal(arr)
    if np.any(bad):
        _raise(name, "lie in [0, 1)", arr, bad)
    return arr


def positive(value, name: str) -> np.ndarray:
    """Validate a scale or sensitivity: finite and ``>= 2.2250738585072014e-308``.

    Subnormal values are refused: XLA flushes them to zero, which would make a noise scale
    "no noise".

    Args:
      value: a number or an array of numbers.
      name: what to call it in the message.

    Raises:
      ValueError: it is not real, empty, non-finite, ``<= 0`` or subnormal.

    Returns:
      ``value``, converted to float64.
    """
    arr = as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < TINY)
    if np.any(bad):
        _raise(name, "be finite and > 0", arr, bad)
    return arr


def nonnegative(value, name: str) -> np.ndarray:
    """Validate a finite real that is 0 or a normal float64 (e.g. a flipped Huber alpha).

    Args:
      value: number(s) to check.
      name: its name in the error message.

    Returns:
      A float64 array (``ValueError`` for non-real, empty, non-finite, negative or
      subnormal input).
    """
    arr = as_array(name, value)
    bad = ~np.isfinite(arr) | (arr < 0) | _subnormal(arr)
    if np.any(bad):
        _raise(name, "be finite and >= 0", arr, bad)
    return arr


def positive_int(value, name: str, maximum: int | None = None) -> int:
    """Validate an integer ``>= 1`` (``<= maximum`` if given): a dimension, a composition count.

    Args:
      value: the integer (``bool`` is rejected).
      name: the argument's name, for the message.
      maximum: the largest value allowed, or ``None``.

    Returns:
      ``value`` as an ``int``.

    Raises:
      ValueError: not an integer, ``< 1`` or ``> maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {shown(value)}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be an integer in [1, {maximum:.0e}], got {shown(value)}")
    return int(value)


def probability(value, name: str) -> float:
    """Validate a sampling rate: a single number in ``(0, 1]`` (a normal float64, ``>= 2.2e-308``).

    Args:
      value: the rate.
      name: the argument's name, for the message.

    Returns:
      ``value`` as a float.

    Raises:
      ValueError: not a single real number in ``(0, 1]``.
    """
    arr = as_array(name, value)
    if arr.ndim or not np.isfinite(arr) or not (TINY <= arr <= 1):
        raise ValueError(
            f"{name} must be a single number in (0, 1] (>= {TINY!r}), got {shown(value)}"
        )
    return float(arr)


def sample_dtype(value, name: str = "dtype"):
    """Validate the dtype noise is sampled in: one of :data:`SAMPLE_DTYPES`.

    A sampler that returned integers, booleans or complex numbers would round away or
    misplace the noise the accountant certified, so every sampler refuses them.

    Args:
      value: anything ``jnp.dtype`` accepts (``jnp.float32``, ``"bfloat16"``, ...).
      name: the argument's name, for the message.

    Returns:
      ``value`` as a ``numpy.dtype``.

    Raises:
      TypeError: ``value`` is not a dtype, or not one of :data:`SAMPLE_DTYPES`.

    Example:
      >>> sample_dtype("float32")
      dtype('float32')
      >>> sample_dtype("int32")  # doctest: +IGNORE_EXCEPTION_DETAIL
      Traceback (most recent call last):
      TypeError: dtype must be a real floating type (bfloat16, ... or float64), got int32
    """
    try:
        dtype = jnp.dtype(value)
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or dtype.name not in SAMPLE_DTYPES:
        shown_value = dtype.name if dtype is not None else shown(value)
        raise TypeError(
            f"{name} must be a real floating type ({', '.join(SAMPLE_DTYPES[:-1])} or "
            f"{SAMPLE_DTYPES[-1]}), got {shown_value}"
        )
    return dtype


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together or raise a ``ValueError`` naming the shapes.

    Args:
      **arrays: the arrays, by argument name.

    Returns:
      The broadcast arrays, in the order given.

    Raises:
      ValueError: the shapes do not broadcast.
    """
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from None
