"""FFT composition: closed forms, heterogeneous composition, traced K, dp_accounting, tiny delta.

Tolerances: bin width 1e-3 and connect-the-dots give relative errors in
delta of O(K h^2 (d log delta / d eps)^2) ~ 1e-4 for the K <= 10 cases here;
every reported value must be >= the exact one (pessimism) up to 1e-12.
"""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from _helpers import padded_jit
from _references import gaussian_delta

from dpjax.accounting import gaussian
from dpjax.accounting.pld import (
    compose,
    delta_for_epsilon,
    epsilon_for_delta,
    from_gaussian,
    from_laplace,
    self_compose,
    self_compose_size,
)

H = 1e-3
K = 10

# the closed form as one compiled program (op-by-op, each primitive compiles on its own)
delta_gaussian = padded_jit(gaussian.delta_gaussian)


def epsilon_gaussian(deltas, sigma, sensitivity):
    """The exact epsilon of the Gaussian pair at ``deltas``: the root of the closed form
    (Balle & Wang 2018, Thm 8; decreasing in epsilon) by bisection in 50-digit mpmath."""
    out = []
    for delta in np.atleast_1d(deltas):
        with mpmath.workdps(50):
            lo, hi = mpmath.mpf(0), mpmath.mpf(100)
            for _ in range(120):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if gaussian_delta(mid, sigma, sensitivity) > delta else (lo, mid)
            out.append(float(hi))
    return np.array(out)


@pytest.fixture(scope="module")
def g1():
    return from_gaussian(2.0, 1.0, H)


@pytest.fixture(scope="module")
def gk(g1):
    # jitted: one compiled program (op-by-op dispatch compiles every primitive on its own)
    size = self_compose_size(g1, K)  # host helper: outside the traced function
    return jax.jit(lambda p: self_compose(p, K, size))(g1)


def test_kfold_gaussian_is_gaussian_sqrtk(gk):
    """K-fold Gaussian = one Gaussian with Delta_2 = sqrt(K) Delta (closed form)."""
    eps = np.array([0.0, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0])
    exact = np.asarray(delta_gaussian(eps, 2.0, np.sqrt(K)))
    got = np.asarray(delta_for_epsilon(gk, eps))
    assert np.all(got >= exact * (1 - 1e-12))
    np.testing.assert_allclose(got, exact, rtol=2e-4)


def test_kfold_epsilon_and_tiny_delta(gk):
    deltas = np.array([1e-5, 1e-8, 1e-15, 1e-30])
    exact = np.asarray(epsilon_gaussian(deltas, 2.0, np.sqrt(K)))
    got = np.asarray(epsilon_for_delta(gk, deltas))
    assert np.all(np.isfinite(got))
    assert np.all(got >= exact - 1e-9)  # certified: never below the truth
    np.testing.assert_allclose(got[:2], exact[:2], atol=5e-4)
    # below the FFT floor the Chernoff bound answers; for a Gaussian it is within ~10% of exact
    assert np.all(got[2:] <= 1.15 * exact[2:])


def test_heterogeneous_gaussians(g1):
    """N(0, 2^2) then N(0, 1.5^2): one Gaussian with mu^2 = 1/4 + 1/1.5^2."""
    g2 = from_gaussian(1.5, 1.0, H)
    both = compose([g1, g2])  # its window is sized on the host from the data
    sigma = 1.0 / np.sqrt(1 / 4 + 1 / 1.5**2)
    eps = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    exact = np.asarray(delta_gaussian(eps, sigma, 1.0))
    got = np.asarray(delta_for_epsilon(both, eps))
    assert np.all(got >= exact * (1 - 1e-12))
    np.testing.assert_allclose(got, exact, rtol=1e-4)


def test_traced_k_compiles_once(g1):
    """K is traced: one compilation serves every K; self-composition agrees with products."""
    size = self_compose_size(g1, 8)
    traces = []

    @jax.jit
    def delta_at(k):
        traces.append(1)
        return delta_for_epsilon(self_compose(g1, k, size), jnp.array([1.0]))

    d = [float(delta_at(jnp.float64(k))[0]) for k in (2, 5, 8)]
    assert len(traces) == 1
    exact = [float(delta_gaussian(1.0, 2.0, np.sqrt(k))) for k in (2, 5, 8)]
    np.testing.assert_allclose(d, exact, rtol=1e-4)
    two = jax.jit(lambda p: compose([p, p], size))(g1)
    assert float(delta_for_epsilon(two, 1.0)) == pytest.approx(d[0], rel=1e-9)


def test_laplace_vs_dp_accounting_and_bracket():
    """20-fold Laplace(b = 10): true delta(1) in [2.294270e-3, 2.294336e-3]."""
    from dp_accounting.pld import privacy_loss_distribution as pldm

    lap = from_laplace(10.0, 1.0, 1e-4)
    size = self_compose_size(lap, 20)
    comp = jax.jit(lambda p: self_compose(p, 20, size))(lap)
    got = float(delta_for_epsilon(comp, 1.0))
    assert 2.294270e-3 <= got <= 2.294336e-3 * (1 + 1e-4)
    ref = pldm.from_laplace_mechanism(10.0, 1.0, value_discretization_interval=1e-4)
    ref = ref.self_compose(20).get_delta_for_epsilon(1.0)
    assert got == pytest.approx(ref, rel=1e-4)


def test_window_cut_goes_to_infinity(g1):
    """A window far too small: the cut mass is bounded and added, delta stays an upper bound."""
    small = jax.jit(lambda p: self_compose(p, K, 512))(g1)
    big_eps = np.array([1.0, 3.0])
    exact = np.asarray(delta_gaussian(big_eps, 2.0, np.sqrt(K)))
    assert np.all(np.asarray(delta_for_epsilon(small, big_eps)) >= exact)
    assert float(small.inf_mass) > float(small.atom_inf)


def test_reduced_phase_keeps_cos_and_sin_to_a_few_ulps():
    """The K-th power's phase ``K arg z`` (up to ``pi K``, ``3e9`` at ``K = 1e9``) reduced
    by ``2 pi`` in three parts: ``cos`` and ``sin`` of the reduced phase agree with 50-digit
    ``cos``/``sin`` of the exact float64 phase to within the 16 u of ``power_rounding``."""
    from dpjax.accounting.pld.compose import power_rounding, reduced_phase

    rng = np.random.default_rng(1)
    v = np.concatenate([
        rng.uniform(-3.2e9, 3.2e9, 300), rng.uniform(-10.0, 10.0, 50),
        [0.0, np.pi, -np.pi, 2 * np.pi, 5.3e10, -5.3e10, 1e12],
    ])
    r = reduced_phase(jnp.asarray(v))
    assert np.all(np.abs(np.asarray(r)[np.abs(v) < 5e10]) <= np.pi * (1 + 1e-15))
    cos, sin = np.asarray(jnp.cos(r)), np.asarray(jnp.sin(r))  # as power_spectrum evaluates
    with mpmath.workdps(50):
        worst = max(
            abs(mpmath.cos(a) - c) + abs(mpmath.sin(a) - s)
            for a, c, s in zip(v.tolist(), cos.tolist(), sin.tolist(), strict=True)
        )
    assert float(worst) <= (power_rounding(0.0) - 4.0) * 2.0**-53


def test_floored_size_is_the_ladder_above_its_floor_and_below_the_cap(monkeypatch):
    """:func:`.compose.floored_size`: the size ladder (or the next power of two) of
    ``max(n, N_0)``, ``N_0 = min(MIN_GRID_POINTS, cap)``: a cap set below the floor lowers it."""
    from dpjax._batching import ladder
    from dpjax.accounting.pld.compose import MIN_GRID_POINTS, ceil_pow2, floored_size

    for n in (1, 100, MIN_GRID_POINTS, MIN_GRID_POINTS + 1, 10**6):
        assert floored_size(n) == ladder(max(n, MIN_GRID_POINTS)) >= n
        assert floored_size(n, ceil_pow2) == ceil_pow2(max(n, MIN_GRID_POINTS))
    monkeypatch.setenv("DPJAX_MAX_GRID_POINTS", "4096")
    assert floored_size(100) == 4096 and floored_size(5000) == ladder(5000)


def test_small_noise_plds_share_one_program_and_stay_certified():
    """:func:`.discretise.from_noise` of three Laplace scales (grids of three lengths of the
    ladder without the floor) share one compiled discretisation; each profile is at or above
    the exact one, ``delta(eps) = 1 - e^{(eps - 1/b)/2}`` (Laplace, shift 1), and within a
    bin's worth of it."""
    import inspect

    from dpjax.accounting.pld.discretise import discretise_noise

    core = inspect.unwrap(discretise_noise, stop=lambda f: hasattr(f, "_cache_size"))
    before = core._cache_size()
    eps = 0.25
    for b in (0.6, 1.2, 2.4):
        got = float(delta_for_epsilon(from_laplace(b, 1.0, H), eps))
        exact = -np.expm1((eps - 1.0 / b) / 2.0)
        assert exact <= got <= exact + 2 * H
    assert core._cache_size() - before <= 1



def test_concrete_compose_is_one_program_and_its_host_window_is_the_traced_one():
    """A heterogeneous composition of concrete PLDs (the ledger's product) compiles one
    program (JAX's compile events), not one per operation, and the window it sizes on the
    host (NumPy Chernoff edges) is the one JAX's edges give op by op (how it was sized
    before), to the last bit."""
    import logging

    from dpjax.accounting.pld import tail_bounds
    from dpjax.accounting.pld.compose import LOG_WINDOW_TAIL

    h = 2e-3  # a grid no other test composes: the programs are compiled here
    parts = [from_gaussian(1.5, 1.0, h), from_laplace(2.0, 1.0, h)]
    compiled = []

    class Compiles(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("Compiling "):
                compiled.append(record.getMessage().split()[1])

    handler = Compiles()
    logging.getLogger("jax").addHandler(handler)
    try:
        with jax.log_compiles(True):
            both = compose(parts)
    finally:
        logging.getLogger("jax").removeHandler(handler)
    assert compiled == ["jit(_product)"], compiled
    assert 0.0 < float(delta_for_epsilon(both, 1.0)) < 1.0
    log_mgf = sum(np.asarray(p.log_mgf, np.float64) for p in parts)
    for edge in (tail_bounds.upper_edge, tail_bounds.lower_edge):
        host = float(tail_bounds.on_host(edge, log_mgf, LOG_WINDOW_TAIL))
        assert host == float(edge(log_mgf, LOG_WINDOW_TAIL))  # op by op, as it was sized
