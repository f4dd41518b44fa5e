"""Sensitivity profiles (Definition 4), families, normalisation, Gini, Delta_p bounds."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpjax.inid import KINDS, gini, make_profile, normalize, sensitivity_norm, validate_profile
from dpjax.inid.profiles import validate_weights


def test_families_shapes_and_normalisation():
    i = np.arange(1, 7.0)
    np.testing.assert_allclose(make_profile("linear", 6, None), i)
    np.testing.assert_allclose(make_profile("quadratic", 6, None), i**2)
    np.testing.assert_allclose(make_profile("uniform", 6, None), np.ones(6))
    np.testing.assert_allclose(make_profile("one-hot", 6, None), np.eye(6)[-1])
    expo = make_profile("exponential", 6, "l2")
    np.testing.assert_allclose(expo, np.exp(i) / np.linalg.norm(np.exp(i)), rtol=1e-15)
    for kind in KINDS:
        a = {"exponent": -0.7} if kind == "power" else {}
        assert np.linalg.norm(make_profile(kind, 9, "l2", **a)) == pytest.approx(1, rel=1e-15)
        assert np.sum(make_profile(kind, 9, "l1", **a)) == pytest.approx(1, rel=1e-15)
    # exponential does not overflow for large K
    assert np.all(np.isfinite(make_profile("exponential", 5000, "l2")))


@pytest.mark.parametrize("norm", [None, "l1", "l2"])
def test_power_profile_is_every_power_of_the_index(norm):
    """``lambda_i = i^a``: the linear, quadratic and uniform families at ``a = 1, 2, 0``, a
    decaying power law at ``a < 0``, and no overflow or zero entry at any ``K`` and ``a``."""
    for a, kind in ((1, "linear"), (2.0, "quadratic"), (0.0, "uniform")):
        lam = make_profile("power", 11, norm, exponent=a)
        ref = make_profile(kind, 11, norm)
        np.testing.assert_allclose(lam / lam[-1], ref / ref[-1], rtol=1e-14)
    i = np.arange(1.0, 8.0)
    lam = make_profile("power", 7, norm, exponent=-1.5)
    np.testing.assert_allclose(lam / lam[0], i**-1.5, rtol=1e-14)
    tiny = np.finfo(np.float64).tiny
    for a in (-400.0, 1e-12, 250.0):  # i^a overflows or underflows float64 for K = 1e5
        lam = make_profile("power", 100_000, norm, exponent=a)
        assert lam.shape == (100_000,) and np.all(np.isfinite(lam)) and np.all(lam >= tiny)
        top = 0 if a < 0 else 99_999  # the largest entry (to round-off at a = 1e-12)
        assert lam[top] == pytest.approx(np.max(lam), rel=1e-14)
        if norm is not None:
            p = 1.0 if norm == "l1" else 2.0
            assert np.sum(lam**p) ** (1 / p) == pytest.approx(1.0, rel=1e-13)
        # the largest entries by the definition, in log space: (i / i_max)^a, normalised
        k = np.arange(1.0, 100_001.0)
        log_ref = a * np.log(k / k[top])
        big = log_ref - log_ref[top] > -50.0
        np.testing.assert_allclose(lam[big] / lam[top], np.exp(log_ref[big]), rtol=1e-11)


@pytest.mark.parametrize(
    "kind,exponent,match",
    [("power", None, "needs it"), ("linear", 2.0, "goes with"),
     ("power", float("nan"), "finite"), ("power", "2", "real number"),
     ("power", True, "real number"), ("power", [1.0, 2.0], "finite")],
)
def test_power_exponent_is_validated(kind, exponent, match):
    with pytest.raises(ValueError, match=match):
        make_profile(kind, 5, "l2", exponent=exponent)


@pytest.mark.parametrize("norm", [None, "l1", "l2"])
def test_exponential_tail_never_underflows_to_zero(norm):
    """K > 745: e^{i-K} underflowed to exactly 0 (a coordinate without noise) or to a
    subnormal (flushed to 0 by XLA); every entry is now >= the least normal float64 and is
    an upper bound on e^{i-K} / ||e^{i-K}||."""
    k = 2000
    tiny = np.finfo(np.float64).tiny
    lam = make_profile("exponential", k, norm)
    assert lam.size == k and np.all(lam >= tiny)
    # the normalising constant by the geometric series, independent of the code's logsumexp
    power = {"l1": 1.0, "l2": 2.0, None: None}[norm]
    log_norm = 0.0 if power is None else -np.log1p(-np.exp(-power)) / power
    log_exact = np.arange(1.0 - k, 1.0) - log_norm
    big = log_exact > np.log(tiny)
    np.testing.assert_allclose(lam[big], np.exp(log_exact[big]), rtol=1e-13)
    assert np.all(lam[~big] == tiny) and np.count_nonzero(~big) > k - 710


def test_subnormal_entries_are_rounded_up():
    tiny = np.finfo(np.float64).tiny
    lam = validate_profile([1.0, 1e-320, 0.0, tiny / 2])
    assert lam.tolist() == [1.0, tiny, 0.0, tiny]  # zeros stay: coordinates that never change
    assert normalize([1e300, 5e-324, 0.0], "l1").tolist() == [1.0, tiny, 0.0]  # not 0


def _gini_naive(x):
    x = np.asarray(x, dtype=float)
    return np.sum(np.abs(x[:, None] - x[None, :])) / (2 * x.size * np.sum(x))


@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=40).filter(lambda v: sum(v) > 1e-3))
def test_gini_matches_definition(values):
    assert gini(values) == pytest.approx(_gini_naive(values), rel=1e-12, abs=1e-14)


def test_gini_extremes_and_fig2_order():
    assert gini(np.ones(7)) == 0.0
    assert gini(make_profile("one-hot", 7)) == pytest.approx(1 - 1 / 7)
    # Fig. 2: at K = 2 the quadratic profile is more spread than the exponential one
    assert gini(make_profile("quadratic", 2)) > gini(make_profile("exponential", 2))
    assert gini(make_profile("quadratic", 20)) < gini(make_profile("exponential", 20))


def test_sensitivity_norm_is_the_profile_norm():
    lam = [3.0, 4.0, 0.0]
    assert sensitivity_norm(lam, 1) == 7.0
    assert sensitivity_norm(lam, 2) == 5.0
    assert sensitivity_norm(lam, np.inf) == 4.0
    with pytest.raises(ValueError, match="p must be"):
        sensitivity_norm(lam, 0.5)


@pytest.mark.parametrize(
    "bad,match",
    [
        ([], "empty"),
        ([1.0, -0.5], ">= 0"),
        ([0.0, 0.0], "entry > 0"),
        ([1.0, np.nan], "finite"),
        ([1.0, np.inf], "finite"),
        ([[1.0, 2.0]], "one-dimensional"),
        (["a"], "real numbers"),
    ],
)
def test_bad_profiles(bad, match):
    with pytest.raises(ValueError, match=match):
        validate_profile(bad)


def test_bad_weights_and_kinds():
    with pytest.raises(ValueError, match="3 entries but the profile has 2"):
        validate_weights([1, 2, 3], 2)
    with pytest.raises(ValueError, match="> 0"):
        validate_weights([1, 0], 2)
    with pytest.raises(ValueError, match="> 0"):
        validate_weights([1, np.nan], 2)
    with pytest.raises(ValueError, match="kind"):
        make_profile("cubic", 3)
    with pytest.raises(ValueError, match="dim"):
        make_profile("linear", 0)
    with pytest.raises(ValueError, match="norm"):
        normalize([1.0], "linf")


@pytest.mark.parametrize(
    "profile", [[True, 1.0], ["1", 2.0], np.array([True, False]), [1 + 0j], "12"]
)
def test_strings_booleans_and_complex_entries_are_refused(profile):
    """np.array(..., float64) turned [True, 1.0] into [1.0, 1.0] and "1" into 1.0, and the
    design ran on a profile the user did not give."""
    with pytest.raises(ValueError, match="real numbers"):
        validate_profile(profile)
    np.testing.assert_array_equal(validate_profile([1, 2.5]), [1.0, 2.5])
