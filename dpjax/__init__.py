"""dpjax: certified noise design and accounting for differential privacy, in JAX.

The public surface: :func:`calibrate` (least-error parameters for a target),
:func:`profile` and :func:`account` (privacy of given parameters), :func:`design`
(every mechanism calibrated, certified and ranked for one target: the comparison as
data), :mod:`dpjax.noise` (``dpjax.noise.make``), and the kernels in
:mod:`dpjax.numerics`, :mod:`dpjax.accounting`, :mod:`dpjax.calibration`.

float64 policy: dpjax never sets ``jax_enable_x64`` at import.  The façade
functions run their privacy-deciding kernels inside ``jax.enable_x64(True)``;
callers of the raw kernels must enable x64 themselves (e.g.
``jax.config.update("jax_enable_x64", True)`` or the context manager): without
it, or given float32 arrays, the kernels raise
:class:`dpjax.numerics.Float64RequiredError` (:func:`dpjax.numerics.float64_kernel`).
Noise may be sampled in any float dtype (:mod:`dpjax.noise`: tails exact down
to :func:`dpjax.noise.tail_floor`).

Compiled programs are kept between processes: dpjax turns on JAX's persistent
compilation cache in ``~/.cache/dpjax/xla`` (when JAX is imported, before anything is
compiled) unless a cache folder is already configured or ``DPJAX_NO_COMPILATION_CACHE=1``
is set (:mod:`dpjax._compilation_cache`).

``import dpjax`` is light: the public names are loaded on first use (PEP 562), so the
``dpjax`` command answers ``--version`` and ``--help`` without importing JAX.
"""

from __future__ import annotations

import importlib
import importlib.util

from dpjax import _compilation_cache
from dpjax.errors import CertificationError, InfeasibleTargetError, TrivialTargetError

__version__ = "0.1.0"

_compilation_cache.enable_with_jax()

#: public name -> (module, attribute); attribute None: the module itself
_LAZY = {
    "Calibration": ("dpjax.calibration.result", "Calibration"),
    "Sensitivity": ("dpjax.sensitivity", "Sensitivity"),
    "account": ("dpjax.api", "account"),
    "accounting": ("dpjax.accounting", None),
    "calibrate": ("dpjax.api", "calibrate"),
    "design": ("dpjax.comparison", "design"),
    "mechanisms": ("dpjax.mechanisms", None),
    "noise": ("dpjax.noise", None),
    "numerics": ("dpjax.numerics", None),
    "papers": ("dpjax.papers", None),
    "profile": ("dpjax.api", "profile"),
}


def __getattr__(name: str):
    """Load a public name (:data:`_LAZY`) or a subpackage on first access (PEP 562).

    The value is stored in the module, so later accesses cost nothing.

    Raises:
      AttributeError: ``name`` is neither a public name nor a module of dpjax.
    """
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
    elif not name.startswith("__") and importlib.util.find_spec(f"dpjax.{name}") is not None:
        value = importlib.import_module(f"dpjax.{name}")
    else:
        raise AttributeError(f"module 'dpjax' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Calibration",
    "CertificationError",
    "InfeasibleTargetError",
    "Sensitivity",
    "TrivialTargetError",
    "account",
    "accounting",
    "calibrate",
    "design",
    "errors",
    "mechanisms",
    "noise",
    "numerics",
    "papers",
    "profile",
]
