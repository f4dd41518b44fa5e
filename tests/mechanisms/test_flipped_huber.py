"""The flipped Huber mechanism module (dpjax/mechanisms/flipped_huber.py): the facade's
calibration at the ends of its range."""

import pytest

import dpjax


def test_epsilon_and_delta_1e_300_is_answered_by_the_gaussian_end():
    """(1e-300, 1e-300): the shape search returned the Laplace end with alpha = inf (every
    member's variance overflows float64, so it cannot rank them) and the certificate failed
    ('profile re-evaluated to 1.0').  The Gaussian end is taken there, certified by the same
    exact kernel; its gamma is the Gaussian calibration's sigma."""
    cal = dpjax.calibrate("flipped-huber", epsilon=1e-300, delta=1e-300, linf=1.0)
    assert float(cal.params["alpha"]) == 0.0
    sigma = dpjax.calibrate("gaussian", epsilon=1e-300, delta=1e-300, l2=1.0).params["sigma"]
    assert float(cal.params["gamma"]) == pytest.approx(float(sigma), rel=1e-12)
    assert float(cal.delta_at_params) <= 1e-300
    assert any("gaussian end" in note for note in cal.notes)
