"""Stable special functions, root finding, grid minimisation and quadrature (float64 kernels).

:func:`float64_kernel` is the guard every public privacy kernel carries: it
raises :class:`Float64RequiredError` without x64 or on float32 input.  The
special functions here are dtype-generic (the samplers use them in float32).
:class:`Status` is the one status vocabulary of searches and solvers (defined in
:mod:`solvers`, which imports nothing from dpjax).
"""

from dpjax.numerics._exact import quotient, sum3, two_product, two_sum
from dpjax.numerics._logspace import (
    log1mexp,
    log1mexp_host,
    log_binomial_host,
    log_binomial_magnitude_host,
    log_expm1,
    log_expm1_host,
    log_gamma_host,
    logaddexp,
    logsubexp,
    logsumexp_host,
)
from dpjax.numerics._normal import (
    Q_inv,
    log_hockey_stick,
    log_hockey_stick_straddle,
    log_mills,
    log_mills_step,
    log_Q,
    log_Q_host,
    log_Q_inv,
    log_Q_inv_host,
)
from dpjax.numerics._quadrature import gauss_legendre, integrate_panels
from dpjax.numerics._x64 import (
    Float64RequiredError,
    float64_kernel,
    require_float64,
    x64_enabled,
)
from dpjax.numerics.constants import HALF_LOG_2PI, LOG_2
from dpjax.numerics.minimize import ZoomResult, golden_section, zoom_minimize, zoom_minimize_array
from dpjax.numerics.roots import (
    Root,
    Status,
    bisect_bracket,
    bisect_host,
    bisect_monotone,
    illinois,
    illinois_host,
    least_feasible,
    least_integer_host,
    newton_host,
    warm_bracket,
)

__all__ = [
    "HALF_LOG_2PI",
    "LOG_2",
    "Float64RequiredError",
    "Q_inv",
    "Root",
    "Status",
    "ZoomResult",
    "bisect_bracket",
    "bisect_host",
    "illinois_host",
    "newton_host",
    "bisect_monotone",
    "float64_kernel",
    "gauss_legendre",
    "golden_section",
    "illinois",
    "integrate_panels",
    "least_feasible",
    "least_integer_host",
    "log1mexp",
    "log1mexp_host",
    "log_binomial_host",
    "log_binomial_magnitude_host",
    "log_expm1",
    "log_expm1_host",
    "log_gamma_host",
    "log_Q",
    "log_Q_host",
    "log_Q_inv",
    "log_Q_inv_host",
    "log_hockey_stick",
    "log_hockey_stick_straddle",
    "log_mills",
    "log_mills_step",
    "logaddexp",
    "logsubexp",
    "logsumexp_host",
    "quotient",
    "sum3",
    "two_product",
    "two_sum",
    "require_float64",
    "warm_bracket",
    "x64_enabled",
    "zoom_minimize",
    "zoom_minimize_array",
]
