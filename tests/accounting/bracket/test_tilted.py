"""The tilted optimistic lower end (:mod:`dpjax.accounting.bracket.tilted`).

Reference: the ``T``-fold Gaussian mechanism is the Gaussian with ``mu = sqrt(T) / sigma``,
``delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` (Balle & Wang 2018, Thm 8;
Dong, Roth & Su 2019, Cor. 2), evaluated and inverted with mpmath at 60 digits.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from _helpers import tiered

from dpjax.accounting import bracket
from dpjax.accounting.pld import engine
from dpjax.accounting.pld.discretise import discretise_pair
from dpjax.accounting.pld.subsample import adjacency_pairs
from dpjax.accounting.pld.tilted.fold import tilted_self_compose
from dpjax.noise import Gaussian

jax.config.update("jax_enable_x64", True)

SIGMA, T, H = 1.0, 4, 2e-3  # small grid: fast kernels; mu = sqrt(4) / 1.0 = 2
#: the closed-form bracket's deltas: by default one per tilted program (1e-12 and 1e-30 share
#: one with the 1e-6 of :func:`test_tilted_lower_below_truth_where_plain_valid`, 1e-300 has
#: its own); the slow tier adds 1e-100 (a fourth program)
DELTAS = (1e-12, 1e-30, 1e-300)
DELTAS_SLOW = (1e-12, 1e-30, 1e-100, 1e-300)


def gaussian(scale, shape):
    return Gaussian(scale)


def exact_epsilon(delta, mu):
    """Closed-form epsilon(delta) of the Gaussian with ``mu`` (mpmath, log space)."""
    mp.mp.dps = 60
    m = mp.mpf(mu)

    def log_delta(e):
        return mp.log(mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2))

    target = mp.log(mp.mpf(delta))
    lo, hi = mp.mpf(0), mp.mpf(400)
    for _ in range(200):  # bisection: delta(eps) is decreasing
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if log_delta(mid) > target else (lo, mid)
    return float(lo)


@functools.cache
def brackets(deltas):
    d = np.array(deltas)
    lo = bracket.epsilon_lower(gaussian, SIGMA, 0.0, 1.0, d, compositions=T, bin_width=H)
    # the upper end (:mod:`.pld.tilted`) at 1e-30 only: one more compile per tilt level
    up = np.full(d.shape, np.inf)
    at = deltas.index(1e-30)
    up[at] = engine.epsilon(gaussian, SIGMA, 0.0, 1.0, d[[at]], compositions=T, bin_width=H)[0]
    return np.asarray(lo), np.asarray(up)


@pytest.mark.parametrize("deltas", tiered(DELTAS, DELTAS_SLOW))
def test_bracket_contains_closed_form_down_to_1e300(deltas):
    lo, up = brackets(deltas)
    mu = np.sqrt(T) / SIGMA
    for d, lo_d, up_d in zip(deltas, lo, up, strict=True):
        ref = exact_epsilon(d, mu)
        assert lo_d <= ref <= up_d, (d, lo_d, ref, up_d)
        # each use rounds the loss down by < h (optimistic grid), so the optimistic
        # composition's epsilon is >= the true one - T h; one more bin for reading the grid
        # and one for the subtracted errors: (T + 2) h
        assert ref - lo_d <= (T + 2) * H, (d, ref - lo_d)


def test_tilted_lower_below_truth_where_plain_valid():
    d = np.array([1e-6])
    args = engine.scalar_args(SIGMA, 0.0, 1.0, None, T)
    tilted = bracket.tilted_epsilon_lower(gaussian, args, d, H, False)
    plain = bracket.epsilon_lower(gaussian, SIGMA, 0.0, 1.0, d, compositions=T, bin_width=H)
    ref = exact_epsilon(1e-6, np.sqrt(T) / SIGMA)
    assert 0.0 < tilted[0] <= ref
    assert plain[0] <= ref
    # both read the same optimistic composition: within a few bins of each other
    assert abs(tilted[0] - plain[0]) <= 3 * H


@functools.partial(jax.jit, static_argnames="h")  # one program (op-by-op: some 100)
def _optimistic_one(sigma, h=1e-2):
    # one use's losses span about +-11 (tails to 1e-60): 4096 bins of 1e-2 hold them
    pair = adjacency_pairs(Gaussian(sigma), 1.0, None, False, 1e-60)[0]
    low = jnp.floor(pair.loss(pair.t_lo) / h).astype(jnp.int64) - 1
    return discretise_pair(pair, h, low, 4096, False)


def test_fails_closed_down_on_nan_and_pessimistic():
    # jitted: one compiled program each (op-by-op dispatch compiled some 200 small ones)
    t = jax.jit(lambda one: tilted_self_compose(one, 4.0, 8192, 1.0))(_optimistic_one(SIGMA))
    bound = jax.jit(lambda t: bracket.epsilon_lower_of_tilted(t, 1e-6, 4.0))
    good = bound(t)
    # 4-fold: mu = 2 / sigma; the lower end sits below the closed form, within (4 + 2) h
    ref = exact_epsilon(1e-6, 2.0 / SIGMA)
    assert ref - 6e-2 <= float(good) <= ref, (float(good), ref)
    bad = t._replace(log_scale=jnp.nan)
    assert float(bound(bad)) == 0.0
    bad_pmf = t._replace(pld=dataclasses.replace(t.pld, pmf=t.pld.pmf.at[3].set(jnp.nan)))
    assert float(bound(bad_pmf)) == 0.0
    pess = t._replace(pld=dataclasses.replace(t.pld, pessimistic=True))
    assert float(bound(pess)) == 0.0


#: ``(q, T, h)`` of the Poisson-subsampled Gaussian (sigma 1) in the default tier, and the deltas
#: asked of it: one computation (three tilted programs: the 1e-8 .. 1e-20 level and the 1e-100
#: one) serves :func:`test_subsampled_lower_between_plain_and_upper` and
#: :func:`test_subsampled_lower_end_is_tight_at_1e_100`
SUBSAMPLED = (0.05, 100, 1e-3)
DEEP = (1e-8, 1e-12, 1e-20, 1e-100)


@functools.cache
def subsampled_ends(q, steps, h, deltas):
    """``(lower, upper, plain lower)`` ends of ``steps`` uses of the Gaussian (sigma 1)
    subsampled at ``q``, at each of ``deltas``."""
    d = np.array(deltas)
    lo = bracket.epsilon_lower(gaussian, 1.0, 0.0, 1.0, d, steps, q, h)
    up = engine.epsilon(gaussian, 1.0, 0.0, 1.0, d, steps, q, h)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(engine, "TILT_BELOW", 0.0)  # the plain lower end alone
        plain = bracket.epsilon_lower(gaussian, 1.0, 0.0, 1.0, d, steps, q, h)
    return lo, up, plain


@pytest.mark.parametrize(
    "q, steps, h, deltas",
    [
        (*SUBSAMPLED, DEEP),
        pytest.param(0.01, 300, 2e-3, (1e-8, 1e-12, 1e-20), marks=pytest.mark.slow),
    ],
)
def test_subsampled_lower_between_plain_and_upper(q, steps, h, deltas):
    lo, up, plain = subsampled_ends(q, steps, h, deltas)
    assert np.all(lo <= up), (lo, up)
    assert np.all(lo >= plain), (lo, plain)
    # below the plain floor (~1e-12) the tilted end says more; at the deepest only it does
    assert lo[-1] > plain[-1], (lo, plain)


def test_lower_tilts_refine_the_saddle_ladder():
    """:func:`lower_tilts` tries the upper end's two tilts, the next two smaller steps of
    the ladder and points between the first three (geometric thirds), all inside their
    range."""
    from dpjax.accounting.pld._pld import LAMBDAS
    from dpjax.accounting.pld.tilted.fold import saddle_lambdas

    log_mgf = 50.0 * jnp.asarray(LAMBDAS) * (jnp.asarray(LAMBDAS) + 1.0) / 2.0 * 0.01
    upper = np.asarray(saddle_lambdas(log_mgf, 1e-30, True))
    base = np.asarray(saddle_lambdas(log_mgf, 1e-30, True, (0, -1, -2, -3)))
    tilts = np.asarray(bracket.lower_tilts(log_mgf, 1e-30))
    assert tilts.shape == (8,)
    np.testing.assert_array_equal(tilts[:4], base)
    np.testing.assert_array_equal(tilts[:2], upper)
    assert np.all(np.diff(base) < 0)
    assert np.all((tilts[4:] < base[0]) & (tilts[4:] > base[2]))


# the gap is asserted in bins: by default at h = 1e-3 (smaller grids, cheaper compiles; the
# computation shared with test_subsampled_lower_between_plain_and_upper), at 1e-4 under the
# slow marker
@pytest.mark.parametrize(
    "h, deltas", [(1e-3, DEEP), pytest.param(1e-4, (1e-100,), marks=pytest.mark.slow)]
)
def test_subsampled_lower_end_is_tight_at_1e_100(h, deltas):
    """Poisson-subsampled Gaussian (sigma 1, q 0.05, T 100) at delta = 1e-100: the lower end
    sits within ``T h`` of the engine's upper end (with the four saddle tilts alone it was
    38.15 against 47.76 at h = 1e-4: the tilt above the saddle wraps too much tilted mass
    down, the one below leaves the signal under the FFT round-off)."""
    q, steps = SUBSAMPLED[:2]
    assert deltas[-1] == 1e-100
    lo, up, _ = subsampled_ends(q, steps, h, deltas)
    low, up = float(lo[-1]), float(up[-1])
    assert np.isfinite(up)
    assert up - steps * h <= low <= up
