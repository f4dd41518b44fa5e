"""The engine's plan (:mod:`dpjax.accounting.pld.plan`): the size ladder (every size a fast
FFT length, never below what is needed, at most a third, a fifth above ``2^20``, above it),
the per-use loss spread against quadrature, and the grid a heavy-tailed use asks for."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpjax.accounting.pld import plan as pld_plan
from dpjax.accounting.pld.plan import FINE_LADDER_ABOVE, _ladder_cap, ladder
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.laplace import Laplace


def _smooth(m: int) -> bool:
    for p in (2, 3, 5, 7):
        while m % p == 0:
            m //= p
    return m == 1


def test_ladder_sizes_cover_the_need_with_bounded_padding():
    rng = np.random.default_rng(0)
    needs = np.unique(np.concatenate([
        rng.integers(8, 2**27, 400), 2 ** np.arange(3, 27), 3 * 2 ** np.arange(3, 25) + 1,
        [FINE_LADDER_ABOVE, FINE_LADDER_ABOVE + 1, 13_365_590],
    ]))
    for n in needs.tolist():
        m = ladder(n)
        assert m >= n and _smooth(m), (n, m)
        assert m <= n * (1.2 if n > FINE_LADDER_ABOVE else 4.0 / 3.0), (n, m)
        assert ladder(m) == m  # a ladder size is its own rung
    # the fine rungs: 13.4M points composed on 14.7M, not on 2^24
    assert ladder(13_365_590) == 7 * 2**21
    assert ladder(2**20) == 2**20 and ladder(2**20 + 1) == 9 * 2**17


def test_capped_sizes_are_the_largest_rung_within_the_cap():
    for cap in (1000, 3 * 2**19, 2**20, 31_656_586, 2**25, 10**8):
        m = _ladder_cap(1e15, cap)
        assert m <= cap and ladder(m) == m
        assert ladder(m + 1) > cap  # no rung between m and the cap
        assert _ladder_cap(100, cap) == ladder(100)  # within the cap: the plain ladder


def _sd(loss, density, lo, hi):
    """Standard deviation of ``loss(X)``, ``X`` with ``density`` (scipy quadrature)."""
    quad = lambda f: integrate.quad(f, lo, hi, limit=500, points=[0.0, 1.0])[0]  # noqa: E731
    mean = quad(lambda x: loss(x) * density(x))
    return math.sqrt(quad(lambda x: (loss(x) - mean) ** 2 * density(x)))


def test_loss_spread_matches_quadrature():
    """:func:`.plan.loss_spread` (through :func:`.plan.extents`) against scipy quadrature:
    N(0, 2^2) at shift 1 (sd 1/2), Laplace(1) (the loss clipped to [-1, 1]) and the two
    adjacencies of a Poisson-subsampled N(0, 0.8^2) at q = 1e-3 (the mixture's loss under the
    mixture, and minus it under N(0, 0.8^2))."""
    ext = pld_plan.extents(Gaussian.from_scale, 2.0, 1.0, 1.0, None, 10)
    np.testing.assert_allclose(ext.spread, [0.5], rtol=1e-5)
    ext = pld_plan.extents(Laplace.from_scale, 1.0, 1.0, 1.0, None, 10)
    ref = _sd(lambda x: abs(x - 1.0) - abs(x), stats.laplace.pdf, -60.0, 60.0)
    np.testing.assert_allclose(ext.spread, [ref], rtol=1e-3)
    sigma, q = 0.8, 1e-3
    loss = lambda x: math.log1p(q * math.expm1((2.0 * x - 1.0) / (2.0 * sigma**2)))  # noqa: E731
    mixture = lambda x: (  # noqa: E731
        (1.0 - q) * stats.norm.pdf(x, 0.0, sigma) + q * stats.norm.pdf(x, 1.0, sigma)
    )
    refs = [_sd(loss, mixture, -12.0, 13.0),
            _sd(lambda x: -loss(x), lambda x: stats.norm.pdf(x, 0.0, sigma), -12.0, 13.0)]
    ext = pld_plan.extents(Gaussian.from_scale, sigma, 1.0, 1.0, q, 10)
    np.testing.assert_allclose(ext.spread, refs, rtol=1e-3)


def test_long_grid_tail_is_a_whole_decade_k_uses_may_lose():
    assert pld_plan.long_grid_tail(1e7) == pytest.approx(1e-17)
    assert pld_plan.long_grid_tail(1) == pytest.approx(1e-10)
    assert pld_plan.long_grid_tail(3e6) == pytest.approx(1e-17)
    assert pld_plan.long_grid_tail(1e40) == 1e-40  # never below the default cut
    for k in (1.0, 7.0, 3e6, 1e7, 1e29):
        assert k * pld_plan.long_grid_tail(k) <= pld_plan.TAIL_BUDGET * (1.0 + 1e-12)


def test_plan_follows_a_heavy_tailed_use():
    """Issue 39 (0.8, 1e-6, 10^7): each use's loss spreads over 1.94e-6 with an upper tail to
    order 1; the Chernoff window read it as 5.3e-5 (bin width 3.1e-6, the answer 20% above
    the exact one).  The plan's bin width follows the spread (below 0.09 of it), and the pair
    is cut at the tail 10^7 uses may lose (1e-17: the loss range falls from 3.6 to 0.085),
    so the grid fits in a few million points."""
    args = (Gaussian.from_scale, 0.8, 1.0, 1.0, 1e-6, 1e7)
    ext = pld_plan.extents(*args)
    np.testing.assert_allclose(ext.spread, 1.9418e-6, rtol=1e-3)
    assert (ext.win_hi - ext.win_lo).min() / (24.0 * math.sqrt(1e7)) > 20.0 * ext.spread.max()
    p = pld_plan.plan(*args, 1e-4)
    assert p.note is None and p.bin_width <= pld_plan.STEP_FRACTION * 1.9418e-6
    assert p.sizes.tail == pytest.approx(1e-17)
    assert max(p.sizes.grid, p.sizes.fft) <= 2**23
    # a use with a light tail keeps the default cut
    p = pld_plan.plan(Gaussian.from_scale, 2.0, 1.0, 1.0, 1e-5, 1e6, 1e-4)
    assert p.sizes.tail == 1e-40 and p.bin_width == pytest.approx(1e-4 / 2**8)


def test_spread_refinement_stops_within_the_fine_grid_limit(monkeypatch):
    """With :data:`.plan.FINE_GRID_LIMIT` at 2^21 the same plan takes the finest ``h 2^k``
    whose grid and FFT fit in it (coarser than the spread asks, finer than requested)."""
    monkeypatch.setattr(pld_plan, "FINE_GRID_LIMIT", 2**21)
    p = pld_plan.plan(Gaussian.from_scale, 0.8, 1.0, 1.0, 1e-6, 1e7, 1e-4)
    assert max(p.sizes.grid, p.sizes.fft) <= 2**21 and p.note is None
    assert 1e-4 / 2**10 < p.bin_width < 1e-4
    assert math.log2(1e-4 / p.bin_width) == int(math.log2(1e-4 / p.bin_width))
    ext = pld_plan.extents(Gaussian.from_scale, 0.8, 1.0, 1.0, 1e-6, 1e7, p.sizes.tail)
    assert max(pld_plan._needs(ext, p.bin_width / 2)[:2]) > 2**21  # the finest that fits


def test_window_is_the_gaussian_chernoff_window():
    """The sizing window of ``K`` Gaussian uses against the closed form.  The loss of
    ``N(0, s^2)`` at shift 1 is ``N(mu, 2 mu)``, ``mu = 1 / (2 s^2)``, so the Chernoff window
    of ``K`` uses at ``1e-30`` each side is ``K mu -+ sqrt(4 K mu log(1e30))`` exactly.  The
    window read off one use's moments on the ``t`` grid (the midpoint rule, the tilts on
    :data:`.LAMBDAS`) is within 1% of its half-width at every ``K``: a rule that rounded
    each bin's loss to its end would shift it by ``K`` half-bins (9% at ``K = 1e5``)."""
    for s, k in ((2.0, 10.0), (0.5, 3.0), (10.0, 1000.0), (30.0, 1e5)):
        mu = 1.0 / (2.0 * s * s)
        half = math.sqrt(4.0 * k * mu * math.log(1e30))
        ext = pld_plan.extents(Gaussian.from_scale, s, 1.0, 1.0, None, k)
        lo, hi = float(ext.win_lo[0]), float(ext.win_hi[0])
        assert abs(lo - (k * mu - half)) <= 0.01 * half, (s, k, lo)
        assert abs(hi - (k * mu + half)) <= 0.01 * half, (s, k, hi)
