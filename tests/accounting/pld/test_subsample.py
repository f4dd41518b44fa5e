"""Poisson subsampling (DP-SGD accountant) and the façade/CLI wiring.

References: dp_accounting's PLD accountant (connect-the-dots, same bin width)
and, for one step, direct quadrature of the hockey-stick divergence of the
subsampled Gaussian pair (scipy).  Tolerances: the two engines implement the
same pessimistic discretisation, so epsilons agree to ~1e-4; ours must not be
below the reference by more than that (dp_accounting does not bound FFT
round-off, ours adds a bound).
"""

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

import dpjax
from dpjax.accounting.pld import delta_for_epsilon, epsilon_for_delta, self_compose
from dpjax.accounting.pld.compose import self_compose_size
from dpjax.accounting.pld.subsample import from_subsampled_noise
from dpjax.cli._main import main
from dpjax.noise.gaussian import Gaussian

SIGMA, Q, T, H = 1.0, 0.01, 100, 1e-3


@pytest.fixture(scope="module")
def one_step():
    return from_subsampled_noise(Gaussian(SIGMA), 1.0, Q, H)


def _exact_one_step(eps, adjacency):
    """H_{e^eps}(P || Q) of the subsampled Gaussian pair by quadrature."""
    mix = lambda y: (1 - Q) * stats.norm.pdf(y) + Q * stats.norm.pdf(y, 1.0)  # noqa: E731
    base = lambda y: stats.norm.pdf(y)  # noqa: E731
    p, q = (mix, base) if adjacency == "remove" else (base, mix)
    f = lambda y: max(p(y) - math.exp(eps) * q(y), 0.0)  # noqa: E731
    return integrate.quad(f, -12, 14, points=[0.5], limit=400, epsabs=1e-15, epsrel=1e-12)[0]


@pytest.mark.parametrize("adjacency", ["remove", "add"])
def test_one_step_pessimistic_and_tight(one_step, adjacency):
    pld = one_step[adjacency]
    assert abs(float(pld.pmf.sum() + pld.inf_mass) - 1.0) < 1e-12
    eps = np.array([0.0, 0.005, 0.01, 0.02])
    got = np.asarray(delta_for_epsilon(pld, eps))
    want = np.array([_exact_one_step(e, adjacency) for e in eps])
    assert np.all(got >= want * (1 - 1e-9) - 1e-15)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-12)


def test_dpsgd_vs_dp_accounting(one_step):
    from dp_accounting.pld import privacy_loss_distribution as pldm

    deltas = np.array([1e-3, 1e-5, 1e-7])
    ours = np.maximum(
        *[
            np.asarray(epsilon_for_delta(self_compose(p, T, self_compose_size(p, T)), deltas))
            for p in one_step.values()
        ]
    )
    ref = pldm.from_gaussian_mechanism(
        SIGMA, sampling_prob=Q, value_discretization_interval=H, use_connect_dots=True
    ).self_compose(T)
    ref = np.array([ref.get_epsilon_for_delta(d) for d in deltas])
    np.testing.assert_allclose(ours, ref, atol=2e-4)
    assert np.all(ours >= ref - 2e-4)


def test_tiny_delta_stays_finite_and_monotone(one_step):
    comp = self_compose(one_step["remove"], T, self_compose_size(one_step["remove"], T))
    deltas = np.array([1e-10, 1e-12, 1e-15, 1e-20, 1e-30])
    eps = np.asarray(epsilon_for_delta(comp, deltas))
    assert np.all(np.isfinite(eps))
    assert np.all(np.diff(eps) > 0)
    # certified: the profile at the returned epsilon is at most delta
    assert np.all(np.asarray(delta_for_epsilon(comp, eps)) <= deltas * (1 + 1e-9))


@pytest.fixture
def coarse_engine(monkeypatch):
    """The façade at bin width 1e-3 (accuracy is tested above; this tests the wiring fast)."""
    from dpjax.mechanisms import gaussian

    monkeypatch.setattr(gaussian, "BIN_WIDTH", H)


def test_facade_account_profile_and_cli(capsys, coarse_engine):
    eps = dpjax.account("gaussian", {"sigma": SIGMA}, compositions=T, sampling_rate=Q, delta=1e-5)
    d = dpjax.profile("gaussian", {"sigma": SIGMA}, eps, compositions=T, sampling_rate=Q)
    assert d <= 1e-5 * (1 + 1e-9)
    assert d == pytest.approx(1e-5, rel=1e-3)
    main(
        [
            "account",
            "gaussian",
            "--param",
            "sigma=1",
            "--compositions",
            str(T),
            "--sampling-rate",
            str(Q),
            "--delta",
            "1e-5",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == pytest.approx(eps, rel=1e-12)
    assert out["compositions"] == T and out["sampling_rate"] == Q


def test_facade_calibrate_dpsgd(coarse_engine):
    import dp_accounting

    cal = dpjax.calibrate("gaussian", 1.0, 1e-5, l2=1.0, compositions=T, sampling_rate=Q)
    sigma = float(cal.params["sigma"])
    assert float(cal.delta_at_params) <= 1e-5
    # least, against dp_accounting's calibration at the same resolution (independent engine)
    ref = dp_accounting.calibrate_dp_mechanism(
        lambda: dp_accounting.pld.PLDAccountant(value_discretization_interval=H),
        lambda s: dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(s)), T
        ),
        1.0,
        1e-5,
        dp_accounting.ExplicitBracketInterval(0.5, 2.0),
        tol=1e-6,
    )
    assert sigma == pytest.approx(ref, rel=5e-4)


@pytest.mark.parametrize("noise, q", [(Gaussian(1.0), 0.05), ("laplace", 0.1)])
def test_both_adjacencies_in_one_program_are_the_per_adjacency_plds(noise, q):
    """:func:`.subsample.discretise_subsampled_pairs` (both adjacencies mapped over a
    traced flag, each on its own grid) gives each adjacency's upper-bound PLD of
    :func:`.subsample.discretise_subsampled` (the adjacency static) to the last bit."""
    import dataclasses

    import jax.numpy as jnp

    from dpjax.accounting.pld.subsample import (
        ADJACENCIES,
        discretise_subsampled,
        discretise_subsampled_pairs,
        subsampled_grid,
    )
    from dpjax.noise.laplace import Laplace

    noise = Laplace(1.0) if noise == "laplace" else noise
    h = 2e-3
    grids = subsampled_grid(noise, 1.0, q, h)
    lowers = np.asarray([grids[a][0] for a in ADJACENCIES], np.int64)
    assert lowers[0] != lowers[1]  # each adjacency on its own grid
    size = max(s for _, s in grids.values())
    pair = discretise_subsampled_pairs(noise, 1.0, q, h, lowers, size)
    for adj, lower, got in zip(ADJACENCIES, lowers, pair, strict=True):
        ref = discretise_subsampled(noise, jnp.float64(1.0), jnp.float64(q), adj,
                                    jnp.float64(h), int(lower), size)
        for field in dataclasses.fields(ref):
            np.testing.assert_array_equal(
                np.asarray(getattr(got, field.name)), np.asarray(getattr(ref, field.name)),
                err_msg=f"{adj}: {field.name}")
