"""Laplace noise in the training plan: the l1 dominating pair, calibration against
dp-accounting's PLD of the subsampled Laplace, group scales, l1 clipping, the noise."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import signal, stats

import dpjax
from dpjax.train import flat_per_layer, make_plan
from dpjax.train import laplace as train_laplace
from dpjax.train.laplace import calibrate_multiplier
from dpjax.train.transform import _l1_shrink, clipped_sum, noise_like

PARAMS = {"l1": {"w": jnp.zeros((16, 8)), "b": jnp.zeros(8)}, "l2": {"w": jnp.zeros((8, 2))}}
SCHEDULE = dict(dataset_size=200, batch_size=20, steps=12, epsilon=2.0, delta=1e-5)


@pytest.fixture(scope="module", autouse=True)
def _calibrate_each_schedule_once():
    """The module's plans share one schedule: make_plan's subsampled-Laplace calibration
    (deterministic, a full certified search each call) runs once per distinct target and is
    reused by the plans of other clip norms, allocations and parameter trees.  The direct
    ``calibrate_multiplier`` calls below still run the search themselves."""
    patch = pytest.MonkeyPatch()
    patch.setattr(train_laplace, "calibrate_multiplier", functools.cache(calibrate_multiplier))
    yield
    patch.undo()


@pytest.fixture(scope="module")
def plan():
    return make_plan(PARAMS, noise="laplace", **SCHEDULE)


def _plrv(a, h):
    """PLD of ``(Lap(0, 1), Lap(a, 1))`` on the grid ``-a, -a + h, ..., a`` (cell masses in
    closed form): atoms ``1/2`` at ``a`` and ``e^{-a}/2`` at ``-a``, density
    ``e^{-(a - l)/2} / 4`` between."""
    n = round(2 * a / h)
    grid = -a + h * np.arange(n + 1)
    lo, hi = np.clip(grid - h / 2, -a, a), np.clip(grid + h / 2, -a, a)
    w = (np.exp(-(a - hi) / 2) - np.exp(-(a - lo) / 2)) / 2
    w[-1] += 0.5
    w[0] += math.exp(-a) / 2
    return grid, w


def _hockey(eps, grid, w):
    return float(np.sum(w * np.maximum(0.0, -np.expm1(eps - grid))))


@pytest.mark.parametrize("c", [0.5, 2.0])
@pytest.mark.parametrize("split", [0.1, 0.3, 0.5])
def test_l1_shift_is_dominated_by_the_one_dimensional_pair(c, split):
    # the lemma of dpjax.train.laplace, against an independent discretisation: the 2-D
    # shift (s, c - s) composes two 1-D PLDs; eps < 0 covers the orders a < 1.  The grid
    # cells (h = 1e-4) move delta by O(h): margin 1e-3 * h on differences >= 1e-3.  The
    # convolution by FFT (round-off ~1e-16 absolute; np.convolve's direct sum of the
    # 12001 x 28001 case took ~10 s)
    h = 1e-4
    g1, w1 = _plrv(c, h)
    (ga, wa), (gb, wb) = _plrv(split * c, h), _plrv((1 - split) * c, h)
    w2 = signal.fftconvolve(wa, wb)
    g2 = ga[0] + gb[0] + h * np.arange(len(w2))
    for eps in np.linspace(-0.9 * c, 0.95 * c, 9):
        one, two = _hockey(eps, g1, w1), _hockey(eps, g2, w2)
        assert two <= one + 1e-7, (eps, one, two)
    assert _hockey(0.0, g2, w2) < _hockey(0.0, g1, w1) - 1e-3  # strict for a real split


def test_accountant_equals_dpjax_account_and_is_tight(plan):
    b = plan.noise_multiplier
    ref = dpjax.account("laplace", {"scale": b}, compositions=plan.steps,
                        sampling_rate=plan.sampling_rate, delta=plan.noise_delta, l1=1.0)
    eps = plan.accountant().epsilon(plan.steps)
    assert eps == float(ref)
    assert plan.epsilon * 0.999 < eps <= plan.epsilon
    assert plan.clip_norm_order == 1 and plan.summary()["clip_norm"] == "l1"


def test_epsilon_against_dp_accounting_subsampled_laplace(plan):
    # dp-accounting's PLD of the Poisson-subsampled Laplace (add and remove), composed T
    # times: its optimistic estimate is a lower value, its pessimistic one an upper value
    from dp_accounting.pld import privacy_loss_distribution as pld

    eps = plan.accountant().epsilon(plan.steps)

    def ref(pessimistic):
        m = pld.from_laplace_mechanism(
            plan.noise_multiplier, 1.0, pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-5, sampling_prob=plan.sampling_rate,
            use_connect_dots=pessimistic,
        )
        return m.self_compose(plan.steps).get_epsilon_for_delta(plan.noise_delta)

    lower, upper = ref(False), ref(True)
    assert lower <= eps  # never below the true epsilon
    assert abs(eps - upper) <= 1e-5 * upper  # measured: 2.5e-8 relative
    # pure DP amplified by subsampling (Balle, Barthe & Gaboardi 2018), composed: looser
    q, b = plan.sampling_rate, plan.noise_multiplier
    assert eps < plan.steps * math.log1p(q * math.expm1(1.0 / b))


def test_bracket_lower_value_against_dp_accounting_optimistic(plan):
    from dp_accounting.pld import privacy_loss_distribution as pld

    lower, upper = plan.accountant().bracket(plan.steps)
    share = (1 + math.exp(upper)) * plan.steps * plan.truncation_probability
    def dp_accounting_epsilon(pessimistic):
        return pld.from_laplace_mechanism(
            plan.noise_multiplier, 1.0, pessimistic_estimate=pessimistic,
            value_discretization_interval=1e-4, sampling_prob=plan.sampling_rate,
            use_connect_dots=False,
        ).self_compose(plan.steps).get_epsilon_for_delta(plan.delta + share)

    # the true epsilon lies in dp-accounting's [optimistic, pessimistic]: the certified lower
    # end (merged optimistic bins) may sit above the optimistic estimate, which rounds each
    # use's loss down by up to a bin, but never above the pessimistic upper bound, and it is
    # at most two bins under the optimistic estimate
    optimistic, pessimistic = dp_accounting_epsilon(False), dp_accounting_epsilon(True)
    assert 0.0 <= lower <= upper
    assert optimistic - 2e-4 <= lower <= pessimistic


def test_bracket_is_narrow_for_laplace(plan):
    lower, upper = plan.accountant().bracket(plan.steps)
    assert lower <= upper < lower * 1.001


def test_global_scale_is_the_multiplier_times_c():
    p = make_plan(PARAMS, noise="laplace", clip_norms=0.25, **SCHEDULE)
    q = make_plan(PARAMS, noise="laplace", clip_norms=1.0, **SCHEDULE)
    assert p.laplace_scale[0] == pytest.approx(0.25 * q.laplace_scale[0], rel=1e-14)
    np.testing.assert_allclose(p.noise_std, math.sqrt(2.0) * p.laplace_scale, rtol=1e-15)


@pytest.mark.parametrize("allocation", ["inid", "spr"])
def test_group_scales_certified_and_inid_beats_spr(plan, allocation):
    clips = flat_per_layer(PARAMS)
    grouped = make_plan(PARAMS, noise="laplace", clip_norms=clips, allocation=allocation,
                        **SCHEDULE)
    g, b = grouped.groups, grouped.laplace_scale
    whitened = 1.0 / math.fsum(g.clip_norms / b)
    # the schedule's certified scale itself (the one-group plan's noise_multiplier is its
    # whitened scale 1 / (C / (C b_eff)), which may round an ulp above b_eff)
    b_eff, _ = calibrate_multiplier(plan.sampling_rate, plan.steps, plan.epsilon,
                                    plan.noise_delta)
    assert b_eff <= plan.noise_multiplier <= b_eff * (1 + 1e-12)
    assert b_eff <= whitened <= b_eff * (1 + 1e-12)
    assert grouped.accountant().epsilon(grouped.steps) <= grouped.epsilon
    if allocation == "inid":  # eq. (12), Theorem 5 with weights K_m: b_m ~ (C_m / K_m)^(1/3)
        ratio = b / np.cbrt(g.clip_norms / g.sizes)
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
        spr = make_plan(PARAMS, noise="laplace", clip_norms=clips, allocation="spr",
                        **SCHEDULE)
        assert np.sum(g.sizes * b**2) < np.sum(g.sizes * spr.laplace_scale**2)
    else:  # equal per-coordinate share: b_m K_m / C_m the same for every group
        ratio = b * g.sizes / g.clip_norms
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)


@pytest.fixture(scope="module")
def grads():
    rng = np.random.default_rng(1)
    scale = np.array([0.2, 1e-3, 0.05, 1e-4, 0.3, 3e-3])  # rows inside and outside the clip

    def draw(p):
        x = rng.normal(size=(6,) + p.shape)
        return jnp.asarray(x * scale.reshape((6,) + (1,) * p.ndim))

    return jax.tree.map(draw, PARAMS)


def _rows(tree, names):
    return np.concatenate([np.reshape(tree[a][b], (6, -1)) for a, b in names], axis=1)


def test_l1_clipping_global_analytic(plan, grads):
    summed, bad = clipped_sum(plan, grads)
    names = [("l1", "b"), ("l1", "w"), ("l2", "w")]  # the tree's leaf order
    rows = _rows(grads, names)
    c = 1.0 * _l1_shrink(plan.groups.dim, jnp.float64)
    f = np.minimum(1.0, c / np.abs(rows).sum(axis=1))
    assert np.any(f < 1.0) and np.any(f == 1.0)  # both branches
    out = np.concatenate([np.ravel(summed[a][b]) for a, b in names])
    np.testing.assert_allclose(out, f @ rows, rtol=1e-12)
    assert int(bad) == 0


def test_l1_clipping_per_layer_analytic(grads):
    clips = {"l1": 0.3, "l2": 0.05}
    p = make_plan(PARAMS, noise="laplace", clip_norms=clips, **SCHEDULE)
    summed, _ = clipped_sum(p, grads)
    for layer, names in {"l1": [("l1", "b"), ("l1", "w")], "l2": [("l2", "w")]}.items():
        rows = _rows(grads, names)
        size = rows.shape[1]
        f = np.minimum(1.0, clips[layer] * _l1_shrink(size, jnp.float64)
                       / np.abs(rows).sum(axis=1))
        assert np.any(f < 1.0) and np.any(f == 1.0)  # both branches
        out = np.concatenate([np.ravel(summed[a][b]) for a, b in names])
        np.testing.assert_allclose(out, f @ rows, rtol=1e-12)


def test_l1_shrink_bounds_float32_rounding():
    assert _l1_shrink(1000, jnp.float32) == 1.0 - 2 * 1004 * 2.0**-24
    with pytest.raises(ValueError, match="too large to clip soundly"):
        _l1_shrink(2**23, jnp.float32)
    # float32 rows: a clipped row's l1 norm, summed exactly, stays <= C
    rng = np.random.default_rng(2)
    params = {"w": jnp.zeros(5000, jnp.float32)}
    p = make_plan(params, noise="laplace", clip_norms=0.7, **SCHEDULE)
    g = jnp.asarray(rng.standard_cauchy((4, 5000)), jnp.float32)
    for i in range(4):
        s, _ = clipped_sum(p, {"w": g[i:i + 1]})
        assert math.fsum(np.abs(np.asarray(s["w"], np.float64))) <= 0.7


def test_noise_is_laplace_with_the_plan_scale_on_the_sum():
    # zero gradients: (q N) * update = Z, i.i.d. Lap(0, b) in float32; KS test at the
    # 1e-4 level (the statistic of 40000 draws has sd ~ 0.005) and the std within 2%.  The
    # module's schedule: its subsampled-Laplace calibration is compiled once for the module
    params = {"w": jnp.zeros(40000, jnp.float32)}
    p = make_plan(params, noise="laplace", max_batch_size=51, **SCHEDULE)
    tx = p.transform(seed=0)
    out, _ = jax.jit(tx.update)({"w": jnp.zeros((4, 40000), jnp.float32)}, tx.init(params))
    assert out["w"].dtype == jnp.float32
    z = np.asarray(out["w"], np.float64) * p.expected_batch_size
    b = p.laplace_scale[0]
    assert stats.kstest(z, stats.laplace(scale=b).cdf).pvalue > 1e-4
    assert abs(np.std(z) / (math.sqrt(2.0) * b) - 1.0) < 0.02
    # and the transform draws exactly noise_like's Laplace noise
    _, sub = jax.random.split(tx.init(params).key)
    zref = noise_like(p, sub, {"w": jnp.zeros(40000, jnp.float32)})["w"]
    np.testing.assert_allclose(z, np.asarray(zref, np.float64), rtol=1e-6)
