"""dpjax.accounting.gaussian: the host (NumPy/SciPy) profile's error bound against mpmath.

``log_delta_gaussian_host`` returns a per-point bound on its float error; these tests check
the SciPy functions it uses against their documented constants and the bound itself against
40-digit mpmath, over the sigmas the host calibration meets on a grid of targets (epsilon
1e-3..50, delta 1e-300..0.5).
"""

import jax
import mpmath
import numpy as np
import pytest
from scipy import special

from dpjax.accounting.gaussian import (
    HOST_LOG_ERFCX_ERROR,
    HOST_LOG_Q_ERROR,
    log_delta_gaussian_host,
)
from dpjax.calibration import gaussian as g
from dpjax.certificate import MARGIN, reported_delta_host

mpmath.mp.dps = 40


@pytest.fixture(autouse=True)
def _x64():
    """The host kernels are float64_kernel-guarded, like the compiled ones."""
    with jax.enable_x64(True):
        yield


EPS = np.geomspace(1e-3, 50.0, 9)
DELTA = np.array([1e-300, 1e-100, 1e-30, 1e-12, 1e-6, 1e-3, 0.1, 0.5])
GRID_E, GRID_D = (v.ravel() for v in np.meshgrid(EPS, DELTA))


def _mp_log_q(x):
    return mpmath.log(mpmath.erfc(mpmath.mpf(float(x)) / mpmath.sqrt(2)) / 2)


def test_log_ndtr_within_the_documented_constant():
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(-40, 40, 600), rng.uniform(-3, 8, 600),
                         np.geomspace(1e-8, 40, 200), -np.geomspace(1e-8, 40, 200)])
    ratio = max(
        abs(float(special.log_ndtr(-x) - _mp_log_q(x))) / (1 + abs(float(_mp_log_q(x))))
        for x in xs
    )
    assert ratio <= HOST_LOG_Q_ERROR / 4, ratio


def test_log_erfcx_within_the_documented_constant():
    rng = np.random.default_rng(2)
    xs = np.concatenate([rng.uniform(-25, 40, 800), rng.uniform(0, 1e3, 200),
                         np.geomspace(1e-8, 1e3, 200), -np.geomspace(1e-8, 25, 200)])
    worst = 0.0
    for x in xs:
        ref = mpmath.log(mpmath.erfc(mpmath.mpf(float(x))) * mpmath.exp(mpmath.mpf(float(x)) ** 2))
        err = abs(float(np.log(special.erfcx(x)) - ref))
        worst = max(worst, err / (1 + max(float(ref), 0.0)))
    assert worst <= HOST_LOG_ERFCX_ERROR / 2, worst


def _mp_log_delta(eps, sigma, l2):
    e, s, d = (mpmath.mpf(float(v)) for v in (eps, sigma, l2))
    q = lambda x: mpmath.erfc(x / mpmath.sqrt(2)) / 2  # noqa: E731
    return mpmath.log(q(e * s / d - d / (2 * s)) - mpmath.exp(e) * q(e * s / d + d / (2 * s)))


def test_host_profile_error_bound_holds_against_mpmath():
    # sigmas of the calibrations over the grid (1e-3..50 x 1e-300..0.5), as the host path meets them
    s_h = np.asarray(g.calibrate_sigma(GRID_E, GRID_D, 1.0)[0])
    rng = np.random.default_rng(1)
    eps = np.concatenate([GRID_E, rng.uniform(0, 20, 40)])
    sigma = np.concatenate([s_h, np.exp(rng.uniform(-3, 5, 40))])
    log_d, err = log_delta_gaussian_host(eps, sigma, 1.0)
    checked = 0
    for e, s, ld, er in zip(eps, sigma, log_d, err, strict=True):
        ref = _mp_log_delta(e, s, 1.0)
        if ref < -700 or not np.isfinite(er):
            continue
        assert abs(float(ld - ref)) <= er, (e, s, float(ld), float(ref), er)
        checked += 1
    assert checked >= 60


def test_host_profile_fails_closed():
    log_d, err = log_delta_gaussian_host(np.nan, 1.0, 1.0)
    assert float(log_d) == 0.0 and err == np.inf
    assert float(reported_delta_host(log_d, err)) == 1.0
    # an error bound beyond MARGIN / 4 is never certified
    assert HOST_LOG_Q_ERROR * 746 < MARGIN / 4
