"""PLD constructors: mass conservation, exactness at grid points, pessimism, atoms.

References: closed-form Gaussian (Balle & Wang 2018) and Laplace profiles,
randomized response, and the optimistic (round-down) discretisation as a
lower bracket.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpjax.accounting.gaussian import delta_gaussian
from dpjax.accounting.laplace import delta_laplace
from dpjax.accounting.pld import (
    delta_for_epsilon,
    epsilon_for_delta,
    from_atoms,
    from_gaussian,
    from_laplace,
)

H = 1e-3


@pytest.fixture(scope="module")
def gauss():
    return from_gaussian(1.5, 1.0, H)


@pytest.fixture(scope="module")
def gauss_opt():
    return from_gaussian(1.5, 1.0, H, pessimistic=False)


def test_mass_is_one(gauss, gauss_opt):
    assert abs(float(gauss.pmf.sum() + gauss.inf_mass) - 1.0) < 1e-12
    assert float(gauss.pmf.min()) >= 0.0
    # the optimistic PLD drops only the (tiny) bottom tail
    assert abs(float(gauss_opt.pmf.sum()) - 1.0) < 1e-12


def test_exact_at_grid_points(gauss):
    # connect-the-dots interpolates the exact profile through the grid points
    eps = np.array([0.0, 0.25, 0.5, 1.0, 2.0, 3.0])  # multiples of H
    got = np.asarray(delta_for_epsilon(gauss, eps))
    want = np.asarray(delta_gaussian(eps, 1.5, 1.0))
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_bracket_between_grid_points(gauss, gauss_opt):
    eps = np.linspace(0.0, 3.0, 37) + 0.37 * H  # off the grid
    exact = np.asarray(delta_gaussian(eps, 1.5, 1.0))
    hi = np.asarray(delta_for_epsilon(gauss, eps))
    lo = np.asarray(delta_for_epsilon(gauss_opt, eps))
    assert np.all(hi >= exact * (1 - 1e-12))
    assert np.all(lo <= exact * (1 + 1e-12))
    # chord error between grid points is O(h^2): (h^2 / 8) (d log delta / d eps)^2 ~ 1e-5 here
    np.testing.assert_allclose(hi, exact, rtol=3e-5)


def test_laplace_atoms_exact():
    pld = from_laplace(2.0, 1.0, H)
    eps = np.array([0.0, 0.1, 0.3, 0.499])
    np.testing.assert_allclose(
        np.asarray(delta_for_epsilon(pld, eps)),
        np.asarray(delta_laplace(eps, 2.0, 1.0)),
        rtol=1e-6,
        atol=1e-15,
    )
    # loss bounded by Delta / b = 0.5: delta = 0 beyond (up to round-off)
    assert float(delta_for_epsilon(pld, 0.51)) < 1e-15


def test_atoms_randomized_response():
    # randomized response with e^eps0: loss +eps0 w.p. e^eps0/(1+e^eps0), -eps0 otherwise
    e0 = 1.3
    p = math.exp(e0) / (1 + math.exp(e0))
    pld = from_atoms([e0, -e0], [p, 1 - p], bin_width=1e-2)
    eps = np.array([0.0, 0.5, 1.0, 1.29])
    want = (np.exp(e0) - np.exp(eps)) / (1 + np.exp(e0))
    np.testing.assert_allclose(np.asarray(delta_for_epsilon(pld, eps)), want, rtol=1e-9)


def test_atoms_infinite_mass():
    pld = from_atoms([np.inf, 0.0], [1e-3, 1 - 1e-3], bin_width=1e-2)
    assert float(delta_for_epsilon(pld, 5.0)) == pytest.approx(1e-3, rel=1e-12)


def test_epsilon_inverts_delta(gauss):
    deltas = np.array([1e-1, 1e-3, 1e-6, 1e-9])
    eps = np.asarray(epsilon_for_delta(gauss, deltas))
    back = np.asarray(delta_for_epsilon(gauss, eps))
    assert np.all(back <= deltas * (1 + 1e-9))
    np.testing.assert_allclose(back, deltas, rtol=1e-6)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    losses=st.lists(st.floats(-3, 3), min_size=1, max_size=6),
    weights=st.lists(st.floats(0.01, 1.0), min_size=6, max_size=6),
    eps=st.floats(0.0, 3.0),
)
def test_atoms_pessimistic_property(losses, weights, eps):
    """Any atom set: connect-the-dots delta >= exact >= round-down delta."""
    w = np.asarray(weights[: len(losses)])
    w = np.concatenate([w / w.sum(), [0.0, 0.0]])
    ls = np.concatenate([losses, [-3.0, 3.0]])  # zero-mass ends: one grid size, one compile
    exact = float(np.sum(w * np.maximum(1 - np.exp(eps - ls), 0.0)))
    hi = float(delta_for_epsilon(from_atoms(ls, w, 0.05), eps))
    lo = float(delta_for_epsilon(from_atoms(ls, w, 0.05, pessimistic=False), eps))
    assert lo <= exact + 1e-12
    assert hi >= exact - 1e-12


def test_connect_dots_numpy_twin_matches_the_traced_one():
    """``connect_dots(..., xp=np)`` (the host path of ``from_atoms``) is the jitted formula:
    the same masses to round-off (XLA and NumPy may round ``exp`` differently)."""
    import jax
    import jax.numpy as jnp

    from dpjax.accounting.pld.discretise import connect_dots

    rng = np.random.default_rng(3)
    p_bin = rng.uniform(0.0, 1e-2, 50)
    qs = p_bin * rng.uniform(0.2, 1.0, 50)  # e^{eps_i} Q(bin_i) <= P(bin_i) on a loss grid
    args = (p_bin, qs, 1e-4, 5e-5, 0.3, 0.05)
    host_pmf, host_inf = connect_dots(*args, xp=np)
    with jax.enable_x64(True):
        dev_pmf, dev_inf = jax.jit(connect_dots)(*(jnp.asarray(a) for a in args))
    assert isinstance(host_pmf, np.ndarray) and host_pmf.shape == (51,)
    np.testing.assert_allclose(host_pmf, np.asarray(dev_pmf), rtol=1e-14, atol=1e-300)
    assert float(host_inf) == pytest.approx(float(dev_inf), rel=1e-14)


def test_small_atom_pairs_share_one_grid_length():
    """Every pair spanning fewer than ``MIN_GRID`` points is padded (zero mass on top) to
    one length: a search over scales meets one compiled program, and the padding changes
    no delta."""
    from dpjax.accounting.pld.atoms import MIN_GRID

    short = from_atoms([-0.3, 0.3], [0.4, 0.6], bin_width=1e-2)
    longer = from_atoms([-1.5, 2.0], [0.4, 0.6], bin_width=1e-2)
    assert short.pmf.shape == longer.pmf.shape == (MIN_GRID,)
    assert float(np.sum(np.asarray(short.pmf)[62:])) == 0.0  # nothing above the top atom
    e0 = 0.3  # losses +-0.3: delta(eps) = 0.6 (1 - e^{eps - 0.3}) for 0 <= eps < 0.3
    want = 0.6 * (1 - np.exp(0.1 - e0))
    assert float(delta_for_epsilon(short, 0.1)) == pytest.approx(want, rel=1e-9)


def _tight_and_padded(kind, pessimistic, monkeypatch):
    """One use's PLD on its own grid and on a grid 2.5x as long (zero-mass padding above the
    loss range): Laplace (a bounded loss) and the replace-one Poisson mixture of a Gaussian
    (whose loss inverse stops at the range's end)."""
    import jax.numpy as jnp

    from dpjax.accounting.pld import mixture
    from dpjax.accounting.pld.discretise import discretise_noise, noise_grid
    from dpjax.noise import make

    if kind == "laplace":
        noise = make("laplace", scale=1.5)
        lower, size = noise_grid(noise, 1.0, H)
        one, h = jnp.asarray(1.0, jnp.float64), jnp.asarray(H, jnp.float64)
        return (discretise_noise(noise, one, h, lower, size, pessimistic),
                discretise_noise(noise, one, h, lower, 5 * size // 2, pessimistic))
    noise = make("gaussian", sigma=1.5)

    def use():
        return mixture.replace_one_poisson_pld(noise, 0.3, 1.0, H, pessimistic)

    tight = use()
    _pad_mixture_grids(monkeypatch)
    return tight, use()


def _pad_mixture_grids(monkeypatch):
    """Every shift-mixture grid of :mod:`.pld.mixture` made 2.5x its length (up the ladder)."""
    from dpjax._batching import ladder
    from dpjax.accounting.pld import mixture

    floored = mixture.floored_size
    monkeypatch.setattr(mixture, "floored_size", lambda n: ladder(5 * floored(n) // 2))


@pytest.mark.parametrize("pessimistic", [True, False])
@pytest.mark.parametrize("kind", ["laplace", "replace-one-mixture"])
def test_zero_mass_padding_at_the_top_is_exact(kind, pessimistic, monkeypatch):
    """A grid reaching far above the pair's loss range (a length padded up the ladder) gives
    the same PLD, the padding all zeros: the cut tail's atom sits at the least point at or
    above ``L(t_top)`` (pessimistic) or the greatest at or below it (optimistic), not at the
    grid's top, where it would dominate a tilted composition's moments."""
    tight, padded = _tight_and_padded(kind, pessimistic, monkeypatch)
    n = tight.size
    assert padded.size > 2 * n and int(padded.lower) == int(tight.lower)
    # the mixture's loss inverse starts from every _STRIDE-th level of the grid: another
    # grid length moves its roots within their rounding band (1e-9 relative in a mass)
    rtol = 0.0 if kind == "laplace" else 1e-8
    np.testing.assert_allclose(np.asarray(padded.pmf[:n]), np.asarray(tight.pmf), rtol=rtol,
                               atol=0.0)
    assert not np.any(np.asarray(padded.pmf[n:]))
    assert float(padded.inf_mass) == pytest.approx(float(tight.inf_mass), rel=rtol, abs=0.0)


@pytest.mark.slow
def test_padded_mixture_grids_leave_a_deep_bracket_unchanged(monkeypatch):
    """The user-visible effect: a ledger whose one-use grids are padded 2.5x answers the same
    bracket at delta = 1e-100 (tilted ends).  With the cut tail's atom at the grid's top, the
    padding took it from (6.714, 6.7145) to (4.64, 9.524).  Slow tier: the default tier checks
    the same padding on the one-use PLDs themselves (test_zero_mass_padding_at_the_top_is_exact)."""
    from dpjax.accounting import PLDAccountant
    from dpjax.accounting import events as ev

    def bracket():
        mix = ev.MixtureOfGaussians(10.0, (1.0,), (1.0,))
        return PLDAccountant(bin_width=H).compose(mix, 10).bracket(1e-100)

    tight = bracket()
    _pad_mixture_grids(monkeypatch)
    padded = bracket()
    assert padded.lower == tight.lower and padded.upper == tight.upper
    assert 6.714 <= tight.upper <= 6.7145
