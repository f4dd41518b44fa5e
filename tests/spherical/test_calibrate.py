"""The spherical calibration (the ``spherical`` row of ``dpjax design``): certified, and it
says which objective it optimised (issue 35, item 3)."""

from dpjax.spherical.calibrate import calibrate_spherical


def test_single_release_says_the_kl_shape_is_not_its_objective():
    cal = calibrate_spherical(2.0, 1e-5, 3, 1.0, n=4, tol=0.05)
    assert cal.delta_at_params <= 1e-5
    objective = cal.notes[0]
    assert "objective" in objective and "large-T limit" in objective
    assert "single release" in objective and "--r auto" in objective
