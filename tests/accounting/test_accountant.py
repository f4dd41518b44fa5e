"""PLDAccountant: the nine cases issue 14 found inexpressible, each inside an independent truth
bracket, plus closed forms (Gaussians compose to one Gaussian) and certification properties.

Independent truths: closed forms evaluated with mpmath (tests/_references.py), exact
enumeration of discrete pairs in NumPy (no PLD grid), scipy quadrature of continuous pairs.
"""

import math

import numpy as np
import pytest
from _references import gaussian_delta
from scipy import integrate
from scipy.stats import norm

from dpjax.accounting import PLDAccountant, UnsupportedEventError
from dpjax.accounting import events as ev

H = 1e-3  # bin width of every accountant here (1e-4 is the default: 10x the grid, same bounds)


def _acc(relation="add_remove"):
    return PLDAccountant(relation, bin_width=H)


def _exact_eps(delta_fn, delta, hi=50.0):
    """Least eps with delta_fn(eps) <= delta by bisection (the truth to bracket)."""
    lo = 0.0
    if delta_fn(0.0) <= delta:
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if delta_fn(mid) <= delta else (mid, hi)
    return hi


def _discrete_delta(p, q):
    p, q = np.asarray(p, float), np.asarray(q, float)
    return lambda e: float(np.sum(np.maximum(p - math.exp(e) * q, 0.0)))


def _product(pairs):
    """The exact product pair of independent discrete pairs (outer products)."""
    p, q = np.ones(1), np.ones(1)
    for a, b in pairs:
        p, q = np.outer(p, a).ravel(), np.outer(q, b).ravel()
    return p, q


def _quad_delta(logp, logq, lo=-40.0, hi=40.0):
    """delta(eps) = int (p - e^eps q)_+ by scipy quadrature of the densities."""

    def delta(eps):
        f = lambda t: max(math.exp(logp(t)) - math.exp(eps + logq(t)), 0.0)  # noqa: E731
        return integrate.quad(f, lo, hi, limit=400, epsabs=1e-14, epsrel=1e-11, points=[0.0])[0]

    return delta


def _mix(shifts, weights, sigma=1.0):
    def log_density(t):
        with np.errstate(divide="ignore"):  # log 0 = -inf far in the tails
            pairs = zip(shifts, weights, strict=True)
            return float(np.log(sum(w * norm.pdf(t, s, sigma) for s, w in pairs)))

    return log_density


# ------------------------------------------------------------------ closed forms


def test_heterogeneous_gaussians_compose_to_one_gaussian():
    acc = _acc().compose(ev.Gaussian(3.0)).compose(ev.Gaussian(4.0), 2)
    sigma = (1 / 9 + 2 / 16) ** -0.5  # sum of mu^2
    truth = _exact_eps(lambda e: float(gaussian_delta(e, sigma, 1.0)), 1e-5)
    lower, upper = acc.bracket(1e-5)
    assert lower <= truth <= upper <= truth + 2 * H
    assert acc.get_delta(1.0) >= float(gaussian_delta(1.0, sigma, 1.0))


# ------------------------------------------------------------------ the nine inexpressible cases


def test_discrete_laplace_is_bracketed_by_exact_enumeration():
    a, s = 0.8, 2
    k = np.arange(-80, 83)
    pmf = lambda x: math.tanh(a / 2) * np.exp(-a * np.abs(x))  # noqa: E731
    p, q = pmf(k), pmf(k - s)
    exact = _exact_eps(_discrete_delta(*_product([(p, q)] * 2)), 1e-3)
    acc = _acc().compose(ev.DiscreteLaplace(a, s), 2)
    assert exact <= acc.get_epsilon(1e-3) <= exact + 3 * H


def test_discrete_gaussian_is_bracketed_by_exact_enumeration():
    sigma = 2.0
    k = np.arange(-60, 62)
    w = np.exp(-np.square(k) / (2 * sigma**2))
    p, q = w / w.sum(), np.exp(-np.square(k - 1) / (2 * sigma**2)) / w.sum()
    exact = _exact_eps(_discrete_delta(*_product([(p, q)] * 2)), 1e-4)
    acc = _acc().compose(ev.DiscreteGaussian(sigma, 1), 2)
    assert exact <= acc.get_epsilon(1e-4) <= exact + 3 * H


def test_randomized_response_dp_accounting_values_and_exact_composition():
    # dp_accounting's test: p = 4 / (3 + e), 4 buckets is exactly 1-DP (replace-one)
    acc = _acc("replace_one").compose(ev.RandomizedResponse(4 / (3 + math.e), 4))
    assert 1.0 <= acc.get_epsilon(0.0) <= 1.0 + 1e-11  # pure DP: the exact largest loss
    assert acc.get_delta(1.0 + 2 * H) == 0.0
    rho, k = 0.3, 5
    keep, other = 1 - rho + rho / k, rho / k
    pair = (np.array([keep, other, (k - 2) * other]), np.array([other, keep, (k - 2) * other]))
    exact = _exact_eps(_discrete_delta(*_product([pair] * 3)), 1e-2)
    acc = _acc("replace_one").compose(ev.RandomizedResponse(rho, k), 3)
    assert exact <= acc.get_epsilon(1e-2) <= exact + 4 * H
    with pytest.raises(UnsupportedEventError, match="RandomizedResponse.*add_remove"):
        _acc().compose(ev.RandomizedResponse(rho, k))


@pytest.fixture(scope="module")
def mog():
    return ev.MixtureOfGaussians(1.0, (0.0, 1.0, 2.0), (0.2, 0.6, 0.2))


def test_mixture_of_gaussians_is_bracketed_by_quadrature(mog):
    c, w = mog.sensitivities, mog.sampling_probs
    remove = _quad_delta(_mix(c, w), _mix([0.0], [1.0]))
    add = _quad_delta(_mix([0.0], [1.0]), _mix(c, w))
    acc = _acc().compose(mog)
    for eps in (0.5, 1.5):
        truth = max(remove(eps), add(eps))
        # quadrature is accurate to ~1e-11 relative: the bracket's lower end allows that
        assert truth * (1 - 1e-10) <= acc.get_delta(eps) <= truth * (1 + 1e-3) + 1e-12


def test_mixture_of_gaussians_dp_accounting_value(mog):
    # dp_accounting's own test value (pld_privacy_accountant_test, bin width 1e-4): 17.193115
    second = ev.MixtureOfGaussians(2.0, (0.0, 2.0, 3.0), (0.33, 0.34, 0.33))
    acc = _acc().compose(mog, 3).compose(second, 2)
    assert acc.get_epsilon(1e-6) == pytest.approx(17.193115, abs=2e-3)


def test_sampling_without_replacement_between_a_neighbour_pair_and_balle_et_al():
    n, m, sigma, eps = 100, 10, 1.0, 1.0
    gamma = m / n
    event = ev.SampledWithoutReplacement(n, m, ev.Gaussian(sigma))
    acc = _acc("replace_one").compose(event)
    # lower: one real neighbouring pair (record +1 vs -1, all others 0): a mixture pair
    w = [1 - gamma, gamma]
    lower = _quad_delta(_mix([0.0, 1.0], w), _mix([0.0, -1.0], w))
    # upper: gamma delta_base(log(1 + (e^eps - 1) / gamma)), base = shift 2 (Balle et al. Thm 9)
    inner = math.log1p(math.expm1(eps) / gamma)
    upper = gamma * float(gaussian_delta(inner, sigma, 2.0))
    got = acc.get_delta(eps)
    assert lower(eps) <= got <= upper * (1 + 1e-3) + 1e-12
    with pytest.raises(UnsupportedEventError, match="replace_one"):
        _acc().compose(ev.SampledWithoutReplacement(n, m, ev.Gaussian(sigma)))


def test_replace_one_poisson_gaussian_is_bracketed_by_quadrature():
    q, eps = 0.2, 1.0
    acc = _acc("replace_one").compose(ev.PoissonSampled(q, ev.Gaussian(1.0)))
    truth = _quad_delta(_mix([0.0, 1.0], [1 - q, q]), _mix([0.0, -1.0], [1 - q, q]))(eps)
    assert truth * (1 - 1e-10) <= acc.get_delta(eps) <= truth * (1 + 1e-3) + 1e-12


def test_add_only_adjacency_is_bracketed_by_quadrature():
    # dp_accounting's test event: PoissonSampled(0.2, Gaussian(0.5)), three times
    q, sigma, eps = 0.2, 0.5, 0.2
    step = ev.PoissonSampled(q, ev.Gaussian(sigma))
    add = _acc("add").compose(step)
    truth = _quad_delta(_mix([0.0], [1.0], sigma), _mix([0.0, -1.0], [1 - q, q], sigma))(eps)
    assert truth * (1 - 1e-10) <= add.get_delta(eps) <= truth * (1 + 1e-3) + 1e-12
    both = _acc().compose(step)
    assert add.get_delta(eps) <= both.get_delta(eps)  # add-only is one of the two directions
    assert _acc().compose(step, 3).get_delta(1.0) == pytest.approx(0.15594, abs=1e-3)


def test_epsilon_delta_events_compose_exactly_and_amplify():
    e0, d0, k = 0.5, 1e-6, 4
    hi = 1 / (1 + math.exp(-e0))
    pair = (np.array([d0, (1 - d0) * hi, (1 - d0) * (1 - hi), 0.0]),
            np.array([0.0, (1 - d0) * (1 - hi), (1 - d0) * hi, d0]))
    exact = _exact_eps(_discrete_delta(*_product([pair] * k)), 1e-3)  # Kairouz et al. optimal
    acc = _acc().compose(ev.EpsilonDelta(e0, d0), k)
    assert exact <= acc.get_epsilon(1e-3) <= exact + (k + 1) * H
    # pure DP under Poisson subsampling: log(1 + q (e^eps - 1)) (Balle et al. 2018, Thm 10)
    q = 0.3
    amplified = math.log1p(q * math.expm1(1.0))
    sub = _acc().compose(ev.PoissonSampled(q, ev.EpsilonDelta(1.0)))
    assert amplified <= sub.get_epsilon(0.0) <= amplified * (1 + 1e-11)


# ------------------------------------------------------------------ dp_accounting's test values


def test_dp_accounting_values_gaussian_and_laplace():
    g = ev.Gaussian(math.sqrt(3))
    acc = _acc().compose(g, 1).compose(g, 2)
    assert acc.get_delta(1.0) == pytest.approx(0.126936, abs=1e-3)
    assert acc.get_delta(1.0) >= float(gaussian_delta(1.0, 1.0, 1.0))  # = one sigma=1 Gaussian
    lap = _acc().compose(ev.Laplace(1.0), 3).compose(ev.Laplace(2.0), 2)
    # pure DP: 3 / 1 + 2 / 2 = 4 at delta = 0; at delta = 1e-14 the truth is a hair below: the
    # atom of all five losses at their maximum (mass 2^-5) gives delta(e) >= (1 - e^{e-4}) / 32,
    # so epsilon(1e-14) >= 4 + log(1 - 32e-14) (the tilted composition resolves it)
    assert 4.0 + math.log1p(-32e-14) <= lap.get_epsilon(1e-14) <= 4.0 * (1 + 1e-11)
    sub = _acc().compose(ev.PoissonSampled(0.2, ev.Laplace(0.5)), 3)
    exact = 3 * math.log1p(0.2 * math.expm1(2.0))  # 2.46964
    assert exact <= sub.get_epsilon(1e-14) <= exact * (1 + 1e-11)
    mixed = _acc().compose(ev.Laplace(1.0), 3).compose(ev.PoissonSampled(0.2, ev.Laplace(0.5)), 3)
    assert mixed.get_epsilon(1e-14) <= lap.get_epsilon(1e-14) - 1.0 + sub.get_epsilon(1e-14) + 2e-9
    dlap = _acc().compose(ev.DiscreteLaplace(1.0), 3).compose(ev.DiscreteLaplace(0.5), 2)
    assert 4.0 <= dlap.get_epsilon(0.0) <= 4.0 * (1 + 1e-11)


def test_zcdp_is_above_its_closed_form_and_close():
    from dpjax.accounting.rdp.zcdp import epsilon_from_zcdp

    closed = float(epsilon_from_zcdp(0.5, 1e-5))
    got = _acc().compose(ev.ZCDP(0.5)).get_epsilon(1e-5)
    assert closed <= got <= closed * (1 + 1e-4)


def test_bad_input_and_unsupported_events_fail_closed():
    with pytest.raises(ValueError, match="relation"):
        PLDAccountant("swap")
    with pytest.raises(ValueError, match="noise_multiplier"):
        ev.Gaussian(-1.0)
    with pytest.raises(ValueError, match="sum to 1"):
        ev.MixtureOfGaussians(1.0, (0.0, 1.0), (0.5, 0.6))
    with pytest.raises(UnsupportedEventError, match="SampledWithReplacement"):
        _acc().compose(ev.SampledWithReplacement(100, 10, ev.Gaussian(1.0)))
    acc = _acc()
    assert not acc.supports(ev.PoissonSampled(0.1, ev.ZCDP(1.0)))
    assert _acc().compose(ev.NoOp()).get_epsilon(1e-6) == 0.0
    assert _acc().compose(ev.ZCDP(1.0)).compose(ev.NonPrivate()).get_epsilon(1e-6) == math.inf
    assert _acc().compose(ev.NonPrivate()).get_delta(3.0) == 1.0
    with pytest.raises(ValueError, match="delta"):
        acc.get_epsilon(1.5)


def test_deep_leaf_tables_with_x64_off():
    """The accountant enables float64 itself: the deep leaf tables (tails sized from the
    queried delta) are built with the caller's x64 off (the tilted queries use them)."""
    import jax

    acc = PLDAccountant().compose(ev.Gaussian(3.0), 10)
    with jax.enable_x64(False):
        table = acc._table(log_level=math.log(1e-100))
        assert table is not None and acc._log_chernoff(3.0) < 0.0


@pytest.mark.parametrize("bin_width, epsilons", [
    (H, (5.0, 16.19)),
    pytest.param(1e-4, (5.0, 13.0, 16.19, 20.0), marks=pytest.mark.slow),
])
def test_mixture_profile_beyond_its_grid_stays_certified(bin_width, epsilons):
    """A mixture's loss inverse is a bisection clipped to its bracket, so the grid's top
    point can sit above loss(t_hi): the mass above must still reach +infinity (it was 0, and
    delta(16.19) = 0 below the exact 3.6e-62, at either bin width). Exact: the remove pair
    of 0.5 N(0) + 0.5 N(1) against N(0), loss log(1/2 + e^{t - 1/2} / 2), in 40-digit
    mpmath. The default bin width (1e-4) and two more epsilons run in the slow tier."""
    import mpmath

    mixture = ev.MixtureOfGaussians(1.0, (0.0, 1.0), (0.5, 0.5))
    acc = PLDAccountant(relation="remove", bin_width=bin_width).compose(mixture)

    def exact(eps):
        with mpmath.workdps(40):
            eps = mpmath.mpf(eps)
            t = mpmath.mpf(0.5) + mpmath.log(2 * mpmath.exp(eps) - 1)
            tail = lambda x: mpmath.ncdf(-x)  # noqa: E731
            return float(0.5 * tail(t) + 0.5 * tail(t - 1) - mpmath.exp(eps) * tail(t))

    for eps in epsilons:
        assert acc.get_delta(eps) >= exact(eps) > 0.0
    assert acc.get_delta(5.0) <= exact(5.0) * (1 + 1e-6)


# ------------------------------------------------------------------ issue 34


def test_subsampled_laplace_under_add_or_remove_only():
    """The subsampled-Laplace cap returned both directions: KeyError under add / remove."""
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld

    event = ev.PoissonSampled(0.8, ev.Laplace(0.5))
    theirs = dpa_pld.from_laplace_mechanism(0.5, sampling_prob=0.8)
    add = PLDAccountant("add").compose(event)
    ref = theirs._pmf_add.get_delta_for_epsilon(0.5)  # 0.3243606497 (both exact to ~1e-16)
    assert add.get_delta(0.5) == pytest.approx(ref, rel=1e-12)
    remove = PLDAccountant("remove").compose(event)
    assert remove.get_delta(0.5) == pytest.approx(theirs._pmf_remove.get_delta_for_epsilon(0.5),
                                                  rel=1e-9)
    assert 0.0 < remove.get_epsilon(1e-5) < math.log1p(0.8 * math.expm1(2.0)) * (1 + 1e-15)


def test_epsilon_delta_boundary_is_exact():
    """dp_accounting's test_epsilon_delta_basic: delta = 0.28 is exactly the composed delta
    at infinity, 1 - (1 - 0.1)(1 - 0.2); its epsilon is 3 (was inf)."""
    acc = _acc().compose(ev.EpsilonDelta(1, 0.1)).compose(ev.EpsilonDelta(2, 0.2))
    assert acc.get_epsilon(0.28) == 3.0
    assert acc.get_delta(3.0) == 0.28 and acc.get_delta(5.0) == 0.28
    # just below the boundary the cap does not apply (the exact delta(3) is 0.28 + ~1e-17)
    assert acc.get_epsilon(math.nextafter(0.28, 0.0)) > 3.0


def test_delta_at_the_pure_epsilon_is_zero(mp):
    """At a pure-DP ledger's epsilon the true delta is 0 (was 7e-15, 4e-14 and 1e-7)."""
    lap = _acc().compose(ev.Laplace(1.0), 3)
    dlap = _acc().compose(ev.DiscreteLaplace(1.0), 3)
    for acc in (lap, dlap):
        assert acc.get_delta(3.0) == 0.0 and acc.get_epsilon(0.0) == 3.0
    q, b = 0.2, 0.5
    sub = _acc().compose(ev.PoissonSampled(q, ev.Laplace(b)), 3)
    exact = 3 * mp.log1p(q * mp.expm1(1 / mp.mpf(b)))  # the exact pure epsilon, 50 digits
    cap = sub.get_epsilon(0.0)
    assert exact <= cap <= exact * (1 + 1e-14)  # rounded up by a few ulps only
    assert sub.get_delta(cap) == 0.0
    # a float a hair below the exact value: not 0, but the randomized-response bound
    below = float(exact) if float(exact) < exact else math.nextafter(float(exact), 0.0)
    assert 0.0 < sub.get_delta(below) < 1e-14


def test_gaussian_ledgers_use_the_closed_form():
    """Composed Gaussians are one Gaussian: the ledger agrees with the façade (4.7285 vs
    4.3772 at 10^12 uses), and 800 different sigmas answer at once (was 155 s)."""
    import mpmath

    import dpjax

    acc = PLDAccountant().compose(ev.Gaussian(1e6), 10**12)
    facade = dpjax.account("gaussian", {"sigma": 1e6}, compositions=10**12, delta=1e-5)
    assert acc.get_epsilon(1e-5) == pytest.approx(float(facade), rel=1e-12)
    assert abs(acc.get_epsilon(1e-5) - 4.3772) < 1e-4
    sigmas = np.linspace(1.0, 5.0, 800)
    many = PLDAccountant()
    for s in sigmas:
        many.compose(ev.Gaussian(float(s)))
    mu = math.sqrt(float(np.sum(1.0 / sigmas**2)))
    with mpmath.workdps(50):  # the closed form's root (op-by-op it compiled ~100 programs)
        truth = _exact_eps(lambda e: gaussian_delta(e, 1.0, mu), 1e-10, hi=1000.0)
    assert truth * (1 - 1e-9) <= many.get_epsilon(1e-10) <= truth * (1 + 1e-9)


def test_x64_off_is_one_behaviour():
    """With x64 off every event is accounted in float64 (DiscreteGaussian and EpsilonDelta
    raised while Gaussian and Laplace answered)."""
    import jax

    events = [ev.DiscreteGaussian(1.0), ev.EpsilonDelta(1.0, 1e-6), ev.Laplace(1.0)]
    on = [_acc().compose(e).get_epsilon(1e-5) for e in events]
    with jax.enable_x64(False):
        off = [_acc().compose(e).get_epsilon(1e-5) for e in events]
    assert off == on


def test_bracket_to_a_requested_width_contains_the_closed_form():
    """``bracket(delta, epsilon_error=w)``: the ledger recomposed on finer grids until the
    bracket is at most ``w`` wide, both ends around the T-fold Gaussian's exact epsilon
    (Balle & Wang 2018, inverted by 50-digit bisection)."""
    import mpmath

    sigma, uses, delta, width = 2.0, 10, 1e-5, 3e-5
    acc = PLDAccountant().compose(ev.Gaussian(sigma), uses)
    plain = acc.bracket(delta)
    lower, upper = acc.bracket(delta, epsilon_error=width)
    with mpmath.workdps(50):
        lo, hi = mpmath.mpf(0), mpmath.mpf(20)
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gaussian_delta(mid, sigma, 1.0, uses) > delta else (lo, mid)
        exact = float(hi)
    assert plain[1] - plain[0] > width  # the default grid alone is wider than asked
    assert lower <= exact <= upper * (1 + 1e-12)
    assert upper - lower <= width
    assert lower >= plain[0] and upper <= plain[1]  # never worse than the default grid


def test_tilted_path_without_a_deep_grid_keeps_the_plain_answer(monkeypatch):
    # a subsampled flipped Huber under add: its per-use loss is at most log(1 / (1 - q)), so
    # delta(1) is tiny and the tilted path runs, but at the deep level the leaf's loss has
    # no grid (the table is None): the certified plain answer stands (it raised TypeError).
    # The grid cap is set so that the default level's grid (1.82M points) fits and the deep
    # levels' (2.26M and more) do not, whatever the machine's memory (at gamma = 0.0148 and
    # the cap of a 25 GB machine the default grid, 31.66M points, no longer fitted either)
    monkeypatch.setenv("DPJAX_MAX_GRID_POINTS", "2000000")
    step = ev.PoissonSampled(0.2, ev.Noise("flipped-huber", {"alpha": 0.04, "gamma": 0.1}))
    acc = PLDAccountant("add").compose(ev.SelfComposed(step, 4))
    assert acc._tilted(1.0, False, math.log(1e-50)) != acc._tilted(1.0, False, math.log(1e-50))
    d = acc.get_delta(1.0)
    assert 0.0 <= d < 1e-40


def test_rdp_moments_only_where_they_could_lower_the_answer(monkeypatch):
    """A subsampled Laplace ledger's exact RDP bound takes a fine quadrature of its moments:
    the accountant runs it only where cheap lower bounds on that bound do not already put it
    above the PLD answer (``ledger_rdp_delta_exceeds`` / ``ledger_rdp_epsilon_exceeds``).
    Here the PLD wins: no quadrature for a decision query, the tightest delta or an epsilon,
    and the answers are the minimum over both as before.  (Where the RDP bound wins it is
    computed and taken: ``tests/accounting/rdp/test_ledger.py``.)"""
    from dpjax.accounting.rdp import laplace
    from dpjax.accounting.rdp.ledger import ledger_rdp_delta, ledger_rdp_epsilon

    calls = []
    quadrature = laplace._log_integrals
    monkeypatch.setattr(laplace, "_log_integrals", lambda *a: calls.append(a) or quadrature(*a))
    leaves = [(ev.PoissonSampled(0.2, ev.Laplace(1.2345)), 4)]  # a scale no other test uses
    acc = PLDAccountant(bin_width=1e-3).compose(*leaves[0])
    decided = acc.get_delta(0.5, target=1e-6)
    delta, eps = acc.get_delta(0.5), acc.get_epsilon(1e-8)
    assert not calls and decided == delta > 1e-6
    assert delta == min(acc._pld_delta(0.5, 0.0), ledger_rdp_delta(leaves, "add_remove", 0.5))
    assert eps == min(acc._pld_epsilon(1e-8), ledger_rdp_epsilon(leaves, "add_remove", 1e-8))
    assert calls  # the exact bounds, computed by the test itself
