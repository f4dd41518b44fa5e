"""The tilt level is data, not a compile key (:func:`dpjax.accounting.pld.plan.traced_tail`).

Reference: the closed form of ``K`` uses of ``N(0, sigma^2)`` (one use of
``N(0, sigma^2 / K)``, Balle & Wang 2018, Thm 8) in 50-digit mpmath: every answer, at
every level, is certified (the exact delta at the returned epsilon is below the target).
"""

import concurrent.futures
import contextlib
import math

import mpmath
import numpy as np
import pytest
from _helpers import record_calls
from _references import gaussian_delta

from dpjax.accounting.pld import engine
from dpjax.accounting.pld import plan as pld_plan
from dpjax.accounting.pld.tilted import fold as tilted
from dpjax.noise import Gaussian, Laplace

SIGMA, K, H = 10.0, 100, 1e-3  # mu = 1
DELTAS = np.array([1e-20, 1e-50])


def _gaussian(scale, shape):
    del shape
    return Gaussian(scale)


def test_two_tilt_levels_share_one_sizing_and_one_tilted_program():
    sizing = pld_plan._sizing._cache_size()
    levels = [math.log(1e-20), math.log(1e-60)]  # tails 1e-40 and 1e-80
    sizes = [pld_plan.tilted_sizes(_gaussian, SIGMA, 0.0, 1.0, None, K, H, v) for v in levels]
    assert sizes[0].tail != sizes[1].tail
    assert pld_plan._sizing._cache_size() <= sizing + 1  # one sizing program for both levels
    # the same lengths at both levels (the deeper level's; lengths decide tightness only)
    same = [s._replace(grid=sizes[1].grid, fft=sizes[1].fft) for s in sizes]
    args = engine.scalar_args(SIGMA, 0.0, 1.0, None, K)
    before = tilted._tilted_answers._cache_size(), engine._composed_kernel._cache_size()
    got = [
        tilted.tilted_kernel(
            *args, DELTAS, noise_fn=_gaussian, bin_width=H, sizes=s, subsampled=False,
            by_delta=True,
        )
        for s in same
    ]
    # one program for the one-use pairs, one for the answers, at both levels
    after = tilted._tilted_answers._cache_size(), engine._composed_kernel._cache_size()
    assert after[0] == before[0] + 1 and after[1] <= before[1] + 1
    with mpmath.workdps(50):
        for eps in got:
            eps = np.asarray(eps)
            assert np.all(np.isfinite(eps))
            exact = [float(gaussian_delta(e, SIGMA, 1.0, K)) for e in eps]
            assert np.all(np.array(exact) <= DELTAS)


def test_a_certificate_recheck_composes_once_at_the_epsilon_querys_level(monkeypatch):
    """``engine.epsilon`` at a tiny delta: one tilted composition for the epsilon, one for
    its certificate's re-check (a log delta query runs at the target delta's level, which
    is the epsilon query's: not first at a deeper, larger window), and the exact delta at
    the answer is below the target."""
    calls = []
    real = engine.run_padded

    def counted(kernel, args, xs, *more, **static):
        calls.append((static["by_delta"], static["sizes"]))
        return real(kernel, args, xs, *more, **static)

    monkeypatch.setattr(engine, "run_padded", counted)
    engine._ANSWERS.clear()
    eps = float(engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, 1e-30, compositions=K, bin_width=H))
    assert [by_delta for by_delta, _ in calls] == [True, False]
    assert calls[0][1] == calls[1][1]  # the re-check saw the composition eps came from
    with mpmath.workdps(50):
        assert float(gaussian_delta(eps, SIGMA, 1.0, K)) <= 1e-30


def test_an_epsilon_and_its_recheck_run_one_tilted_program_a_profile_its_own(monkeypatch):
    """The tilted answers of an epsilon query and of its certificate's re-check (a ``log
    delta`` query at the epsilon) are one program, the query kind a traced flag
    (``by_delta=None``); a profile asked on its own compiles only the ``log delta`` kind.
    The shared program's re-check gives the bits of the profile's own program, and the
    epsilon the bits of an epsilon-only program."""
    kinds = record_calls(monkeypatch, tilted, "call_cached", tilted._tilted_answers,
                         lambda *args, **kwargs: kwargs["by_delta"])
    engine._ANSWERS.clear()
    eps = engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, 1e-30, compositions=K, bin_width=H)
    assert kinds == [None, None]
    engine._ANSWERS.clear()
    kinds.clear()
    engine.profile(_gaussian, SIGMA, 0.0, 1.0, eps, compositions=K, bin_width=H)
    # its own kind only: at the plain answer's level, then (the answer far below it) at the
    # answer's own level, the same program
    assert kinds == [False, False]
    # the same entry through both programs, each kind: the same doubles
    args = engine.scalar_args(SIGMA, 0.0, 1.0, None, K)
    sizes = pld_plan.tilted_sizes(_gaussian, SIGMA, 0.0, 1.0, None, K, H, math.log(1e-30))
    for by_delta, x in ((True, 1e-30), (False, float(eps))):
        got = [
            np.asarray(tilted.tilted_kernel(
                *args, np.array([x]), np.array([math.log(1e-30)]), noise_fn=_gaussian,
                bin_width=H, sizes=sizes, subsampled=False, by_delta=by_delta,
                either_kind=either,
            ))
            for either in (False, True)
        ]
        np.testing.assert_array_equal(got[0], got[1])


def test_a_query_and_its_recheck_compose_each_pld_once(monkeypatch):
    """The re-check of an epsilon query below ``TILT_BELOW`` reads the query's compositions
    (the tilted pairs'; :func:`engine.composed_fields`: below ``TILT_BELOW`` the plain grid
    is not composed, :func:`engine._tilted_alone`) instead of composing them again, gives
    the bits of a run that composes them again, and nothing is kept once the query has
    returned."""
    def query():
        engine._ANSWERS.clear()
        return engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, 1e-30, compositions=K, bin_width=H)

    calls = record_calls(monkeypatch, engine, "call_cached", engine._composed_kernel,
                         lambda *args, **kwargs: kwargs["sizes"])
    kept = query()
    assert len(calls) == len(set(calls)) == 1  # the one-use pairs only
    assert calls[0].fft == 0
    assert engine._COMPOSED.get() is None
    calls.clear()
    monkeypatch.setattr(engine, "_one_query", contextlib.nullcontext)  # nothing kept
    again = query()
    assert len(calls) == 2 and set(calls) == {calls[0]}
    np.testing.assert_array_equal(kept, again)


@pytest.mark.parametrize("sampling_rate, compositions", [(None, K), (0.1, 30)])
def test_below_tilt_below_the_tilted_composition_answers_alone(monkeypatch, sampling_rate,
                                                               compositions):
    """Every entry below ``TILT_BELOW``: the tilted composition alone gives the answers the
    minimum with the plain grid gives (the plain grid's round-off floor makes it the larger
    one), each certified by the 50-digit closed form where there is one; one use (nothing
    to tilt) falls back to the plain grid."""
    deltas = np.array([1e-8, 1e-12, 1e-30])

    def both(alone):
        engine._ANSWERS.clear()
        with monkeypatch.context() as m:
            if not alone:
                m.setattr(engine, "_tilted_alone", lambda *a: False)
            eps = engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, deltas, compositions=compositions,
                                 sampling_rate=sampling_rate, bin_width=H)
            at = engine.profile(_gaussian, SIGMA, 0.0, 1.0, eps, compositions=compositions,
                                sampling_rate=sampling_rate, bin_width=H)
        return eps, at

    alone, full = both(True), both(False)
    np.testing.assert_array_equal(alone[0], full[0])
    assert np.all(alone[1] <= deltas)
    if sampling_rate is None:
        with mpmath.workdps(50):
            assert all(float(gaussian_delta(e, SIGMA, 1.0, K)) <= d
                       for e, d in zip(alone[0], deltas, strict=True))
    engine._ANSWERS.clear()
    once = engine.epsilon(_gaussian, 1.0, 0.0, 1.0, 1e-12, compositions=1, bin_width=H)
    with mpmath.workdps(50):
        assert 0 < float(gaussian_delta(float(once), 1.0, 1.0, 1)) <= 1e-12


def test_an_epsilon_at_tilt_below_takes_the_tilted_path_its_certificate_takes(monkeypatch):
    """A target at ``TILT_BELOW`` itself: the profile at the epsilon found lies below it, so
    the certificate's re-check runs the tilted composition, and the query does too, alone
    (:func:`engine._target_tilts`: the one-use pairs are all it composes); the profile at its
    answer then reads the re-check's (nothing composed again).  The answer is at most the
    plain grid's (the path before) and certified by the 50-digit closed form."""
    delta = engine.TILT_BELOW

    def query():
        engine._ANSWERS.clear()
        return float(engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, delta, compositions=K,
                                    bin_width=H))

    calls = record_calls(monkeypatch, engine, "call_cached", engine._composed_kernel,
                         lambda *args, **kwargs: kwargs["sizes"])
    eps = query()
    assert len(calls) == 1 and calls[0].fft == 0  # the one-use pairs only
    calls.clear()
    at = engine.profile(_gaussian, SIGMA, 0.0, 1.0, eps, compositions=K, bin_width=H)
    assert not calls and at <= delta
    monkeypatch.setattr(engine, "_tilted_alone", lambda *a: False)
    monkeypatch.setattr(engine, "_tilted", lambda by_delta, noise_fn, args, x, out, *a: out)
    assert eps <= query()  # the plain grid alone
    with mpmath.workdps(50):
        assert float(gaussian_delta(eps, SIGMA, 1.0, K)) <= delta


def test_a_profile_afresh_certifies_an_epsilon_tilted_near_tilt_below():
    """Targets at and just below ``TILT_BELOW`` are answered by the tilted composition, and
    the plain grid's answer at such an epsilon lies above the target (2e-5 relative here).
    A profile asked there afresh (no memo: as the façade's re-check is when the target came
    beside others) runs the tilted composition too (``PROFILE_TILT_BELOW``) and certifies
    it; with the plain grid alone it did not, and the façade raised.  Asked beside a plain
    target (1e-6), each answer is the bits of its own query."""
    deltas = np.array([engine.TILT_BELOW, engine.TILT_BELOW * (1.0 - 1e-5), 1e-6])

    def epsilon(delta):
        engine._ANSWERS.clear()
        return np.asarray(engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, delta, compositions=K,
                                         bin_width=H), np.float64)

    alone = np.array([float(epsilon(d)) for d in deltas])
    np.testing.assert_array_equal(epsilon(deltas), alone)
    engine._ANSWERS.clear()
    afresh = engine.profile(_gaussian, SIGMA, 0.0, 1.0, alone, compositions=K, bin_width=H)
    assert np.all(afresh <= deltas)
    with mpmath.workdps(50):
        assert all(float(gaussian_delta(e, SIGMA, 1.0, K)) <= d
                   for e, d in zip(alone, deltas, strict=True))


def test_profile_and_target_tilt_rules_at_their_edges():
    """The two host rules of where the tilted composition runs: a profile's plain answer
    strictly below ``PROFILE_TILT_BELOW`` (the one rule of :func:`engine._tilted` and of the
    certificate an answer keeps), a target (or a re-check level) at most ``TILT_BELOW``
    after the margin; ``nan`` and ``+inf`` levels of a profile tilt neither."""
    edge = math.log(engine.PROFILE_TILT_BELOW)
    log_d = np.array([np.nextafter(edge, -np.inf), edge, np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(engine._profile_tilts(log_d),
                                  [True, False, False, False, True])
    at = math.log(engine.TILT_BELOW) - math.log1p(-engine.MARGIN)
    np.testing.assert_array_equal(
        engine._target_tilts(np.array([at - 1e-12, at + 1e-9, math.log(engine.TILT_BELOW)])),
        [True, False, True],
    )


def test_target_profile_composes_the_one_use_pairs_alone_below_tilt_below(monkeypatch):
    """A certificate's profile at a target below ``TILT_BELOW`` (``engine.target_profile``,
    a calibration's re-check) is the tilted composition alone: the one-use pairs are all it
    composes (no plain grid), the answer is at most the target and certified by the 50-digit
    closed form, and :func:`engine.profile` asked afterwards reads it.  At a target above,
    it is the profile's bits."""
    eps, deep = 7.0, 1e-10  # the exact delta at epsilon 7 is 5.2e-12 (mu = 1)
    engine._ANSWERS.clear()
    calls = record_calls(monkeypatch, engine, "call_cached", engine._composed_kernel,
                         lambda *args, **kwargs: kwargs["sizes"])
    log_d = float(engine.target_profile(_gaussian, SIGMA, 0.0, 1.0, eps, deep,
                                        compositions=K, bin_width=H))
    assert calls and all(sizes.fft == 0 for sizes in calls)  # the one-use pairs only
    assert log_d <= math.log(deep * (1.0 - engine.MARGIN))
    with mpmath.workdps(50):
        assert float(gaussian_delta(eps, SIGMA, 1.0, K)) <= math.exp(log_d)
    calls.clear()
    again = engine.profile(_gaussian, SIGMA, 0.0, 1.0, eps, compositions=K, bin_width=H)
    assert not calls and float(again) == math.exp(log_d)
    engine._ANSWERS.clear()
    shallow = engine.target_profile(_gaussian, SIGMA, 0.0, 1.0, 1.0, 1e-3, compositions=K,
                                    bin_width=H)
    engine._ANSWERS.clear()
    plain = engine.profile(_gaussian, SIGMA, 0.0, 1.0, 1.0, compositions=K, bin_width=H)
    assert float(np.exp(shallow)) == float(plain)


def test_queries_in_threads_keep_their_own_compositions():
    """Two engine queries at once in two threads (each with its re-check): each thread keeps
    its own compositions (a context variable), and each answer is the one the query gives
    alone."""
    def query(delta):
        return float(engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, delta, compositions=K,
                                    bin_width=H))

    deltas = (1e-30, 1e-20)
    engine._ANSWERS.clear()
    alone = [query(d) for d in deltas]
    engine._ANSWERS.clear()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        together = list(pool.map(query, deltas))
    engine._ANSWERS.clear()
    assert together == alone
    assert engine._COMPOSED.get() is None


def _laplace(scale, shape):
    del shape
    return Laplace(scale)


def test_two_families_share_the_tilted_answers_program():
    """The answers half of the tilted kernel sees arrays only: a Laplace query on the
    Gaussian's grid and FFT lengths reuses its compiled program (only the one-use pairs are
    the family's own), and answers for Laplace, not for the Gaussian that compiled it: at
    ``delta = 1e-6`` it agrees with the plain FFT engine's Laplace answer (another
    composition of the same pair; the two differ by 4.9e-7 at 4.69, the Gaussian's is
    4.89)."""
    sizes = pld_plan.tilted_sizes(_gaussian, SIGMA, 0.0, 1.0, None, K, H, math.log(1e-20))
    args = engine.scalar_args(SIGMA, 0.0, 1.0, None, K)

    def run(noise_fn):
        return np.asarray(tilted.tilted_kernel(
            *args, np.array([1e-20, 1e-6]), noise_fn=noise_fn, bin_width=H, sizes=sizes,
            subsampled=False, by_delta=True,
        ))

    run(_gaussian)
    before = tilted._tilted_answers._cache_size(), engine._composed_kernel._cache_size()
    eps = run(_laplace)
    after = tilted._tilted_answers._cache_size(), engine._composed_kernel._cache_size()
    assert after[0] == before[0] and after[1] <= before[1] + 1
    plain = float(engine.epsilon(_laplace, SIGMA, 0.0, 1.0, 1e-6, K, None, H))
    assert np.all(np.isfinite(eps)) and eps[0] > eps[1]
    np.testing.assert_allclose(eps[1], plain, rtol=1e-6)


def test_a_tilted_epsilon_whose_recheck_fails_falls_back_to_the_plain_grid(monkeypatch):
    """Where the certificate's re-check of a tilted epsilon fails (here forced: a margin of
    the whole delta), the tilted-alone path gives way to the plain grid, and the answer is
    the plain grid's."""
    def query():
        engine._ANSWERS.clear()
        return engine.epsilon(_gaussian, SIGMA, 0.0, 1.0, 1e-9, compositions=K, bin_width=H)

    tilted = query()
    monkeypatch.setattr(engine, "MARGIN", 1.0)  # no re-check passes
    fell_back = query()
    monkeypatch.setattr(engine, "_tilted", lambda by_delta, noise_fn, args, x, out, *a: out)
    plain = query()
    assert fell_back == plain > tilted


def test_a_tilted_epsilon_whose_recheck_fails_is_stepped_up_not_dropped(monkeypatch):
    """1000 Gaussian uses (sigma 2, q 0.01) at delta 1e-12: the profile at the tilted
    epsilon (its tilts placed for a ``log delta`` query) lies 1e-3 above the target, and the
    plain grid's epsilon, floored by round-off, is 5% above the tilted one.  The tilted
    epsilon is stepped up (``RECHECK_STEPS``) until its re-check passes; a fresh profile at
    the answer (no memo: the façade's re-check of several targets) certifies it too (its
    tilted composition composed again at its answer's level, not only at the plain grid's);
    asked beside a plain target, the answer is the bits of its own query."""
    rate, uses, deltas = 0.01, 1000, np.array([1e-12, 1e-6])

    def epsilon(delta):
        engine._ANSWERS.clear()
        return np.asarray(engine.epsilon(_gaussian, 2.0, 0.0, 1.0, delta, uses, rate),
                          np.float64)

    alone = np.array([float(epsilon(d)) for d in deltas])
    np.testing.assert_array_equal(epsilon(deltas), alone)
    engine._ANSWERS.clear()
    afresh = engine.profile(_gaussian, 2.0, 0.0, 1.0, alone, uses, rate)
    assert np.all(afresh <= deltas * (1.0 - engine.MARGIN))
    monkeypatch.setattr(engine, "_tilted_alone", lambda *a: False)
    monkeypatch.setattr(engine, "_tilted", lambda by_delta, noise_fn, args, x, out, *a: out)
    plain = float(epsilon(deltas[0]))
    assert alone[0] < plain / 1.04
