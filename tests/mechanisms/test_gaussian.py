"""Gaussian profile, inverse and calibration vs mpmath, dp_accounting, autodp."""

import inspect

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpjax
from dpjax.accounting import delta_gaussian, epsilon_gaussian, log_delta_gaussian, rho_gaussian
from dpjax.calibration import sigma_gaussian


def mp_delta(eps, sigma, sens=1.0, dps=80):
    with mpmath.workdps(dps):
        mu = mpmath.mpf(sens) / mpmath.mpf(sigma)
        eps = mpmath.mpf(eps)
        a, b = eps / mu - mu / 2, eps / mu + mu / 2
        # Q(a) - e^eps Q(b) = P(a < Z < b) - (e^eps - 1) Q(b), no cancellation at eps ~ 0
        r2 = mpmath.sqrt(2)
        if a >= 0:
            return (mpmath.erfc(a / r2) - mpmath.exp(eps) * mpmath.erfc(b / r2)) / 2
        head = (mpmath.erf(b / r2) - mpmath.erf(a / r2)) / 2
        return head - mpmath.expm1(eps) * mpmath.erfc(b / r2) / 2


@pytest.mark.parametrize(
    "eps,sigma",
    [(0.0, 1.0), (0.3, 12.99), (3.0, 1.54), (5.0, 2.2789878), (0.01, 3672.72), (50.0, 0.1),
     (1.0, 0.2)],
)
def test_profile_matches_mpmath(eps, sigma):
    ref = mp_delta(eps, sigma)
    got = float(jnp.exp(log_delta_gaussian(eps, sigma, 1.0)))
    assert abs(got - float(ref)) <= 1e-12 * float(ref)


def test_paper_values_sec_V_A():
    # flipped-huber-mechanism Sec. V-A: sigma^2 = 168.80 (eps 0.3), 2.38 (eps 3) at delta 1e-6
    cal = dpjax.calibrate("gaussian", epsilon=[0.3, 3.0], delta=1e-6, l2=1.0)
    assert round(float(cal.variance[0]), 5) == 168.80201
    assert round(float(cal.variance[1]), 2) == 2.38
    assert np.all(cal.delta_at_params <= 1e-6)


def test_tiny_delta_where_autodp_underestimates():
    cal = dpjax.calibrate("gaussian", epsilon=5.0, delta=1e-30, l2=1.0)
    sigma = float(cal.params["sigma"])
    assert abs(sigma - 2.278988) < 1e-6
    assert mp_delta(5.0, sigma) <= mpmath.mpf("1e-30")
    # autodp's answer (~1.61) is far from private at this delta
    assert float(mp_delta(5.0, 1.61)) > 1e-17


@pytest.mark.parametrize("delta", [0.5, 1e-3, 1e-12, 1e-100, 1e-300])
def test_calibration_certified_down_to_1e300(delta):
    cal = dpjax.calibrate("gaussian", epsilon=[0.0, 0.01, 1.0, 20.0], delta=delta, l2=2.0)
    for eps, sigma in zip(cal.epsilon, cal.params["sigma"], strict=True):
        ref = mp_delta(eps, sigma, 2.0)
        assert ref <= delta  # independent 80-digit re-check
        # and not wasteful: 1e-9 less noise violates the target
        assert mp_delta(eps, sigma * (1 - 1e-9), 2.0) > delta


def test_matches_dp_accounting_get_sigma_gaussian():
    import dp_accounting.gaussian_mechanism as gm  # test extra: a missing reference fails
    rng = np.random.default_rng(0)
    eps = rng.uniform(0.05, 8.0, 20)
    dlt = 10.0 ** rng.uniform(-10, -2, 20)
    ours = np.asarray(dpjax.calibrate("gaussian", epsilon=eps, delta=dlt, l2=1.0).params["sigma"])
    ref = np.array([gm.get_sigma_gaussian(e, d) for e, d in zip(eps, dlt, strict=True)])
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    # and the epsilon side
    sig = rng.uniform(0.3, 5.0, 10)
    ours_eps = np.asarray(dpjax.account("gaussian", {"sigma": sig}, delta=1e-6))
    ref_eps = np.array([gm.get_epsilon_gaussian(s, 1e-6) for s in sig])
    np.testing.assert_allclose(ours_eps, ref_eps, rtol=1e-9, atol=1e-11)


def test_against_autodp():
    """Agree with autodp where its answer is private; exceed it where it is not."""
    import autodp.calibrator_zoo as calib  # test extra
    import autodp.mechanism_zoo as mech_zoo
    ana = calib.ana_gaussian_calibrator()
    for eps, delta in [(0.5, 1e-5), (1.0, 1e-3), (2.0, 1e-8), (5.0, 1e-30)]:
        sigma_autodp = ana(mech_zoo.ExactGaussianMechanism, eps, delta).params["sigma"]
        sigma = float(dpjax.calibrate("gaussian", epsilon=eps, delta=delta, l2=1.0).params["sigma"])
        if mp_delta(eps, sigma_autodp) <= delta:  # autodp private: ours is the least, and close
            assert sigma <= sigma_autodp and sigma_autodp - sigma <= 1e-5 * sigma
        else:  # autodp under-noised (its search tolerance / tiny delta): ours is larger
            assert sigma > sigma_autodp


@given(
    eps=st.floats(0.0, 20.0),
    log10_delta=st.floats(-30.0, -0.31),
    sens=st.floats(0.1, 10.0),
)
def test_property_calibration_certified_in_mpmath(eps, log10_delta, sens):
    delta = 10.0**log10_delta
    cal = dpjax.calibrate("gaussian", epsilon=eps, delta=delta, l2=sens)
    assert float(cal.delta_at_params) <= delta
    with mpmath.workdps(50):
        assert mp_delta(eps, float(cal.params["sigma"]), sens, dps=50) <= mpmath.mpf(delta)


@given(
    eps=st.floats(0.0, 10.0), d_eps=st.floats(1e-3, 5.0),
    sigma=st.floats(0.05, 50.0), f=st.floats(1.001, 3.0),
)
def test_property_profile_decreases_in_eps_and_sigma(eps, d_eps, sigma, f):
    d0 = float(log_delta_gaussian(eps, sigma, 1.0))
    assert float(log_delta_gaussian(eps + d_eps, sigma, 1.0)) <= d0
    assert float(log_delta_gaussian(eps, sigma * f, 1.0)) <= d0


def test_epsilon_inverse_round_trip():
    # jitted: one program per function (op-by-op dispatch compiled ~250 primitives)
    eps_of, delta_of = jax.jit(epsilon_gaussian), jax.jit(delta_gaussian)
    sig = jnp.array([0.5, 1.0, 3.0, 20.0])
    for delta in [1e-3, 1e-9, 1e-30]:
        eps = eps_of(delta, sig, 1.0)
        assert np.all(np.asarray(delta_of(eps, sig, 1.0)) <= delta)
        # least: slightly smaller epsilon violates
        assert np.all(np.asarray(delta_of(eps * (1 - 1e-9), sig, 1.0)) > delta)
    assert np.all(np.asarray(eps_of(0.0, sig, 1.0)) == np.inf)


def test_jit_vmap_grad_parity_and_compile_once():
    eps = jnp.linspace(0.1, 3.0, 7)
    log_delta = jax.jit(log_delta_gaussian)  # op-by-op dispatch compiled ~300 primitives
    direct = log_delta(eps, 2.0, 1.0)
    vm = jax.jit(jax.vmap(lambda e: log_delta_gaussian(e, 2.0, 1.0)))(eps)
    np.testing.assert_array_equal(np.asarray(direct), np.asarray(vm))
    g = jax.jit(jax.grad(lambda s: log_delta_gaussian(1.0, s, 1.0)))(2.0)
    up, down = log_delta(1.0, jnp.array([2.0 + 1e-6, 2.0 - 1e-6]), 1.0)
    fd = (up - down) / 2e-6
    assert abs(float(g) - float(fd)) < 1e-6 * abs(float(fd))
    # one compilation serves every target (traced) and every batch up to 16 entries
    # (padded to one bucket), scalars and weakly typed Python floats included
    core = inspect.unwrap(sigma_gaussian, stop=lambda f: hasattr(f, "_cache_size"))
    core.clear_cache()  # an earlier test in this process may have compiled the bucket
    before = core._cache_size()
    assert before == 0
    for e in (0.1, 0.7, 2.0):
        sigma_gaussian(jnp.full((3,), e), jnp.full((3,), 1e-6), jnp.ones(3))
    sigma_gaussian(jnp.full((5,), 0.3), 1e-6, 1.0)
    sigma_gaussian(0.3, 1e-6, 1.0)
    assert core._cache_size() - before == 1
    # and the padded lanes change nothing: a batch equals its entries called one by one
    batch = sigma_gaussian(jnp.array([0.1, 0.7, 2.0]), 1e-6, 1.0)
    for i, e in enumerate((0.1, 0.7, 2.0)):
        one = sigma_gaussian(e, 1e-6, 1.0)
        assert all(float(b[i]) == float(o) for b, o in zip(batch, one, strict=True))


def test_batched_calibration_equals_scalar_calls():
    eps = np.array([0.2, 1.0, 4.0])
    batch = dpjax.calibrate("gaussian", epsilon=eps, delta=1e-7, l2=1.0).params["sigma"]
    single = [float(dpjax.calibrate("gaussian", epsilon=e, delta=1e-7, l2=1.0).params["sigma"])
              for e in eps]
    np.testing.assert_array_equal(batch, single)


def test_compositions_exact_and_zcdp():
    one = dpjax.calibrate("gaussian", epsilon=1.0, delta=1e-6, l2=1.0, compositions=4)
    ref = dpjax.calibrate("gaussian", epsilon=1.0, delta=1e-6, l2=2.0)
    assert float(one.params["sigma"]) == float(ref.params["sigma"])
    assert float(rho_gaussian(2.0, 1.0)) == 0.125


def test_delta_zero_is_infeasible():
    with pytest.raises(dpjax.InfeasibleTargetError, match="delta = 0"):
        dpjax.calibrate("gaussian", epsilon=1.0, delta=0.0, l2=1.0)
