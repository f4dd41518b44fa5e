"""Laplace: exact 1-D profile vs direct integration, calibration, K-dim pure DP."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpjax
from dpjax.accounting import delta_laplace, epsilon_laplace, log_delta_laplace


def mp_delta_integral(eps, b, sens):
    """delta(eps) = int [g(t) - e^eps g(t + Delta)]_+ dt, breakpoints at the kinks."""
    with mpmath.workdps(40):
        b, sens, eps = mpmath.mpf(b), mpmath.mpf(sens), mpmath.mpf(eps)
        g = lambda t: mpmath.exp(-abs(t) / b) / (2 * b)
        f = lambda t: max(g(t) - mpmath.exp(eps) * g(t + sens), 0)
        # the positive part switches where the loss crosses eps: inside (-Delta, 0)
        t_star = (b * eps - sens) / 2
        pts = sorted({-mpmath.inf, -sens, t_star, mpmath.mpf(0), mpmath.inf} - {None})
        pts = [p for p in pts if p == -mpmath.inf or p == mpmath.inf or -sens <= p <= 0]
        return mpmath.quad(f, pts)


@pytest.mark.parametrize(
    "eps,b,sens", [(0.0, 1.0, 1.0), (0.5, 1.0, 1.0), (0.3, 3.3, 1.0), (1.0, 0.25, 0.5)]
)
def test_profile_matches_direct_integral(eps, b, sens):
    ref = mp_delta_integral(eps, b, sens)
    got = float(delta_laplace(eps, b, sens))
    assert abs(got - float(ref)) <= 1e-12 * float(ref) + 1e-300


def test_profile_zero_beyond_pure_epsilon():
    assert float(delta_laplace(1.0, 1.0, 1.0)) == 0.0
    assert float(log_delta_laplace(2.0, 1.0, 1.0)) == -np.inf


def test_calibration_closed_form_and_certificate():
    cal = dpjax.calibrate("laplace", epsilon=[0.3, 3.0], delta=1e-6, linf=1.0)
    expected = 1.0 / (np.array([0.3, 3.0]) - 2 * np.log1p(-1e-6))
    np.testing.assert_allclose(cal.params["scale"], expected, rtol=1e-9)
    assert np.all(cal.params["scale"] >= expected * (1 - 1e-15))
    assert np.all(cal.delta_at_params <= 1e-6)
    # flipped-huber-mechanism Fig. 3a: Laplace variance at eps 0.3 ~ 2 * (1/0.300002)^2
    assert abs(float(cal.variance[0]) - 22.2219) < 1e-3


# delta = 1e-8 lies below engine.TILT_BELOW: the K-dim PLD calibration also runs the
# tilted stage (more compiled programs, over two minutes on one core), marked slow;
# delta = 1e-6 (plain engine only) runs the same assertions by default
@pytest.mark.parametrize(
    "k_delta", [1e-6, pytest.param(1e-8, marks=pytest.mark.slow)], ids=["1e-6", "1e-8"]
)
def test_pure_dp_and_k_dims(k_delta):
    cal = dpjax.calibrate("laplace", epsilon=0.5, delta=0.0, linf=2.0)
    assert float(cal.params["scale"]) == 4.0 and float(cal.delta_at_params) == 0.0
    # Table II of flipped-huber-mechanism (pure eps-DP, l1 budget): 2 (Delta_1/eps)^2 = 2e4, 800
    pure = dpjax.calibrate("laplace", epsilon=[0.2, 1.0], delta=0.0, dim=20, linf=1.0)
    np.testing.assert_allclose(pure.variance, [2e4, 800.0], rtol=1e-12)
    assert any("l1 <= dim * linf" in n for n in pure.notes)
    # with delta > 0 the composed (PLD) accounting can only need less noise, and is certified
    k = dpjax.calibrate("laplace", epsilon=[0.2, 1.0], delta=k_delta, dim=20, linf=1.0)
    assert np.all(k.variance <= pure.variance) and np.all(k.delta_at_params <= k_delta)
    # ... and tight: the profile entry point certifies each returned scale, and 0.1 % less
    # noise misses the target (the least scale the engine certifies, not merely a safe one)
    for e, s in zip([0.2, 1.0], np.asarray(k.params["scale"]), strict=True):
        at = dpjax.profile("laplace", {"scale": float(s)}, epsilon=e, dim=20, linf=1.0)
        less = dpjax.profile("laplace", {"scale": float(s) * (1 - 1e-3)}, epsilon=e, dim=20,
                             linf=1.0)
        assert float(at) <= k_delta < float(less)
    # T compositions of pure DP: basic composition
    t = dpjax.calibrate("laplace", epsilon=1.0, delta=0.0, l1=1.0, compositions=5)
    assert float(t.params["scale"]) == pytest.approx(5.0)


def test_k_dim_profile_within_the_pure_dp_dominating_bound():
    # randomized response with eps0 = Delta_1 / b dominates every eps0-DP mechanism, so the
    # certified K-dim profile is at most that bound (the PLD engine can only tighten it)
    eps = np.array([0.0, 0.5, 1.0])
    d = dpjax.profile("laplace", {"scale": 2.0}, epsilon=eps, dim=2, l1=2.0)
    eps0 = 1.0
    rr = (np.exp(eps0) - np.exp(eps)) / (1 + np.exp(eps0))
    assert np.all(d <= rr * (1 + 1e-14)) and d[-1] == 0.0
    assert np.all(np.diff(d) <= 0)
    # account inverts profile (certified: the epsilon returned is not below the one profiled)
    e = dpjax.account("laplace", {"scale": 2.0}, delta=float(d[1]), dim=2, l1=2.0)
    assert 0.5 - 1e-6 <= e <= 0.5 + 1e-3


def test_epsilon_inverse():
    # the epsilon is certified: rounded up, and aimed at delta (1 - MARGIN)
    assert 0.5 <= float(epsilon_laplace(0.0, 2.0, 1.0)) <= 0.5 * (1 + 2.0**-49)
    e = float(epsilon_laplace(1e-3, 1.0, 1.0))
    assert 1e-3 * (1 - 2e-10) <= float(delta_laplace(e, 1.0, 1.0)) <= 1e-3


@given(eps=st.floats(0, 5), de=st.floats(1e-3, 2), b=st.floats(0.05, 20), f=st.floats(1.001, 4))
def test_property_monotone(eps, de, b, f):
    d0 = float(log_delta_laplace(eps, b, 1.0))
    assert float(log_delta_laplace(eps + de, b, 1.0)) <= d0
    assert float(log_delta_laplace(eps, b * f, 1.0)) <= d0


@given(eps=st.floats(0.0, 10.0), log10_delta=st.floats(-30.0, -0.31))
def test_property_calibration_certified(eps, log10_delta):
    delta = 10.0**log10_delta
    cal = dpjax.calibrate("laplace", epsilon=eps, delta=delta, l1=1.0)
    assert mp_delta_integral(eps, float(cal.params["scale"]), 1.0) <= delta * (1 + 1e-12)


def test_infeasible():
    with pytest.raises(dpjax.InfeasibleTargetError, match="epsilon = delta = 0"):
        dpjax.calibrate("laplace", epsilon=0.0, delta=0.0, l1=1.0)


def _sampled_two_dim_delta(scale, q, eps, cells=1500):
    """``delta(eps)`` of one use of a 2-D Laplace query at the linf corner ``(1, 1)``, Poisson
    subsampled with one coin for both coordinates: the mixture pair ``(1 - q) Q x Q + q P x P``
    against ``Q x Q`` (``Q = Lap(0, b)``, ``P = Lap(1, b)``), both orders, summed over a
    partition of the line (the atoms ``x <= 0`` and ``x >= 1`` of the 1-D loss and ``cells``
    cells of ``(0, 1)``, each with its exact masses): a coarsening of the pair, so a lower
    bound on the true value, to ~1e-6 relative at this many cells."""
    edges = np.linspace(0.0, 1.0, cells + 1)
    cdf_q = 0.5 + 0.5 * -np.expm1(-edges / scale)  # Q's CDF on [0, 1]
    cdf_p = 0.5 * np.exp((edges - 1.0) / scale)  # P's CDF on [0, 1]
    qm = np.concatenate([[0.5], np.diff(cdf_q), [0.5 * np.exp(-1.0 / scale)]])
    pm = np.concatenate([[0.5 * np.exp(-1.0 / scale)], np.diff(cdf_p), [0.5]])
    absent = np.outer(qm, qm)
    mixed = (1.0 - q) * absent + q * np.outer(pm, pm)
    return np.array([max(np.maximum(mixed - np.exp(e) * absent, 0.0).sum(),
                         np.maximum(absent - np.exp(e) * mixed, 0.0).sum()) for e in eps])


def test_k_dim_query_subsampled_once_per_use():
    """Poisson subsampling draws one coin per use for all ``K`` coordinates (it was refused):
    the profile is at least the 2-D mixture pair's hockey-stick (summed independently) and
    close to it (the linf corner is that pair), where ``K`` coordinates on their own coins
    (``K T`` subsampled 1-D pairs) would be far below it; the calibration is certified by
    that independent sum and is the least scale (0.1% less misses the target)."""
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    q, eps = 0.2, np.array([0.3, 0.8])
    got = np.asarray(dpjax.profile("laplace", {"scale": 1.0}, eps, dim=2, linf=1.0,
                                   sampling_rate=q))
    exact = _sampled_two_dim_delta(1.0, q, eps)
    assert np.all(got >= exact * (1 - 1e-4)) and np.all(got <= exact * 1.01 + 1e-6)
    coins = PLDAccountant().compose(ev.PoissonSampled(q, ev.Laplace(1.0)), 2)
    assert all(coins.get_delta(float(e)) < 0.9 * x for e, x in zip(eps, exact, strict=True))
    cal = dpjax.calibrate("laplace", 1.0, 1e-3, dim=2, linf=1.0, sampling_rate=q)
    b = float(cal.params["scale"])
    assert cal.condition == "sufficient" and "linf corner" in cal.notes[-1]
    assert float(cal.delta_at_params) <= 1e-3
    assert _sampled_two_dim_delta(b, q, [1.0])[0] <= 1e-3
    assert float(dpjax.profile("laplace", {"scale": b * (1 - 1e-3)}, 1.0, dim=2, linf=1.0,
                               sampling_rate=q)) > 1e-3
    # the accountant's epsilon at the calibrated scale is the target's, from below
    e = float(dpjax.account("laplace", {"scale": b}, delta=1e-3, dim=2, linf=1.0,
                            sampling_rate=q))
    assert 0.99 <= e <= 1.0 + 1e-9


def _replaced_two_dim_delta(scale, q, eps, cells=1500):
    """``delta(eps)`` of one use of a 2-D Laplace query under one Poisson coin when a record
    contributing ``(1, 1)`` is replaced by one contributing ``(-1, -1)``: the pair
    ``(1 - q) A + q B`` against ``(1 - q) A + q C`` (``A = Lap(0)^2``, ``B = Lap(1)^2``,
    ``C = Lap(-1)^2``) summed over a partition of the line (atoms beyond ``-1`` and ``1``,
    ``cells`` cells between): one pair of the relation, so a lower bound on its profile."""
    edges = np.linspace(-1.0, 1.0, cells + 1)

    def masses(mu):
        cdf = np.where(edges < mu, 0.5 * np.exp((edges - mu) / scale),
                       1.0 - 0.5 * np.exp(-(edges - mu) / scale))
        return np.concatenate([[cdf[0]], np.diff(cdf), [1.0 - cdf[-1]]])

    a, b, c = (masses(mu) for mu in (0.0, 1.0, -1.0))
    left = (1 - q) * np.outer(a, a) + q * np.outer(b, b)
    right = (1 - q) * np.outer(a, a) + q * np.outer(c, c)
    return max(np.maximum(left - np.exp(eps) * right, 0.0).sum(),
               np.maximum(right - np.exp(eps) * left, 0.0).sum())


def test_k_dim_subsampled_relations_use_the_linf_corner():
    """Under ``remove`` and ``replace_one`` a ``K``-dim subsampled Laplace query takes the
    linf corner too (before 2026-12-01 only the l1 vertex, a Laplace pair at ``K linf``):
    each calibration is certified and the least scale that the better of the two bounds
    certifies (under ``remove`` the corner: the vertex alone does not certify it), and it
    meets the target on an explicit pair of its relation summed independently."""
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    q, eps, delta = 0.2, 1.0, 1e-3

    def bounds(relation, b):
        vertex = PLDAccountant(relation).compose(ev.PoissonSampled(q, ev.Laplace(b / 2.0)))
        corner = PLDAccountant(relation).compose(
            ev.PoissonSampled(q, ev.SelfComposed(ev.Laplace(b), 2)))
        return vertex.get_delta(eps), corner.get_delta(eps)

    scales = {}
    for relation in ("remove", "replace_one"):
        cal = dpjax.calibrate("laplace", eps, delta, dim=2, linf=1.0, sampling_rate=q,
                              relation=relation)
        b = scales[relation] = float(cal.params["scale"])
        assert float(cal.delta_at_params) <= delta and cal.condition == "sufficient"
        assert f"relation {relation}" in cal.notes[-1]
        assert "linf corner" in cal.notes[-1] or "l1 vertex" in cal.notes[-1]
    b = scales["remove"]
    assert min(bounds("remove", b)) <= delta < min(bounds("remove", b * (1 - 1e-3)))
    assert bounds("remove", b)[0] > delta  # the vertex alone fails there
    assert _sampled_two_dim_delta(scales["remove"], q, [eps])[0] <= delta
    assert _replaced_two_dim_delta(scales["replace_one"], q, eps) <= delta
    assert scales["replace_one"] > scales["remove"]


def test_k_dim_subsampled_profile_is_the_least_of_its_bounds():
    """With both ``l1`` and ``linf`` binding (``linf < l1 < K linf``) the profile is the least of
    the accountant's l1-vertex and linf-corner ledgers (each run here directly) and the
    amplified pure-DP bound."""
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    q, uses, eps = 0.2, 2, [0.5, 2.0]
    got = np.asarray(dpjax.profile("laplace", {"scale": 1.0}, eps, dim=2, l1=1.5, linf=1.0,
                                   compositions=uses, sampling_rate=q))
    vertex = PLDAccountant().compose(ev.PoissonSampled(q, ev.Laplace(1.0 / 1.5)), uses)
    corner = PLDAccountant().compose(
        ev.PoissonSampled(q, ev.SelfComposed(ev.Laplace(1.0), 2)), uses)
    pure = 2.0 * np.log1p(q * np.expm1(1.5))  # T log(1 + q (e^{l1 / b} - 1))
    rr = np.maximum((np.exp(pure) - np.exp(eps)) / (1.0 + np.exp(pure)), 0.0)
    want = np.minimum.reduce([[vertex.get_delta(e) for e in eps],
                              [corner.get_delta(e) for e in eps], rr])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[1] == 0.0  # beyond the amplified pure epsilon


def _shifted_laplace_loss_pmf(shift, h, cells=2000):
    """The privacy loss ``|x| - |x - s|`` of ``Lap(s)`` against ``Lap(0)`` (``b = 1``) under
    ``Lap(s)``, on the grid ``h Z``: atoms ``-s`` (``x <= 0``) and ``s`` (``x >= s``), and
    ``2x - s`` on ``cells`` cells of ``(0, s)`` with their exact masses."""
    edges = np.linspace(0.0, shift, cells + 1)
    loss = np.concatenate([[-shift], edges[1:] + edges[:-1] - shift, [shift]])
    mass = np.concatenate([[0.5 * np.exp(-shift)], np.diff(0.5 * np.exp(edges - shift)), [0.5]])
    n = int(round(shift / h))
    pmf = np.zeros(2 * n + 1)
    np.add.at(pmf, np.round(loss / h).astype(int) + n, mass)
    return pmf, n


@pytest.mark.parametrize("split", [(0.5, 0.5), (1 / 3, 1 / 3, 1 / 3), (0.6, 0.3, 0.1),
                                   (0.25, 0.25, 0.25, 0.25)])
def test_l1_vertex_dominates_the_ball(split):
    """The l1-vertex bound of K-dim subsampled Laplace rests on this: a product of Laplace
    noises shifted by ``d`` with ``||d||_1 = 1`` has a profile below one Laplace pair at shift
    1 (``1 - e^{(eps - 1) / 2}``), here by the convolution of the coordinates' loss laws."""
    h, pmf, off = 1e-4, np.array([1.0]), 0
    for s in split:
        one, n = _shifted_laplace_loss_pmf(s, h)
        pmf, off = np.convolve(pmf, one), off + n
    loss = (np.arange(pmf.size) - off) * h
    for eps in (0.0, 0.3, 0.7):
        product = np.sum(pmf * np.maximum(0.0, -np.expm1(eps - loss)))
        assert product < 0.9 * float(delta_laplace(eps, 1.0, 1.0))
