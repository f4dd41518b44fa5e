"""Sensitivity derivation and bad-input errors of every public entry point."""

import numpy as np
import pytest

import dpjax
from dpjax.sensitivity import Sensitivity


def test_dim_one_all_norms_coincide():
    s = Sensitivity(dim=1, l2=2.0)
    assert s.resolve("l1") == (2.0, ()) and s.resolve("linf") == (2.0, ())


def test_sound_bounds_and_notes():
    s = Sensitivity(dim=16, linf=1.0)
    assert s.resolve("l2")[0] == 4.0 and "sqrt(dim) * linf" in s.resolve("l2")[1][0]
    assert s.resolve("l1")[0] == 16.0
    both = Sensitivity(dim=16, linf=1.0, l1=3.0)
    assert both.resolve("l2")[0] == 3.0  # l2 <= l1 is tighter than sqrt(16) * 1
    assert Sensitivity(dim=4, l2=1.0).resolve("l1")[0] == 2.0


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(dim=4, l1=1.0, l2=2.0), "l2=2.0 exceeds l1"),
        (dict(dim=4, l2=1.0, linf=2.0), "linf=2.0 exceeds l2"),
        (dict(dim=4, l1=5.0, linf=1.0), "exceeds 4 \\* linf"),
        (dict(dim=0, l1=1.0), "dim must be an integer >= 1"),
        (dict(dim=2), "at least one sensitivity"),
        (dict(dim=2, l2=-1.0), "l2 must be finite and > 0"),
        (dict(dim=2, l2=float("nan")), "l2 must be finite and > 0"),
    ],
)
def test_inconsistent_or_invalid(kw, match):
    with pytest.raises(ValueError, match=match):
        Sensitivity(**kw)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(epsilon=-0.1, delta=1e-5, l2=1.0), "epsilon must be finite and >= 0, got -0.1"),
        (dict(epsilon=np.inf, delta=1e-5, l2=1.0), "epsilon must be finite"),
        (dict(epsilon=1.0, delta=1.0, l2=1.0), "delta must lie in \\[0, 1\\), got 1.0"),
        (dict(epsilon=1.0, delta=-1e-9, l2=1.0), "delta must lie in"),
        (dict(epsilon=1.0, delta=1e-5, l2=0.0), "l2 must be finite and > 0, got 0.0"),
        (dict(epsilon=1.0, delta=1e-5), "give a sensitivity"),
        (dict(epsilon=[1.0, 2.0], delta=[1e-5, 1e-6, 1e-7], l2=1.0), "shapes do not broadcast"),
        (dict(epsilon=[], delta=1e-5, l2=1.0), "epsilon must not be empty"),
        (dict(epsilon="abc", delta=1e-5, l2=1.0), "epsilon must be a real number"),
        (dict(epsilon=1.0, delta=1e-5, l2=1.0, compositions=0), "compositions must be an integer"),
        (dict(epsilon=1.0, delta=1e-5, l2=1.0, sampling_rate=1.5), "sampling_rate must be"),
        (dict(epsilon=1.0, delta=1e-5, l2=1.0, condition="maybe"), "condition must be one of"),
    ],
)
@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_calibrate_bad_input(mechanism, kw, match):
    with pytest.raises(ValueError, match=match):
        dpjax.calibrate(mechanism, **kw)


def test_unknown_mechanism_and_params():
    with pytest.raises(ValueError, match="unknown mechanism 'gauss'"):
        dpjax.calibrate("gauss", epsilon=1.0, delta=1e-5, l2=1.0)
    with pytest.raises(ValueError, match="sigma must be finite and > 0, got -1.0"):
        dpjax.profile("gaussian", {"sigma": -1.0}, epsilon=1.0)
    with pytest.raises(ValueError, match="unknown: scale"):
        dpjax.profile("gaussian", {"scale": 1.0}, epsilon=1.0)
    with pytest.raises(ValueError, match="missing: sigma"):
        dpjax.account("gaussian", {}, delta=1e-5)
    with pytest.raises(ValueError, match="exactly one of epsilon"):
        dpjax.account("gaussian", {"sigma": 1.0})
    with pytest.raises(ValueError, match="exactly one of epsilon"):
        dpjax.account("gaussian", {"sigma": 1.0}, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="epsilon must be finite and >= 0"):
        dpjax.profile("laplace", {"scale": 1.0}, epsilon=[-1.0])
    with pytest.raises(ValueError, match="sigma must be finite and > 0"):
        dpjax.noise.make("gaussian", sigma=0.0)
