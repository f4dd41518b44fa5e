r"""float64 where privacy is decided: the one guard on every public privacy kernel.

Anything that decides a privacy guarantee runs in float64, but dpjax never enables
x64 at import (a library must not flip a global flag).  Without it JAX silently
computes in float32: the raw kernels then warn on every ``jnp.asarray(x, jnp.float64)``,
lose the tails that ``delta = 1e-10`` lives in, and can return an epsilon *below* the
certified one (17.856535 instead of 17.856587 for 10 x Gaussian(1) + 5 x Laplace(10)).
So every public kernel that computes a profile, a PLD, an epsilon or a calibration is
decorated with :func:`float64_kernel`: it raises :class:`Float64RequiredError` when

* x64 is off *where the kernel runs* (checked through
  ``jax.dtypes.canonicalize_dtype(jnp.float64)``, which follows both the global
  ``jax_enable_x64`` flag and the scoped ``with jax.enable_x64(True):`` context of
  jax 0.10, including while a ``jit`` traces under it), or
* an argument holds a floating array narrower than float64 (float32, bfloat16,
  float16, complex64), e.g. ``np.float32(0.5)`` or a float32 ``jax.Array``
  (Python floats and integers are fine: they become float64 under x64).

The façade (``dpjax.calibrate/profile/account``) and the CLI run their kernels in
a scoped ``jax.enable_x64(True)``, so they pass.  Sampling (:mod:`dpjax.noise`) is
not guarded: noise may be drawn in float32.

Placement: the decorator is the outermost one, except where ``@jax.jit`` is the
outermost: then it sits directly under ``@jax.jit``.  There the check runs while tracing,
which is enough because the x64 flag and the argument dtypes are part of the jit
cache key (a call without x64 or with float32 input retraces and raises), costs
nothing on cached calls, and keeps the jit API (``lower``, ``_cache_size``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

F = TypeVar("F", bound=Callable[..., Any])

X64_MESSAGE = (
    "dpjax's privacy kernels need float64: enable it with "
    "jax.config.update('jax_enable_x64', True) or `with jax.enable_x64(True):` "
    "(dpjax.calibrate/profile/account do this for you)"
)


class Float64RequiredError(RuntimeError, ValueError):
    """A privacy kernel was run without x64 or handed a floating input narrower than float64.

    A ``RuntimeError`` (the environment lacks float64) and a ``ValueError`` (the
    input is float32) at once, so either ``except`` clause catches it.
    """


def x64_enabled() -> bool:
    """Whether float64 is available where this runs (global flag or scoped context).

    Checked as ``jax.dtypes.canonicalize_dtype(jnp.float64) == float64``, which follows
    both ``jax_enable_x64`` and a ``with jax.enable_x64(True):`` block (also while a
    ``jit`` traces inside it).

    Returns:
      ``True`` when float64 arrays can be made here.

    Example:
      >>> import jax
      >>> with jax.enable_x64(True):
      ...     x64_enabled()
      True
    """
    return jax.dtypes.canonicalize_dtype(jnp.float64) == np.dtype(np.float64)


def _narrow(leaf) -> np.dtype | None:
    """The dtype of a floating/complex leaf narrower than 64-bit floats, else ``None``."""
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:
        return None
    try:
        dtype = np.dtype(dtype)
    except TypeError:  # extended dtypes (PRNG keys)
        return None
    if jnp.issubdtype(dtype, jnp.floating) and dtype.itemsize < 8:
        return dtype
    if jnp.issubdtype(dtype, jnp.complexfloating) and dtype.itemsize < 16:
        return dtype
    return None


def require_float64(name: str, *args, **kwargs) -> None:
    """Raise :class:`Float64RequiredError` unless x64 is on and no argument is narrower.

    A floating (complex) leaf narrower than 64 (128) bits -- float32, bfloat16,
    float16, complex64 -- is rejected; Python numbers and integer arrays pass.

    Args:
      name: the kernel's name, for the message.
      *args: the kernel's positional arguments (any pytrees; non-array leaves are ignored).
      **kwargs: the kernel's keyword arguments (likewise).

    Raises:
      Float64RequiredError: x64 is off where this runs, or an argument is narrower than
        float64.

    Example:
      >>> import jax, numpy as np
      >>> with jax.enable_x64(True):
      ...     require_float64("delta_of", np.float32(0.5))  # doctest: +IGNORE_EXCEPTION_DETAIL
      Traceback (most recent call last):
      Float64RequiredError: delta_of: argument 0 is float32; ...
    """
    if not x64_enabled():
        raise Float64RequiredError(f"{name}: x64 is disabled. {X64_MESSAGE}")
    for where, tree in [*enumerate(args), *kwargs.items()]:
        for leaf in jax.tree_util.tree_leaves(tree):
            dtype = _narrow(leaf)
            if dtype is not None:
                label = f"argument {where!r}" if isinstance(where, str) else f"argument {where}"
                raise Float64RequiredError(
                    f"{name}: {label} is {dtype.name}; privacy kernels take float64 arrays "
                    f"or Python numbers. {X64_MESSAGE}"
                )


def float64_kernel(fn: F) -> F:
    """Decorator: :func:`require_float64` on every call (see the module docstring).

    The argument that is too narrow is named through the kernel's signature.  The
    wrapper carries ``float64_kernel = True`` (the float32 tests check every public
    kernel for it).

    Args:
      fn: a public kernel that computes a profile, a PLD, an epsilon or a calibration.

    Returns:
      ``fn`` wrapped (``functools.wraps``): same signature, docstring and result.

    Example:
      >>> import jax
      >>> @float64_kernel
      ... def delta_of(epsilon):
      ...     return epsilon
      >>> with jax.enable_x64(False):
      ...     delta_of(1.0)  # doctest: +IGNORE_EXCEPTION_DETAIL
      Traceback (most recent call last):
      Float64RequiredError: delta_of: x64 is disabled. ...
    """
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "kernel"))
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        if signature is not None:  # name the offending argument
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                pass  # let fn raise its own error for a bad call
            else:
                require_float64(name, **bound.arguments)
                return fn(*args, **kwargs)
        require_float64(name, *args, **kwargs)
        return fn(*args, **kwargs)

    guarded.float64_kernel = True  # marker: tests check every public kernel carries it
    return guarded  # type: ignore[return-value]
