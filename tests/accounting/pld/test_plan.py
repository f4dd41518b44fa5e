"""The engine's size ladder (:func:`dpjax.accounting.pld.plan.ladder`): every size a fast FFT
length, never below what is needed, at most a third (a fifth above ``2^20``) above it."""

import numpy as np

from dpjax.accounting.pld.plan import FINE_LADDER_ABOVE, _ladder_cap, ladder


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
