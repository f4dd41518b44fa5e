"""Pure-DP Laplace under Poisson subsampling: the amplified closed form (issue 14)."""

import math

import dpjax


def test_subsampled_pure_laplace_calibrates_to_the_closed_form():
    # Balle, Barthe & Gaboardi 2018, Thm 10: log(1 + q (e^{1/b} - 1)) = epsilon
    cal = dpjax.calibrate("laplace", epsilon=1.0, delta=0.0, l1=1.0, sampling_rate=0.8)
    b = float(cal.params["scale"])
    closed = 1.0 / math.log1p(math.expm1(1.0) / 0.8)
    assert abs(closed - 0.8720521538) < 1e-10
    assert abs(b - 0.8720521538) < 1e-6
    assert b >= closed  # never less noise than the closed form
    assert float(cal.delta_at_params) == 0.0
    # the amplified pure-DP epsilon of the returned scale is <= the target
    assert math.log1p(0.8 * math.expm1(1.0 / b)) <= 1.0
