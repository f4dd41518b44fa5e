"""Profiles of Poisson-subsampled mechanisms (dpjax.accounting.pld.amplification).

Independent references: hockey-stick divergences summed directly over finite laws (random
ones, discrete Laplace on a product grid) and integrated on a fine grid for truncated Laplace
at every pair of contributions on a grid; the Gaussian's closed-form profile (SciPy).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpjax.accounting import PLDAccountant
from dpjax.accounting import events as ev
from dpjax.accounting.pld import amplification as amp

EPS = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0])


def _hockey(p, q, eps):
    """``sum (p - e^eps q)_+`` for every eps (finite laws on one support)."""
    return np.array([np.maximum(p - math.exp(e) * q, 0.0).sum() for e in np.ravel(eps)])


def _profile_of(p, q):
    return lambda e: _hockey(p, q, e)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rate", [0.03, 0.3, 0.9])
def test_remove_and_add_are_the_subsampled_divergences_exactly(seed, rate):
    """Balle, Barthe & Gaboardi's Thm 2 with one side unchanged: equalities."""
    rng = np.random.default_rng(seed)
    a, b = rng.dirichlet(np.full(7, 0.4)), rng.dirichlet(np.full(7, 0.4))
    mixed = (1 - rate) * a + rate * b
    np.testing.assert_allclose(amp.poisson_remove(_profile_of(b, a), rate)(EPS),
                               _hockey(mixed, a, EPS), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(amp.poisson_add(_profile_of(a, b), rate)(EPS),
                               _hockey(a, mixed, EPS), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rate", [0.05, 0.5, 1.0])
def test_replace_bound_is_above_the_subsampled_divergence(seed, rate):
    """Three random laws (absent, record x, record x'): the bound with the profiles of the
    pairs it names is never below the exact divergence, in both orders."""
    rng = np.random.default_rng(100 + seed)
    a, b, c = (rng.dirichlet(np.full(6, 0.5)) for _ in range(3))

    def worst(*pairs):
        return lambda e: np.max([_hockey(x, y, e) for x, y in pairs], axis=0)

    one = worst((b, a), (a, b), (c, a), (a, c))
    two = worst((b, c), (c, b))
    bound = amp.poisson_replace_one(one, rate, two)(EPS)
    p, q = (1 - rate) * a + rate * b, (1 - rate) * a + rate * c
    exact = np.maximum(_hockey(p, q, EPS), _hockey(q, p, EPS))
    assert np.all(bound >= exact * (1 - 1e-12) - 1e-15)
    # and each of its two terms alone is a bound too
    alone = amp.poisson_replace_one(one, rate)(EPS)
    assert np.all(alone >= exact * (1 - 1e-12) - 1e-15) and np.all(bound <= alone)


def _gaussian_profile(mu):
    def profile(e):
        e = np.asarray(e, np.float64)
        return norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2)
    return profile


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0])
def test_two_steps_bounds_the_profile_at_twice_the_shift(mu):
    exact = _gaussian_profile(2 * mu)(EPS)
    bound = amp.two_steps(_gaussian_profile(mu))(EPS)
    assert np.all(bound >= exact)
    assert bound[0] <= 2 * _gaussian_profile(mu)(np.zeros(1))[0] + 1e-15  # TV triangle


def test_subsampled_epsilon_is_stable_at_both_ends():
    assert amp.subsampled_epsilon(0.0, 0.1) == 0.0
    big = amp.subsampled_epsilon(800.0, 1e-3)  # e^800 overflows, the formula does not
    assert big == pytest.approx(800.0 - math.log(1e-3), rel=1e-15)


def _discrete_laplace(a: float, width: int = 40):
    k = np.arange(-width, width + 1)
    w = np.exp(-a * np.abs(k))
    return k, w / w.sum()


def test_composite_poisson_sampling_takes_one_coin_for_every_coordinate():
    """``PoissonSampled(q, SelfComposed(DiscreteLaplace, 2))``: the 2-D mixture pair summed on
    the product grid is the reference; the old per-coordinate coins (a product of 1-D
    subsampled pairs) are below it, which is the privacy violation this fixes."""
    a, q = 0.7, 0.2
    k, w = _discrete_laplace(a)
    shifted = np.concatenate([[0.0], w[:-1]])  # X + 1 on the same grid (edge mass ~1e-12)
    absent = np.outer(w, w).ravel()
    present = np.outer(shifted, shifted).ravel()
    mixed = (1 - q) * absent + q * present
    eps = np.array([0.1, 0.3, 0.4])  # pure DP: the joint loss is at most 0.477
    exact = np.maximum(_hockey(mixed, absent, eps), _hockey(absent, mixed, eps))
    inner = ev.SelfComposed(ev.DiscreteLaplace(a, 1), 2)
    acc = PLDAccountant("add_remove", 1e-4).compose(ev.PoissonSampled(q, inner))
    got = np.array([acc.get_delta(float(e)) for e in eps])
    assert np.all(got >= exact - 1e-12)
    assert np.all(got <= exact + 2e-3)  # the envelope's chords, not a looser bound
    coins = PLDAccountant("add_remove", 1e-4).compose(
        ev.PoissonSampled(q, ev.DiscreteLaplace(a, 1)), 2)
    assert exact[2] > 1e-3 and coins.get_delta(0.4) < exact[2] / 10  # coins understate it
    # q = 1 keeps every record: the composite's own profile (through the same bound)
    whole = PLDAccountant("add_remove", 1e-4).compose(ev.PoissonSampled(1.0, inner))
    plain = PLDAccountant("add_remove", 1e-4).compose(inner)
    for e in (0.5, 1.0):
        assert plain.get_delta(e) <= whole.get_delta(e) <= plain.get_delta(e) + 2e-3


def _loss_law(p, q):
    """``{loss: P-mass}`` of the pair ``(p, q)`` of finite laws (losses rounded to 1e-12 to
    merge equal ones; ``p`` has no mass where ``q`` has none here)."""
    law: dict = {}
    for pi, qi in zip(p, q, strict=True):
        if pi > 0.0:
            key = round(math.log(pi / qi), 12)
            law[key] = law.get(key, 0.0) + pi
    return law


def _composed(law: dict, uses: int) -> dict:
    """The loss law of ``uses`` independent uses (atoms convolved exactly)."""
    out = {0.0: 1.0}
    for _ in range(uses):
        nxt: dict = {}
        for a, pa in out.items():
            for b, pb in law.items():
                key = round(a + b, 12)
                nxt[key] = nxt.get(key, 0.0) + pa * pb
        out = nxt
    return out


def _delta_of_law(law: dict, eps: np.ndarray) -> np.ndarray:
    losses, mass = np.array(list(law)), np.array(list(law.values()))
    return np.array([np.sum(mass * np.maximum(1.0 - np.exp(e - losses), 0.0)) for e in eps])


@pytest.mark.parametrize("relation", ["add_remove", "remove", "add"])
def test_one_coin_uses_compose_each_order_to_the_exact_mixture(relation):
    """``T = 4`` uses of ``PoissonSampled(q, SelfComposed(DiscreteLaplace, 2))``: the 2-D
    mixture pair's loss law (a handful of atoms) composed exactly, order by order, is the
    reference.  Each direction's pair keeps the other order's profile below ``x = 1``
    (negative losses), so the composition is within the chords of the exact one and never
    below it; one law for both orders with every loss ``>= 0`` (before 2026-12-01) was
    several times above it."""
    a, q, uses = 0.7, 0.2, 4
    k, w = _discrete_laplace(a)
    shifted = np.concatenate([[0.0], w[:-1]])
    absent = np.outer(w, w).ravel()
    mixed = (1 - q) * absent + q * np.outer(shifted, shifted).ravel()
    eps = np.array([0.0, 0.1, 0.3, 0.6])
    orders = {"remove": (mixed, absent), "add": (absent, mixed)}
    want = {"add_remove": ("remove", "add"), "remove": ("remove",), "add": ("add",)}[relation]
    exact = np.max([_delta_of_law(_composed(_loss_law(*orders[o]), uses), eps) for o in want],
                   axis=0)
    inner = ev.SelfComposed(ev.DiscreteLaplace(a, 1), 2)
    acc = PLDAccountant(relation, 1e-4).compose(ev.PoissonSampled(q, inner), uses)
    got = np.array([acc.get_delta(float(e)) for e in eps])
    assert np.all(exact > 1e-3)
    assert np.all(got >= exact - 1e-12)
    assert np.all(got <= exact * 1.02 + 1e-4), (got, exact)


def test_one_coin_gaussian_coordinates_compose_to_the_gaussian_mechanism():
    """``K`` Gaussian coordinates under one coin are exactly one Gaussian at ``sqrt(K)`` times
    the shift: ``T`` uses through the profiles match the subsampled Gaussian's own mixture
    PLD (dpjax's, pessimistic) from above, and dp-accounting's optimistic PLD of the same
    mechanism (a lower bound) is below them."""
    from dp_accounting.pld import privacy_loss_distribution as dpa

    dims, q, uses, sigma = 4, 0.05, 20, 1.3
    per_shift = sigma / math.sqrt(dims)
    eps = np.array([0.5, 1.0, 2.0])
    inner = ev.SelfComposed(ev.Noise("gaussian", {"sigma": sigma}), dims)
    got = PLDAccountant("add_remove", 1e-4).compose(ev.PoissonSampled(q, inner), uses)
    own = PLDAccountant("add_remove", 1e-4).compose(
        ev.PoissonSampled(q, ev.Gaussian(per_shift)), uses)
    low = dpa.from_gaussian_mechanism(
        standard_deviation=per_shift, sensitivity=1.0, sampling_prob=q,
        pessimistic_estimate=False, value_discretization_interval=1e-4).self_compose(uses)
    for e in eps:
        g, o = got.get_delta(float(e)), own.get_delta(float(e))
        lo = low.get_delta_for_epsilon(float(e))
        assert lo <= o * (1 + 1e-6) and lo <= g
        assert g <= o * 1.01, (e, g, o)


def _tl_density(t, lam, bound):
    inside = np.abs(t) <= bound
    return np.where(inside, np.exp(-np.abs(t) / lam), 0.0) / (2 * lam * -math.expm1(-bound / lam))


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_truncated_laplace_replace_one_is_above_every_pair_of_contributions(rate):
    """The accountant's replace-one Poisson answer for truncated Laplace against the
    hockey-stick of ``(1 - q) T + q (T + a)`` vs ``(1 - q) T + q (T + b)`` integrated on a fine
    grid, for ``a, b`` on a grid of ``[-1, 1]``: no pair exceeds it."""
    lam, bound = 1.0, 4.0
    acc = PLDAccountant("replace_one", 1e-4).compose(
        ev.PoissonSampled(rate, ev.Noise("truncated-laplace", {"scale": lam, "bound": bound})))
    eps = np.array([0.0, 0.1, 0.3, 0.6])
    got = np.array([acc.get_delta(float(e)) for e in eps])
    t = np.linspace(-bound - 1.0, bound + 1.0, 400_001)
    dt = t[1] - t[0]
    base = _tl_density(t, lam, bound)
    worst = np.zeros(eps.size)
    for a in np.linspace(-1.0, 1.0, 9):
        for b in np.linspace(-1.0, 1.0, 9):
            p = (1 - rate) * base + rate * _tl_density(t - a, lam, bound)
            q = (1 - rate) * base + rate * _tl_density(t - b, lam, bound)
            worst = np.maximum(worst, _hockey(p * dt, q * dt, eps))
    assert np.all(got >= worst * (1 - 1e-3))
    assert np.all(got <= np.maximum(worst * 2.5, worst + 0.02))  # a bound, not a trivial one


def test_sampled_loss_is_the_direct_form_without_overflow():
    """``log(1 - q + q e^L)`` against 50-digit arithmetic, past ``e^709`` too."""
    import mpmath

    with mpmath.workdps(50):
        for loss, q in ((0.0, 0.1), (1e-3, 0.01), (5.0, 0.3), (29.9, 1e-3), (30.1, 1e-3),
                        (800.0, 1e-3), (1e5, 0.5)):
            ref = float(mpmath.log(1 - mpmath.mpf(q) + q * mpmath.exp(loss)))
            assert amp.sampled_loss(loss, q) == pytest.approx(ref, rel=1e-14, abs=1e-300)
    assert amp.sampled_loss(math.inf, 0.1) == math.inf


def test_one_coin_for_coordinates_of_little_noise_keeps_the_sampled_mass():
    """``PoissonSampled(0.01, SelfComposed(FH(120, 3^2), 20))`` (flipped Huber of shape
    ``b = 40``: Laplace of scale 0.075 out to 120, Gaussian tails): every use puts about ``q``
    of the remove order's mass at losses near 250.  One use is exactly ``q delta_inner`` at
    ``log(1 + (e^2 - 1) / q)`` (the inner composition: the plain accountant); 100 uses give
    ``delta(2) ~ 1 - (1 - q)^100 = 0.634`` (until 2026-12-02: ``1e-300``, the pair built from
    the remove order's profile, flat far out, lost its mass)."""
    q, h = 0.01, 1e-3
    inner = ev.SelfComposed(ev.Noise("flipped-huber", {"alpha": 120.0, "gamma": 3.0}), 20)
    outer = amp.subsampled_epsilon(2.0, q)
    d_inner = PLDAccountant("add_remove", h).compose(inner).get_delta(float(outer))
    one = PLDAccountant("remove", h).compose(ev.PoissonSampled(q, inner)).get_delta(2.0)
    assert q * d_inner * (1.0 - 1e-9) <= one <= q * d_inner + 1e-6
    many = ev.SelfComposed(ev.PoissonSampled(q, inner), 100)
    got = PLDAccountant("add_remove", h).compose(many).get_delta(2.0)
    assert 1.0 - (1.0 - q * d_inner) ** 100 - 1e-6 <= got <= 0.64
