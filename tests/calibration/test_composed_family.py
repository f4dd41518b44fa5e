"""The composed-family calibration's survey bracket (:mod:`dpjax.calibration.composed_family`):
``[upper / BRACKET_RATIO, upper]`` for plain uses, the wider
``SUBSAMPLED_BRACKET_RATIO`` under Poisson subsampling; and the bracket holds the least
scale of every surveyed shape at a small instance (no widening)."""

import numpy as np
import pytest

from dpjax.calibration import composed_family
from dpjax.calibration.composed_family import (
    BRACKET_RATIO,
    SHAPES,
    SUBSAMPLED_BRACKET_RATIO,
    bracket_upper,
)
from dpjax.noise import FlippedHuber


@pytest.mark.parametrize(("rate", "ratio"), [(None, BRACKET_RATIO),
                                             (0.01, SUBSAMPLED_BRACKET_RATIO)])
def test_the_bracket_ratio_follows_subsampling(monkeypatch, rate, ratio):
    from dpjax.calibration.shape_search import ShapeCalibration

    asked = []

    def search(*args, **kw):
        asked.append(kw["lower_ratio"])
        one = np.ones(())
        return ShapeCalibration(one, one, one, 1e-7 * one, one.astype(bool), np.zeros((0, 5)))

    monkeypatch.setattr(composed_family, "calibrate_shape_scale", search)
    composed_family.calibrate_composed(FlippedHuber.from_scale, lambda s, b: s ** 2, 1.0,
                                       1e-6, 200, 1.0, rate)
    assert asked == [ratio]
    assert BRACKET_RATIO < SUBSAMPLED_BRACKET_RATIO


def test_every_surveyed_least_scale_is_inside_the_bracket():
    """Beyond ``SURVEY_MAX_DIM`` (one stage at the certified bin width) the least scale of
    every shape surveyed, from the Gaussian member to the Laplace end, lies in
    ``[upper / BRACKET_RATIO, 3 upper]``: none was widened below the planned grids."""
    from dpjax.calibration.flipped_huber_kdim import variance_by_shape
    from dpjax.calibration.shape_search import calibrate_shape_scale

    eps, delta, uses = 1.0, 1e-6, 200
    upper = bracket_upper(np.array(eps), np.array(delta), uses, 1.0)
    got = calibrate_shape_scale(
        FlippedHuber.from_scale, variance_by_shape, np.asarray(SHAPES), 1.0, eps, delta, uses,
        lambda b: upper(b)[0], 1e-3, coarsen=1, finalists=0, lower_ratio=BRACKET_RATIO)
    shapes, scales = got.grid[:, 1], got.grid[:, 2]
    up = upper(shapes[None, :])[0]
    assert len(shapes) == len(SHAPES) + 9
    assert np.all(scales >= up / BRACKET_RATIO) and np.all(scales <= 3.0 * up)
    assert np.all(np.isfinite(got.grid[:, 3]))  # every shape certified
