"""Shape families for a ``K``-dim query on one Poisson coin per use
(:mod:`dpjax.calibration.one_coin_family`, through ``dpjax.calibrate`` / ``dpjax.profile``).

Independent references: the 2-D mixture pair's hockey-stick divergence summed on a fine grid
of the plane (the noise's own log-density, no privacy-loss code); the Gaussian and Laplace
mechanisms calibrated for the same query (the family's two ends).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpjax
from dpjax.calibration import one_coin_family as oc
from dpjax.noise import OSGT, FlippedHuber


def _mixture_profile(noise, q, eps, h=0.01, width=25.0, rows=128):
    """``max`` over both orders of ``sum (P - e^eps Q)_+`` for ``P = (1 - q) F + q F_(1,1)``,
    ``Q = F``, ``F`` two i.i.d. coordinates of ``noise``: a Riemann sum on the plane with the
    1-D masses normalised (its error, ~1e-5 relative here, is the tolerance below).  Summed
    over blocks of ``rows`` rows of the plane (the same terms; the whole 5100 x 5100 plane
    at once took ~10 s in memory traffic)."""
    x = np.arange(-width, width + 1.0 + h, h)
    p0, p1 = (np.exp(np.asarray(noise.logpdf(x - s), np.float64)) for s in (0.0, 1.0))
    p0, p1 = p0 / p0.sum(), p1 / p1.sum()
    sums = np.zeros((len(eps), 2))  # per epsilon: both orders
    for i in range(0, x.size, rows):
        Q = np.outer(p0[i:i + rows], p0)
        P = (1.0 - q) * Q + q * np.outer(p1[i:i + rows], p1)
        for k, e in enumerate(eps):
            sums[k, 0] += np.maximum(P - math.exp(e) * Q, 0.0).sum()
            sums[k, 1] += np.maximum(Q - math.exp(e) * P, 0.0).sum()
    return sums.max(axis=1)


@pytest.mark.parametrize(("name", "noise", "params"), [
    ("flipped-huber", FlippedHuber.from_scale(1.5, 1.0), {"alpha": 1.5, "gamma": 1.5}),
    ("osgt", OSGT.from_scale(1.5, 0.5), {"vartheta": 0.75, "rho": 1.5}),
])
def test_one_use_profile_is_the_two_dim_mixture(name, noise, params):
    """Two coordinates on one coin (``q = 0.3``): the certified profile is at or above the 2-D
    mixture's and within 0.1% of it (the old per-coordinate coins were far below)."""
    eps = np.array([0.0, 0.2, 0.5, 1.0])
    ref = _mixture_profile(noise, 0.3, eps)
    got = np.asarray(dpjax.profile(name, params, epsilon=eps, dim=2, linf=1.0,
                                   sampling_rate=0.3))
    assert np.all(got >= ref * (1.0 - 1e-4)), got / ref - 1.0
    assert np.all(got <= ref * (1.0 + 1e-3)), got / ref - 1.0


@pytest.mark.parametrize("survey", [
    (0.0, 2.0, 1e4),  # both ends and one interior shape: every step of the search, smallest
    pytest.param(oc.SURVEY, marks=pytest.mark.slow),
])
def test_calibration_is_certified_and_never_worse_than_either_end(monkeypatch, survey):
    """K = 2, T = 2, q = 0.2: the member found is certified by the profile at its parameters,
    at most the Gaussian's variance for the same query (the shape-0 member; l2 = sqrt(K)
    linf at the corner) and the Laplace mechanism's on one coin (the Laplace end), and the
    member that won is named; under ``remove`` it needs no more noise."""
    monkeypatch.setattr(oc, "SURVEY", survey)
    query = dict(dim=2, linf=1.0, compositions=2, sampling_rate=0.2)
    cal = dpjax.calibrate("flipped-huber", epsilon=1.0, delta=1e-5, **query)
    assert float(cal.delta_at_params) <= 1e-5
    params = {k: float(v) for k, v in cal.params.items()}
    assert float(dpjax.profile("flipped-huber", params, epsilon=1.0, **query)) <= 1e-5
    gauss = dpjax.calibrate("gaussian", epsilon=1.0, delta=1e-5, l2=math.sqrt(2.0),
                            compositions=2, sampling_rate=0.2)
    lap = dpjax.calibrate("laplace", epsilon=1.0, delta=1e-5, l1=2.0, **query)
    assert float(cal.variance) <= min(float(gauss.variance), float(lap.variance)) * (1 + 1e-4)
    assert str(cal.member) in ("gaussian", "laplace", "interior")
    assert any("one Poisson coin" in n for n in cal.notes)
    assert any(n.startswith("member that won: ") for n in cal.notes)
    removed = dpjax.calibrate("flipped-huber", epsilon=1.0, delta=1e-5, relation="remove",
                              **query)
    assert float(removed.variance) <= float(cal.variance) * (1 + 1e-4)


def test_the_gaussian_end_is_one_gaussian_at_the_corner():
    """Shape 0 is ``K`` Gaussian coordinates: by rotation one Gaussian at shift ``sqrt(K)``
    (the event the survey evaluates), its multiplier never rounded up."""
    event = oc.one_coin_event("osgt", ("rho", "vartheta"), 3.0, 0.0, 4, 5, 0.1, 1.0)
    assert event.count == 5
    assert event.event.sampling_probability == 0.1
    assert event.event.event.noise_multiplier <= 1.5
    assert event.event.event.noise_multiplier == pytest.approx(1.5, rel=1e-15)
    assert oc.SURVEY[0] == 0.0 and oc.SURVEY[-1] == 1e4  # both ends of the family


@pytest.mark.slow
@pytest.mark.parametrize("relation", ["add_remove", "remove"])
def test_osgt_calibration_is_certified_and_never_worse_than_the_gaussian(relation):
    query = dict(dim=3, linf=1.0, compositions=4, sampling_rate=0.1)
    cal = dpjax.calibrate("osgt", epsilon=1.0, delta=1e-6, relation=relation, **query)
    assert float(cal.delta_at_params) <= 1e-6
    if relation == "add_remove":
        params = {k: float(v) for k, v in cal.params.items()}
        assert float(dpjax.profile("osgt", params, epsilon=1.0, **query)) <= 1e-6
    gauss = dpjax.calibrate("gaussian", epsilon=1.0, delta=1e-6, l2=math.sqrt(3.0),
                            compositions=4, sampling_rate=0.1, relation=relation)
    assert float(cal.variance) <= float(gauss.variance) * (1 + 1e-4)
