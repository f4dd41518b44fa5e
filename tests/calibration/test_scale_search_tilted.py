"""Scale calibration below the plain FFT's floor (:mod:`dpjax.calibration.scale_tilted`).

References and tolerances:

* the ``T``-fold Gaussian without subsampling is one Gaussian with ``mu = sqrt(T) / sigma``
  (Balle & Wang 2018, Thm 8), evaluated in 50-digit mpmath (``tests/_references.py``), so
  its least sigma ``sigma*(eps)`` is exact at any delta.  The engine is pessimistic: each
  use's loss is rounded up by at most one bin ``h`` (and its certified round-off is far
  below the search margin), so its composed loss exceeds the true one by at most ``T h``,
  and the calibrated sigma lies in ``[sigma*(eps), sigma*(eps - T h)]`` up to the search's
  tolerance (1e-7 relative) and margin (delta 1e-6 relative, below 1e-6 in sigma);
* the Poisson-subsampled Gaussian: dp-accounting's RDP accountant (independent, a valid
  upper bound; Mironov, Talwar & Zhang 2019) calibrated by bisection on ``log sigma``:
  the certified sigma is at most that, and its certified epsilon (``dpjax.account``) is at
  most the target and within 2% of it (the bin width and bracket, not the tail bound,
  limit it; before the tilted stage it was the moment bound's, 4-8% below the target).
"""

import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from _helpers import record_calls
from _references import gaussian_delta
from dp_accounting import rdp

import dpjax
from dpjax.accounting.pld import engine
from dpjax.calibration.scale_search import calibrate_scale
from dpjax.noise import Gaussian

T, H = 10, 1e-4
EPS = np.array([1.0])
# two deltas are two tilt levels: two tilted searches (two compiled programs, over a minute
# on one core), marked slow; the deeper one alone runs the same assertions by default
DELTAS = [
    pytest.param(np.array([1e-30]), id="1e-30"),
    pytest.param(np.array([1e-12, 1e-30]), id="1e-12,1e-30", marks=pytest.mark.slow),
]


def exact_sigma(eps, delta, steps):
    """Least sigma of the ``steps``-fold Gaussian at ``(eps, delta)`` (mpmath bisection)."""
    mpmath.mp.dps = 50
    lo, hi = mpmath.mpf("0.01"), mpmath.mpf(1000)
    for _ in range(120):
        mid = mpmath.sqrt(lo * hi)
        if gaussian_delta(eps, mid, 1.0, steps) <= delta:
            hi = mid
        else:
            lo = mid
    return float(hi)


@pytest.fixture(scope="module", params=DELTAS)
def plain_t_fold(request):
    """Every delta in one call (one tilted search per tilt level)."""
    deltas = request.param
    e, d = np.meshgrid(EPS, deltas, indexing="ij")
    full = np.array([[exact_sigma(a, b, T) for b in deltas] for a in EPS])
    with pytest.MonkeyPatch.context() as patch:
        fft_lengths = record_calls(patch, engine, "call_cached", engine._composed_kernel,
                                   lambda *args, **kwargs: kwargs["sizes"].fft)
        res = calibrate_scale(
            Gaussian.from_scale, 0.0, 1.0, e, d, T, None, H, upper=1.02 * full,
            lower=0.7 * full,
        )
    return e, d, full, res, fft_lengths


def test_t_fold_gaussian_matches_the_closed_form_at_tiny_delta(plain_t_fold):
    e, d, full, res, _ = plain_t_fold
    assert np.all(res.certified)
    assert np.all(res.delta_at <= d)
    # the exact profile at the calibrated sigma meets the target: never below sigma*
    assert np.all(res.scale >= full * (1 - 1e-7))
    # and no larger than the pessimistic grid's worst case: sigma*(eps - T h)
    worst = np.array([[exact_sigma(a - T * H, b, T) for b in d[0]] for a in EPS])
    assert np.all(res.scale <= worst * (1 + 2e-6))


def test_a_tilted_roots_certificate_composes_no_plain_grid(plain_t_fold):
    # the re-check of a tilted root is the profile at its target (engine.target_profile):
    # the tilted composition alone, whose one-use pairs (FFT length 0) are all the engine
    # composes; the plain grid, floored by its round-off there, is not composed
    *_, fft_lengths = plain_t_fold
    assert fft_lengths and not any(fft_lengths)


def rdp_sigma(q, steps, eps, delta):
    def eps_at(sigma):
        acc = rdp.RdpAccountant()
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
        ))
        return acc.get_epsilon(delta)

    a, b = math.log(0.1), math.log(100.0)
    while b - a > 1e-9:
        m = 0.5 * (a + b)
        a, b = (a, m) if eps_at(math.exp(m)) <= eps else (m, b)
    return math.exp(b)


def test_subsampled_calibration_is_below_rdp_and_tight():
    q, steps, eps = 0.1, 20, 1.0
    delta = 1e-30  # one target: one tilted search (1e-12 is covered above, slow)
    cal = dpjax.calibrate("gaussian", eps, delta, sampling_rate=q, compositions=steps, l2=1.0)
    for sigma in np.ravel(np.asarray(cal.params["sigma"], float)):
        assert sigma <= rdp_sigma(q, steps, eps, delta)
        got = float(np.ravel(dpjax.account(
            "gaussian", {"sigma": float(sigma)}, compositions=steps, sampling_rate=q,
            delta=delta, l2=1.0,
        ))[0])
        assert got <= eps
        assert got >= eps * (1 - 2e-2)
