"""Exact K-dim flipped Huber calibration end to end at small K on the path below
``TILT_BELOW`` (delta < 1e-7 and K > 1: survey, refine, finalists, tilted stage, certificate),
against an independent reference: the 2-fold hockey stick integrated directly,
``delta_2(eps) = int p(x) H(eps - L(x)) dx`` with ``H`` the exact 1-D profile (eq. (13) of
flipped-huber-mechanism, closed form; no PLD grid, no FFT), and against Theorem 8's member."""

import numpy as np
import pytest

import dpjax
from dpjax.accounting.flipped_huber import log_delta_flipped_huber

K, EPS, DELTA = 2, 1.0, 1e-8


def _log_density(x, alpha, gamma):
    """Unnormalised ``log f`` of FH(alpha, gamma^2) (Def. 7): ``-alpha |x| / gamma^2`` inside
    ``[-alpha, alpha]``, ``-(x^2 + alpha^2) / (2 gamma^2)`` beyond."""
    a = np.abs(x)
    return np.where(a <= alpha, -alpha * a / gamma**2, -(a**2 + alpha**2) / (2 * gamma**2))


def _delta_two_fold(eps, alpha, gamma, linf=1.0):
    """``delta(eps)`` of 2 i.i.d. FH coordinates at the corner ``(linf, linf)``, by
    Gauss-Legendre on the pieces between the kinks of ``p`` and ``L`` (``0, linf, +-alpha,
    linf +- alpha``), over the range holding all but ``~e^{-40}`` of the mass (Laplace-like
    members: 80 Laplace scales ``gamma^2 / alpha``)."""
    reach = alpha + 40 * gamma if alpha == 0 else min(alpha + 40 * gamma, 80 * gamma**2 / alpha)
    lo, hi = -reach, linf + reach
    kinks = [0.0, linf, -alpha, alpha, linf - alpha, linf + alpha]
    cuts = np.unique(np.clip([lo, *kinks, hi], lo, hi))
    t, w = np.polynomial.legendre.leggauss(400)
    pieces = list(zip(cuts[:-1], cuts[1:], strict=True))
    xs = np.concatenate([(b - a) / 2 * t + (a + b) / 2 for a, b in pieces])
    ws = np.concatenate([(b - a) / 2 * w for a, b in pieces])
    # normaliser of f (the same pieces; the tails beyond 40 gamma are negligible)
    log_z = np.log(np.sum(ws * np.exp(_log_density(xs, alpha, gamma))))
    log_p = _log_density(xs, alpha, gamma) - log_z
    e = eps - (_log_density(xs, alpha, gamma) - _log_density(xs - linf, alpha, gamma))
    one = np.exp(np.asarray(log_delta_flipped_huber(np.abs(e), alpha, gamma, linf)))
    # e < 0: the pair is symmetric under reflection, H(e) = 1 - e^e + e^e H(-e)
    h = np.where(e >= 0, one, -np.expm1(e) + np.exp(e) * one)
    return float(np.sum(ws * np.exp(log_p) * h))


# The end-to-end run is slow-tier: cold (the test run's compilation cache starts empty) it
# compiles ~20 XLA programs (the Gaussian member, the sizing pass, the coarse and fine
# search kernels, the tilted sizing and kernel, the winner's re-check by engine.profile,
# Theorem 8's bound), ~100 CPU s at K = 2 whatever the target; the re-check's logic runs by
# default in tests/calibration/test_shape_search.py, the reference's below.
@pytest.fixture(scope="module")
def exact():
    return dpjax.calibrate("flipped-huber", epsilon=EPS, delta=DELTA, dim=K, linf=1.0,
                           condition="exact")


def test_reference_is_the_gaussian_mechanism_at_alpha_0():
    # the reference itself: at alpha = 0 two N(0, s^2) coordinates are the Gaussian
    # mechanism with Delta_2 = sqrt(2) (Balle & Wang 2018, Thm 8)
    from scipy import stats

    s = 3.0
    mu = np.sqrt(2.0) / s
    ref = stats.norm.cdf(-EPS / mu + mu / 2) - np.exp(EPS) * stats.norm.cdf(-EPS / mu - mu / 2)
    assert _delta_two_fold(EPS, 0.0, s) == pytest.approx(ref, rel=1e-6)


@pytest.mark.slow
def test_tilted_path_certified_by_the_two_fold_integral(exact):
    alpha, gamma = float(exact.params["alpha"]), float(exact.params["gamma"])
    assert exact.delta_at_params <= DELTA
    assert _delta_two_fold(EPS, alpha, gamma) <= DELTA
    # and near the least such gamma at this shape: 1% below, the target is missed
    assert _delta_two_fold(EPS, alpha * 0.99, gamma * 0.99) > DELTA


@pytest.mark.slow
def test_never_worse_than_theorem_8_and_the_winner_named(exact):
    suff = dpjax.calibrate("flipped-huber", epsilon=EPS, delta=DELTA, dim=K, linf=1.0,
                           condition="sufficient")
    assert float(exact.variance) <= float(suff.variance)
    member = str(np.asarray(exact.member))
    assert member in ("gaussian", "laplace", "interior")
    note = next(n for n in exact.notes if n.startswith("member that won: "))
    assert member in note and "Theorem 8" in note


def test_theorem_8_member_returned_where_it_beats_the_search(monkeypatch):
    # the search and the Gaussian member stubbed to a poor answer: Theorem 8's member (at the
    # linf box, l1 = K, l2 = sqrt(K)) must be returned, certified by its own bound
    from dpjax.accounting.flipped_huber_kdim import log_delta_flipped_huber_sufficient
    from dpjax.calibration import flipped_huber_kdim as kd
    from dpjax.calibration.flipped_huber import calibrate_flipped_huber_sufficient

    def poor_search(noise_fn, variance_fn, e, d, *args, **kwargs):
        shape = np.broadcast(np.asarray(e), np.asarray(d)).shape
        return (np.zeros(shape), np.full(shape, 1e3), np.full(shape, 1e6), np.full(shape, 1e-9),
                np.ones(shape, bool))

    monkeypatch.setattr(kd, "calibrate_composed", poor_search)
    monkeypatch.setattr(kd, "gaussian_end", lambda e, d, k, linf: (
        np.full_like(e, 1e3), np.full_like(e, 1e-9), np.zeros(e.shape, bool),
        np.full_like(e, np.inf)))
    k, eps, delta = 3, 1.0, 1e-6
    alpha, gamma, var, d_at, ok, source, thm8 = kd.calibrate_flipped_huber_exact_source(
        eps, delta, k, 1.0)
    ref = calibrate_flipped_huber_sufficient(eps, delta, k, float(k), np.sqrt(k), 1.0)
    assert str(source) == kd.FROM_THEOREM8 and bool(ok)
    assert float(var) == float(ref[2]) == float(thm8) and float(alpha) == float(ref[0])
    assert float(d_at) <= delta
    bound = float(log_delta_flipped_huber_sufficient(eps, alpha, gamma, k, float(k),
                                                     np.sqrt(k), 1.0))
    assert bound <= np.log(delta)


def test_the_search_is_told_the_closed_form_gaussian_variance(monkeypatch):
    # the shape search gets the certified closed form's variance as ``beat`` (so no engine row
    # at or above it is re-checked by a full profile); where the search then certifies
    # nothing, the closed-form Gaussian member is returned
    from dpjax.calibration import flipped_huber_kdim as kd
    from dpjax.calibration.gaussian import calibrate_sigma

    seen = []

    def nothing_below(noise_fn, variance_fn, e, d, *args, beat=None, **kwargs):
        seen.append(np.asarray(beat, float))
        shape = np.broadcast(np.asarray(e), np.asarray(d)).shape
        return (np.zeros(shape), np.ones(shape), np.full(shape, np.inf), np.ones(shape),
                np.zeros(shape, bool))

    monkeypatch.setattr(kd, "calibrate_composed", nothing_below)
    k, eps, delta = 1000, 1.0, 1e-10
    sigma = float(calibrate_sigma(eps, delta, np.sqrt(k))[0])
    alpha, gamma, var, d_at, ok, source, _ = kd.calibrate_flipped_huber_exact_source(
        eps, delta, k, 1.0)
    assert len(seen) == 1 and float(seen[0]) == sigma**2
    assert str(source) == kd.FROM_GAUSSIAN and bool(ok)
    assert float(alpha) == 0.0 and float(gamma) == sigma and float(d_at) <= delta
