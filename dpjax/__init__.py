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

Compiled programs are kept between processes: importing dpjax turns on JAX's persistent
compilation cache in ``~/.cache/dpjax/xla`` unless a cache folder is already configured
or ``DPJAX_NO_COMPILATION_CACHE=1`` is set (:mod:`dpjax._compilation_cache`).
"""

from dpjax import _compilation_cache, accounting, errors, mechanisms, noise, numerics, papers
from dpjax.api import account, calibrate, profile
from dpjax.calibration.result import Calibration
from dpjax.comparison import design
from dpjax.errors import CertificationError, InfeasibleTargetError
from dpjax.sensitivity import Sensitivity

__version__ = "0.1.0"

_compilation_cache.enable()

__all__ = [
    "Calibration",
    "CertificationError",
    "InfeasibleTargetError",
    "Sensitivity",
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
