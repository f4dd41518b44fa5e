"""The shape search's final re-check (:func:`shape_search._certified_best`): the winner is the
least-variance row that the engine's profile at the target (``engine.target_profile``)
certifies; rows it does not certify are dropped, and nothing certified means an infinite
variance (fail closed)."""

import numpy as np
import pytest

from dpjax.calibration import scale_tilted, shape_search
from dpjax.certificate import log_target

DELTA = 1e-8
# rows (target, shape, scale, variance, delta_at, bin width, unchecked): tilted roots that
# the search did not re-check
ROWS = np.array([
    [0, 2.0, 3.0, 20.0, 9e-9, 1e-4, 1.0],
    [0, 1.0, 2.0, 10.0, 9e-9, 1e-4, 1.0],
    [0, 3.0, 4.0, 30.0, 9e-9, 1e-4, 1.0],
])


def _profile(verdicts):
    """A stand-in for engine.target_profile: ``log delta`` per scale from ``verdicts``
    (deltas), recording calls."""
    calls = []

    def target_profile(noise_fn, scale, shape, sensitivity, eps, delta, compositions, rate, h):
        calls.append((float(scale), float(shape), h))
        return np.log(np.array([verdicts(float(scale))]))

    return target_profile, calls


def test_the_best_row_certified_by_the_profile_wins(monkeypatch):
    limit = float(np.exp(np.asarray(log_target(DELTA))))
    profile, calls = _profile(lambda s: 0.5 * limit)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    got = shape_search._certified_best(ROWS, None, 1.0, 1.0, DELTA, 5)
    assert got[1] == 1.0 and got[2] == 2.0 and got[3] == 10.0
    assert got[4] == np.exp(np.log(0.5 * limit))  # delta_at is the re-evaluation
    assert calls == [(2.0, 1.0, 1e-4)]  # one re-check: the winner's


def test_rows_the_profile_rejects_are_dropped(monkeypatch):
    limit = float(np.exp(np.asarray(log_target(DELTA))))
    # the best row fails at its scale and at every retry step; the next one passes
    profile, _ = _profile(lambda s: 2 * limit if s < 2.5 else limit)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    got = shape_search._certified_best(ROWS, None, 1.0, 1.0, DELTA, 5)
    assert got[1] == 2.0 and got[3] == 20.0 and got[4] <= limit


def test_a_retry_step_above_the_root_is_taken_with_its_variance(monkeypatch):
    limit = float(np.exp(np.asarray(log_target(DELTA))))
    profile, _ = _profile(lambda s: limit if s > 2.0 else 1.01 * limit)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    got = shape_search._certified_best(ROWS, None, 1.0, 1.0, DELTA, 5)
    step = scale_tilted.RETRY_STEPS[0]
    assert got[2] == 2.0 * (1 + step) and got[3] == 10.0 * (1 + step) ** 2


def test_nothing_certified_fails_closed(monkeypatch):
    profile, _ = _profile(lambda s: np.nan)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    got = shape_search._certified_best(ROWS, None, 1.0, 1.0, DELTA, 5)
    assert np.isinf(got[3])


def test_a_root_the_search_certified_needs_no_recheck(monkeypatch):
    profile, calls = _profile(lambda s: np.nan)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    rows = ROWS.copy()
    rows[1, 6] = 0.0
    got = shape_search._certified_best(rows, None, 1.0, 1.0, DELTA, 5)
    assert got[3] == 10.0 and not calls


def test_rows_not_below_beat_are_neither_rechecked_nor_returned(monkeypatch):
    """``beat``: the variance of a member the caller certifies otherwise (the K-dim flipped
    Huber's Gaussian closed form): rows at or above it cannot win, so no full profile is spent
    on them, and nothing at or above it comes back (``inf``: the caller's member wins)."""
    limit = float(np.exp(np.asarray(log_target(DELTA))))
    profile, calls = _profile(lambda s: 0.5 * limit)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    got = shape_search._certified_best(ROWS, None, 1.0, 1.0, DELTA, 5, beat=10.0)
    assert np.isinf(got[3]) and not calls
    rows = ROWS.copy()
    rows[1, 6] = 0.0  # certified by its own evaluation, still not below beat
    assert np.isinf(shape_search._certified_best(rows, None, 1.0, 1.0, DELTA, 5, beat=10.0)[3])
    got = shape_search._certified_best(ROWS, None, 1.0, 1.0, DELTA, 5, beat=25.0)
    assert got[3] == 10.0 and calls == [(2.0, 1.0, 1e-4)]  # below beat: re-checked as before


@pytest.mark.parametrize("finalists", [5, 0])
def test_below_tilt_below_only_the_finalists_are_tilted_and_the_winner_rechecked(
    monkeypatch, finalists
):
    """A survey at the certified bin width (``coarsen = 1``: the K-dim flipped Huber and
    OSGT searches beyond ``SURVEY_MAX_DIM``) and a target below ``TILT_BELOW``: the survey
    ranks shapes on plain roots, the tilted search runs on the finalists only, their roots
    kept on their own certified evaluations, and the engine's profile re-checks the winner
    only.  Before, every surveyed shape was tilted and re-checked by a full profile (24 at
    K = 2000, eps = 0.05, delta = 1e-9: 83 of 129 CPU s).  With no finalists the survey is
    tilted, still with one re-check."""
    from dpjax.calibration.scale_search import ScaleCalibration

    asked = []

    def scales(noise_fn, bs, sensitivity, e, d, compositions, rate, h, **kw):
        asked.append((kw["tilt"], kw["recheck"], np.shape(bs)[1]))
        # the least variance at the least shape; a tilted root 10% below the plain one
        s = (0.9 if kw["tilt"] else 1.0) * (1.0 + np.asarray(bs, float))
        return ScaleCalibration(s, np.full(s.shape, 1e-10), np.ones(s.shape, bool),
                                np.zeros(s.shape, np.int32))

    limit = float(np.exp(np.asarray(log_target(1e-9))))
    profile, calls = _profile(lambda s: 0.5 * limit)
    monkeypatch.setattr(shape_search, "calibrate_scale", scales)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    got = shape_search.calibrate_shape_scale(
        None, lambda s, b: np.asarray(s) ** 2, (0.0, 1.0, 2.0, 1e4), 1.0, 1.0, 1e-9, 2000,
        upper_fn=lambda bs: 10.0 * np.ones_like(bs), coarsen=1, refine=3, finalists=finalists)
    if finalists:  # the survey and its refinement plain, the finalists tilted
        assert asked == [(False, False, 4), (False, False, 3), (True, False, finalists)]
    else:
        assert asked == [(True, False, 4), (True, False, 3)]
    assert calls == [(0.9, 0.0, 1e-4)]  # one re-check: the winner's
    assert float(got.shape) == 0.0 and float(got.scale) == 0.9
    assert float(got.delta_at) == np.exp(np.log(0.5 * limit))


@pytest.mark.parametrize("ratio", [4.0, 2.0])
def test_the_survey_bracket_is_upper_over_lower_ratio(monkeypatch, ratio):
    """Every surveyed shape is searched in ``[upper / lower_ratio, upper]`` (the grids are
    sized for its low end), with ``3 upper`` as the fallback upper end."""
    from dpjax.calibration.scale_search import ScaleCalibration

    brackets = []

    def scales(noise_fn, bs, sensitivity, e, d, compositions, rate, h, **kw):
        brackets.append((np.asarray(kw["lower"]), np.asarray(kw["upper"]),
                         np.asarray(kw["fallback_upper"])))
        s = 1.0 + np.asarray(bs, float)
        return ScaleCalibration(s, np.full(s.shape, 1e-7), np.ones(s.shape, bool),
                                np.zeros(s.shape, np.int32))

    monkeypatch.setattr(shape_search, "calibrate_scale", scales)
    shape_search.calibrate_shape_scale(
        None, lambda s, b: np.asarray(s) ** 2, (0.0, 1.0, 2.0), 1.0, 1.0, 1e-6, 200,
        upper_fn=lambda bs: 10.0 + np.asarray(bs), coarsen=1, refine=3, finalists=0,
        lower_ratio=ratio)
    assert len(brackets) == 2  # the survey and its refinement
    for low, up, fallback in brackets:
        np.testing.assert_array_equal(low, up / ratio)
        np.testing.assert_array_equal(fallback, 3.0 * up)


def test_certified_step_is_the_least_step_the_profile_certifies(monkeypatch):
    # the re-check shared by the tilted scale search and the shape search
    # (scale_tilted.certified_step): the root, then each retry step, the first that passes
    limit = float(np.exp(np.asarray(log_target(DELTA))))
    level = float(np.asarray(log_target(DELTA)))
    steps = scale_tilted.RETRY_STEPS
    profile, calls = _profile(lambda s: limit if s > 2.0 * (1 + steps[0]) else 1.01 * limit)
    monkeypatch.setattr(shape_search.engine, "target_profile", profile)
    got = scale_tilted.certified_step(None, 2.0, 1.0, 1.0, 1.0, DELTA, 5, None, 1e-4, level)
    assert got == (steps[1], 2.0 * (1 + steps[1]), np.log(limit))
    assert [c[0] for c in calls] == [2.0 * (1 + s) for s in (0.0, *steps)]
    calls.clear()
    assert scale_tilted.certified_step(None, 1.0, 1.0, 1.0, 1.0, DELTA, 5, None, 1e-4,
                                       level) is None
    assert len(calls) == 1 + len(steps)  # every step tried, none certified
