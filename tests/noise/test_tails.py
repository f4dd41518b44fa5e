"""Samplers that keep their tails: tail-exact uniforms, float32 inversion vs mpmath, KS, deep tails.

References: the exact uniform of a bit pattern (integers), mpmath closed forms of
each family's tail quantile at 50 digits, scipy's KS test against the family's
float64 cdf, and binomial counts.  The float32 paths run without x64 where a
user's training loop would.
"""

import functools

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
import scipy.stats
from _helpers import tiered

import dpjax
from dpjax.noise import OSGT, FlippedHuber, Gaussian, Laplace, Staircase, TruncatedLaplace
from dpjax.noise._tail import (
    _LAYOUT,
    TailWords,
    deep_capacity,
    random_words,
    tail_uniform,
    tail_uniform_from_bits,
    working_dtype,
)

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def _layout(dtype):
    return _LAYOUT[working_dtype(dtype)]


def _full(z: int, m: int, dtype, negative: bool = False) -> np.ndarray:
    """The ``E + mantissa_words`` words of the full scheme with ``z`` leading zeros and
    mantissa ``m`` (the deep path's layout)."""
    e, p, nm, _, _ = _layout(dtype)
    w = np.zeros(e + nm, np.uint32)
    if z < 32 * e:
        j, c = divmod(z, 32)
        w[j] = np.uint32(1 << (31 - c))
        w[j + 1 : e] = 0xDEADBEEF  # bits after the leading one do not matter
    if nm == 1:
        w[e] = (int(negative) << 31) | (m << (31 - p))
    else:
        w[e] = (int(negative) << 31) | ((m >> 32) << (31 - (p - 32)))
        w[e + 1] = m & 0xFFFFFFFF
    return w


def _words(patterns, dtype, size=None) -> TailWords:
    """:class:`TailWords` of a batch of ``(z, m, negative)`` patterns: ``z < D`` on the main
    path (leading one, then the mantissa, the sign in the last bit), deeper ones through
    the deep block (first word in ``main``, the rest in order of appearance).  With ``size``:
    padded to ``size`` lanes (shallow, U in [1/2, 1)) and ``size`` deep slots (the unused
    ones zero), the shapes of the deep-law batches, whose compiled programs it then reuses."""
    e, p, nm, mw, shallow = _layout(dtype)
    main = np.zeros((mw, size or len(patterns)), np.uint32)
    main[0, len(patterns) :] = 0x80000000
    deep = []
    for i, (z, m, neg) in enumerate(patterns):
        if z < shallow:
            hi = m if mw == 1 else m >> 32
            bits = p if mw == 1 else p - 32
            main[0, i] = (1 << (31 - z)) | (hi << (31 - z - bits)) | int(neg)
            if mw == 2:
                main[1, i] = m & 0xFFFFFFFF
        else:
            full = _full(z, m, dtype, neg)
            main[0, i] = full[0]
            deep.append(full[1:])
    block = np.zeros((e - 1 + nm, size or len(deep)), np.uint32)
    if deep:
        block[:, : len(deep)] = np.stack(deep, 1)
    return TailWords(jnp.asarray(main), jnp.asarray(block))


def _u(z: int, m: int, dtype):
    """The exact ``U = 2^-(z+1) (1 + (2m+1) 2^-(P+1))`` of a bit pattern (mpmath)."""
    e, p = _layout(dtype)[:2]
    return mp.mpf(2) ** -(min(z, 32 * e) + 1) * (1 + mp.mpf(2 * m + 1) / mp.mpf(2) ** (p + 1))


# --------------------------------------------------------------------------- references


def _ref_gauss(u, sigma):
    """``|x| = sigma Q^{-1}(u / 2)`` (mpmath)."""
    if u > 0.5:
        return sigma * mp.sqrt(2) * mp.erfinv(1 - u)
    g = lambda x: mp.log(mp.erfc(x / mp.sqrt(2))) - mp.log(u)  # noqa: E731
    return sigma * mp.findroot(g, mp.sqrt(-2 * mp.log(u)))


def _ref_fh(u, alpha, gamma):
    """Tail quantile of FH from eq. (10): Gaussian piece beyond b, Laplace piece inside."""
    b = mp.mpf(alpha) / gamma
    a_mass = (1 - mp.exp(-b * b)) / b if b > 0 else mp.mpf(0)
    b_mass = mp.sqrt(2 * mp.pi) * mp.erfc(b / mp.sqrt(2)) / 2 * mp.exp(-b * b / 2)
    z = 2 * (a_mass + b_mass)
    s_b = 2 * b_mass / z  # P(|T| > b)
    if u <= s_b:
        g = lambda y: (
            mp.log(mp.exp(-b * b / 2) * mp.sqrt(2 * mp.pi) * mp.erfc(y / mp.sqrt(2)) / z)
            - mp.log(u)
        )  # noqa: E501, E731
        return gamma * mp.findroot(g, mp.sqrt(-2 * mp.log(u)) + 1)
    return gamma * -mp.log((u * z / 2 - b_mass) * b + mp.exp(-b * b)) / b


def _ref_osgt(u, vartheta, rho):
    """``rho (Q^{-1}(u Q(k)) - k)``."""
    k = mp.mpf(vartheta) / rho
    target = mp.log(u) + mp.log(mp.erfc(k / mp.sqrt(2)) / 2)
    g = lambda x: mp.log(mp.erfc(x / mp.sqrt(2)) / 2) - target  # noqa: E731
    return rho * (mp.findroot(g, max(mp.sqrt(-2 * target), k + mp.mpf("1e-9"))) - k)


def _ref_tl(u, lam, bound):
    c = mp.mpf(bound) / lam
    return lam * -mp.log(mp.exp(-c) + u * (1 - mp.exp(-c)))


def _ref_staircase(u, decay, width, gamma):
    """GV staircase: period ``k`` from ``b^k``, then the offset inside it."""
    decay, gamma = mp.mpf(decay), mp.mpf(gamma)
    b = mp.exp(-decay)
    k = mp.floor(-mp.log(u) / decay)
    ms = (1 - u / b**k) / (1 - b) * (gamma + (1 - gamma) * b)
    return width * (k + (ms if ms <= gamma else gamma + (ms - gamma) / b))


FAMILIES = {
    "gaussian": (Gaussian(1.5), functools.partial(_ref_gauss, sigma=1.5)),
    "laplace": (Laplace(2.0), lambda u: -2 * mp.log(u)),
    "fh-0.5": (FlippedHuber(0.5, 1.0), functools.partial(_ref_fh, alpha=0.5, gamma=1.0)),
    "fh-8": (FlippedHuber(8.0, 1.0), functools.partial(_ref_fh, alpha=8.0, gamma=1.0)),
    "osgt": (OSGT(1.5, 1.0), functools.partial(_ref_osgt, vartheta=1.5, rho=1.0)),
    "osgt-large-k": (OSGT(200.0, 10.0), functools.partial(_ref_osgt, vartheta=200.0, rho=10.0)),
    "truncated-laplace": (
        TruncatedLaplace(3.333, 40.24),
        functools.partial(_ref_tl, lam=3.333, bound=40.24),
    ),
    "staircase": (
        Staircase(0.3, 1.0, 0.475),
        functools.partial(_ref_staircase, decay=0.3, width=1.0, gamma=0.475),
    ),
}

# (z, m) patterns: U near 1, U near 1/2, the main path's last binade and the first deep one,
# p = 2^-90, the floor binade, all-zero bits
_PATTERNS = {
    F32: [
        (7, 2**22 + 3),
        (8, 2**23 - 1),
        (0, 2**23 - 1),
        (0, 0),
        (1, 5_000_000),
        (20, 123_457),
        (89, 0),
        (127, 2**23 - 1),
        (128, 0),
    ],
    F64: [
        (0, 2**52 - 1),
        (0, 0),
        (5, 2**51 + 12345),
        (10, 2**52 - 5),
        (11, 7),
        (89, 0),
        (200, 2**40 + 7),
        (256, 0),
    ],
}


# One batch size for the draws of every test here: a program is compiled per family, shape,
# dtype and x64 mode (``_from_bits`` below; the library's ``compiled_sampler``), so the
# tests that draw N samples, or pad their bit patterns to N lanes, share it.
N = 20_000


@functools.partial(jax.jit, static_argnums=2)
def _from_bits_jit(noise, bits, dtype):
    return noise.from_bits(bits, dtype)


def _from_bits(name, bits, dtype):
    """``from_bits`` of a family of FAMILIES, its parameters traced: the two members of a
    family (``fh-0.5``, ``fh-8``; ``osgt``, ``osgt-large-k``) run one program."""
    return _from_bits_jit(FAMILIES[name][0], bits, dtype)


# --------------------------------------------------------------------------- the uniform


@pytest.mark.parametrize("dtype", [F32, F64])
def test_tail_uniform_is_exact_at_extreme_bit_patterns(dtype):
    pats = _PATTERNS[dtype] + [(0, 17), (1, 3), (31, 1), (32, 2), (33, 3)]
    pats = [(z, m, i % 2 == 1) for i, (z, m) in enumerate(pats)]
    t = jax.jit(tail_uniform, static_argnums=1)(_words(pats, dtype), dtype)
    eps = np.finfo(dtype).eps
    with mp.workdps(50):
        for i, (z, m, neg) in enumerate(pats):
            u = _u(z, m, dtype)
            assert bool(t.negative[i]) == neg
            assert abs(float(t.log_u[i]) / float(mp.log(u)) - 1) < 2 * eps
            assert abs(float(t.one_minus_u[i]) / float(1 - u) - 1) < 2 * eps
    full = tail_uniform_from_bits(jnp.asarray(_full(0, 0, dtype)), dtype)
    assert float(full.one_minus_u) == 0.5 - 2.0 ** -(_layout(dtype)[1] + 2)


def test_tail_floor_per_dtype():
    assert dpjax.noise.tail_floor(jnp.float32) == 2.0**-128
    assert dpjax.noise.tail_floor(jnp.bfloat16) == 2.0**-128
    assert dpjax.noise.tail_floor(jnp.float16) == 2.0**-128
    assert dpjax.noise.tail_floor(jnp.float64) == 2.0**-256
    with jax.enable_x64(False):  # float64 output is not available: computed as float32
        assert dpjax.noise.tail_floor() == 2.0**-128


@pytest.mark.parametrize("n", [1, 10, 1000, 10**6])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_deep_capacity_overflows_with_probability_below_the_floor(n, dtype):
    """Exact binomial tail (scipy's incomplete beta, fine down to 1e-300): P(X > C) <=
    tail_floor, and C is within 10% (or 3 slots) of the least such count."""
    c = deep_capacity(n, dtype)
    p = 2.0 ** -_layout(dtype).shallow
    floor = dpjax.noise.tail_floor(dtype)
    sf = scipy.stats.binom(n, p).sf  # P(X > k)
    assert c == n or sf(c) <= floor
    ks = np.arange(int(n * p), n + 1)
    least = ks[np.argmax(sf(ks) <= floor)]  # 1, 10, 51, 4748 in float32; 1, 10, 48, 954 in float64
    assert least <= c <= max(1.1 * least, least + 3)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_tail_uniform_law(dtype):
    """Binary exponent geometric (P(z = j) = 2^-(j+1)) across the main and deep paths, U
    uniform (KS), the deep samples uniform given U < 2^-D, 1 - U consistent, fair sign."""
    n = 400_000
    t = jax.jit(lambda k: tail_uniform(random_words(k, (n,), dtype), dtype))(jax.random.key(5))
    u = np.exp(np.asarray(t.log_u, np.float64))
    assert scipy.stats.kstest(u, "uniform").pvalue > 1e-3
    z = np.floor(-np.log2(u)).astype(int)
    counts = np.bincount(np.minimum(z, 12), minlength=13)
    expected = n * np.append(2.0 ** -(np.arange(12) + 1), 2.0**-12)
    assert scipy.stats.chisquare(counts, expected).pvalue > 1e-3
    shallow = _layout(dtype).shallow
    deep = u < 2.0**-shallow
    assert scipy.stats.kstest(u[deep] * 2.0**shallow, "uniform").pvalue > 1e-3
    rtol = 4 * np.finfo(dtype).eps
    np.testing.assert_allclose(np.asarray(t.one_minus_u, np.float64), 1 - u, rtol=rtol, atol=rtol)
    assert abs(np.mean(np.asarray(t.negative)) - 0.5) < 5 * 0.5 / np.sqrt(n)


# --------------------------------------------------------------------------- quantiles


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("dtype", [F32, F64])
def test_sampler_at_extreme_bits_matches_mpmath(name, dtype):
    """``from_bits`` at bit patterns down to the floor equals the mpmath tail quantile."""
    noise, ref = FAMILIES[name]
    pats = _PATTERNS[dtype]
    # padded to N lanes: the program of test_conditional_law_deep_in_the_tail (below)
    words = _words([(z, m, i % 2 == 0) for i, (z, m) in enumerate(pats)], dtype, size=N)
    got = np.asarray(_from_bits(name, words, dtype), np.float64)[: len(pats)]
    sd = float(np.sqrt(noise.variance))
    eps = np.finfo(dtype).eps
    with mp.workdps(50):
        want = np.array([float(ref(_u(z, m, dtype))) for z, m in pats])
    want = np.where(np.arange(len(pats)) % 2 == 0, -want, want)
    # measured: <= 2.5 eps relative (|x| > sd / 2) in float32 and float64
    np.testing.assert_array_less(np.abs(got - want), 4 * eps * np.maximum(np.abs(want), sd))


def test_float32_gaussian_reaches_beyond_5_5_sigma():
    """The reachable maximum (all-zero exponent bits) is 13.2 sigma; a float32 uniform: 5.42."""
    bits = _words([(128, 0, False)], F32)  # U = 2^-129 (1 + 2^-24): the smallest U
    draw = jax.jit(lambda b: [n.from_bits(b, jnp.float32) for n in (Gaussian(1.0), Laplace(1.0))])
    with jax.enable_x64(False):
        top, lap = (float(v[0]) for v in draw(bits))
    assert top > 13.0  # Q^{-1}(2^-130) = 13.16
    assert lap > 89.0  # 129 log 2 = 89.4


# --------------------------------------------------------------------------- laws

def _float32_draws(name, n=N):
    """Float32 draws without x64 (a user's training loop), through the library's program."""
    with jax.enable_x64(False):
        x = FAMILIES[name][0].sample(jax.random.key(17), (n,), jnp.float32)
    assert x.dtype == jnp.float32
    return np.asarray(x, np.float64)


@jax.jit
def _log_sf_jit(noise, x):
    return noise.log_sf(x)


def _log_sf(noise, x):
    """``noise.log_sf(x)`` in float64, ``x`` padded to a multiple of ``N`` points: one
    compiled program per family serves every call of this module's default tier."""
    x = np.asarray(x, np.float64).reshape(-1)
    m = -(-x.size // N) * N
    padded = np.concatenate([x, np.zeros(m - x.size)])
    return np.asarray(_log_sf_jit(noise, jnp.asarray(padded)))[: x.size]


@pytest.mark.parametrize("n", tiered(N, 1_000_000))
@pytest.mark.parametrize("name", list(FAMILIES))
def test_float32_ks_and_tail_frequencies(name, n):
    """KS against the float64 cdf (``cdf(v) = sf(-v)``: every family is symmetric) at level
    1e-3 on up to 100k draws, and two-sided tail counts within 5 binomial sd of ``n p``:
    both criteria hold at their level for any ``n``."""
    noise = FAMILIES[name][0]
    x = _float32_draws(name, n)
    assert np.all(np.isfinite(x))
    ks = scipy.stats.kstest(x[:100_000], lambda v: np.exp(_log_sf(noise, -v)))
    assert ks.pvalue > 1e-3
    # two-sided tail counts at moderate thresholds vs the float64 survival: within 5 sd
    thresholds = np.sqrt(float(noise.variance)) * np.array([1.0, 2.5, 4.0])
    for thr, log_sf in zip(thresholds, _log_sf(noise, thresholds), strict=True):
        p = 2 * float(np.exp(log_sf))
        if p < 1e-5:
            continue
        count = np.sum(np.abs(x) > thr)
        assert abs(count - p * x.size) < 5 * np.sqrt(p * x.size) + 1


def _deep_words(key, n, depth, dtype) -> np.ndarray:
    """Full-scheme words with the first ``depth >= 32`` bits zero: ``U ~ U(0, 2^-depth)``."""
    e, _, nm, _, _ = _layout(dtype)
    w = np.array(jax.random.bits(key, (e + nm, n), jnp.uint32))
    j, c = divmod(depth, 32)
    w[:j] = 0
    if c:
        w[j] &= np.uint32((1 << (32 - c)) - 1)
    return w


def _as_deep(full: np.ndarray, dtype) -> TailWords:
    """Every sample deep (first word zero): the main words, then the deep block."""
    mw = _layout(dtype).main_words
    main = np.concatenate([full[:1], np.zeros((mw - 1, full.shape[1]), np.uint32)])
    return TailWords(jnp.asarray(main), jnp.asarray(full[1:]))


_DEEP_CASES = [(k, F32, (40, 100)) for k in FAMILIES if k != "truncated-laplace"] + [
    (k, F64, (200,))
    for k in ("gaussian", "fh-0.5", "fh-8")  # the others: one formula
]  # N samples in all per case: N / 2 at each float32 depth, N at the float64 one


@pytest.mark.parametrize("name,dtype,depths", _DEEP_CASES)
def test_conditional_law_deep_in_the_tail(name, dtype, depths):
    """Given ``U < 2^-depth``, ``2^depth P(|T| > |x|)`` is uniform (KS): the law of the far
    tail itself, far below a float uniform's 2^-24.  (Truncated Laplace has no tail: its
    deep draws sit within float rounding of the bound.)"""
    noise, n = FAMILIES[name][0], N // len(depths)
    full = np.concatenate([_deep_words(jax.random.key(d), n, d, dtype) for d in depths], axis=1)
    x = _from_bits(name, _as_deep(full, dtype), dtype)
    log_sf = _log_sf(noise, np.abs(np.asarray(x, np.float64)))
    for i, depth in enumerate(depths):
        v = np.exp(log_sf[i * n : (i + 1) * n] + (1 + depth) * np.log(2.0))
        assert scipy.stats.kstest(v, "uniform").pvalue > 1e-3, depth


# --------------------------------------------------------------------------- dtypes, limits


def test_float32_draws_do_not_depend_on_x64():
    # the library's compiled sampler (N: the programs the law tests compile anyway)
    on = np.asarray(Gaussian(2.0).sample(jax.random.key(3), (N,), jnp.float32))
    with jax.enable_x64(False):
        off = np.asarray(Gaussian(2.0).sample(jax.random.key(3), (N,), jnp.float32))
    np.testing.assert_array_equal(on, off)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_16_bit_output(dtype):
    deep = _words([(128, 0, False)], F32)

    @jax.jit
    def draw(key):
        # the deepest Laplace(1e4) draw is 8.9e5: beyond float16's 65504, not bfloat16's range
        return Gaussian(1.0).sample(key, (10_000,), dtype), Laplace(1e4).from_bits(deep, dtype)

    with jax.enable_x64(False):
        x, big = draw(jax.random.key(0))
    assert x.dtype == dtype and big.dtype == dtype
    assert 0.95 < float(jnp.std(x.astype(jnp.float32))) < 1.05
    assert np.isinf(float(big[0])) == (dtype == jnp.float16)


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64])
def test_truncated_laplace_rounded_samples_stay_in_support(dtype):
    bound = 1.0006  # rounds *up* in float16 (1.00098) and bfloat16 (1.0078)
    noise = TruncatedLaplace(0.02, bound)  # c = 50: the deepest draws sit at the bound
    dt = working_dtype(dtype)
    deep = _words([(32 * _layout(dt).exponent_words, 0, s) for s in (False, True)], dt)
    x = np.asarray(jax.jit(noise.from_bits, static_argnums=1)(deep, dtype), np.float64)
    assert np.all(np.abs(x) <= bound) and np.all(np.abs(x) > 0.99)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 1e308 -> float32 inf
def test_flipped_huber_huge_alpha_is_the_laplace_limit():
    """FH(alpha, gamma^2) -> Laplace(gamma^2 / alpha); alpha = 1e308 overflows float32 to inf.

    Both families draw from the same key (the same random words) through the library's
    compiled samplers (parameters traced; in float32 the programs of the law tests)."""

    def both(alpha, gamma, key, dtype):
        a, g = np.dtype(dtype).type(alpha), np.dtype(dtype).type(gamma)
        scale = float(g * g / a)  # rounded in the working dtype, as the family computes it
        fh = FlippedHuber(alpha, gamma).sample(key, (N,), dtype)
        return fh, Laplace(scale).sample(key, (N,), dtype)

    with jax.enable_x64(False):
        noise = dpjax.noise.make("flipped-huber", alpha=1e308, gamma=1)
        x = noise.sample(jax.random.key(0), (N,), jnp.float32)
        assert np.all(np.asarray(x) == 0.0)  # true |x| ~ 1e-308: below float32's range
        for alpha in (1e5, 1e20, 3e38):
            fh, lap = both(alpha, 1.0, jax.random.key(1), jnp.float32)
            np.testing.assert_allclose(fh, lap, rtol=4e-7, atol=1e-44)
    for alpha in (1e5, 1e160, 1e300):
        fh, lap = both(alpha, 2.0, jax.random.key(2), jnp.float64)
        assert np.all(np.isfinite(np.asarray(fh)))
        np.testing.assert_allclose(fh, lap, rtol=1e-14)


def test_jit_vmap_over_parameters():
    # the loop runs the library's program (compiled by the flipped Huber limit test above)
    draw = lambda a: FlippedHuber(a, 2.0).sample(jax.random.key(4), (N,), jnp.float64)  # noqa: E731
    alphas = jnp.asarray([0.5, 1.0, 7.0])
    batched = jax.jit(jax.vmap(draw))(alphas)
    for i in range(3):
        np.testing.assert_allclose(batched[i], draw(float(alphas[i])), rtol=1e-15)


def test_vmap_over_keys_matches_the_loop():
    keys = jax.random.split(jax.random.key(8), 3)
    # the loop runs the library's program (N: compiled by test_float32_draws_do_not_depend_on_x64)
    draw = lambda k: Gaussian(1.0).sample(k, (N,), jnp.float32)  # noqa: E731
    batched = jax.jit(jax.vmap(draw))(keys)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], draw(keys[i]))


# --------------------------------------------------------------------------- the fast main path


@pytest.mark.parametrize(("n", "p", "size"), [(1, 0.5, 1), (33, 0.3, 40), (1000, 0.02, 10),
                                              (100_000, 2.0**-8, 600), (70, 1.0, 10), (10, 0.0, 4)])
def test_sparse_nonzero_is_jnp_nonzero(n, p, size):
    """The packed two-pass compaction of the deep lanes returns ``jnp.nonzero``'s indices,
    overflow (more set lanes than slots) and empty masks included."""
    from dpjax.noise._tail import sparse_nonzero

    mask = np.random.default_rng(n).random(n) < p
    got = jax.jit(sparse_nonzero, static_argnums=1)(jnp.asarray(mask), size)
    np.testing.assert_array_equal(np.asarray(got), np.flatnonzero(mask)[:size].tolist()
                                  + [n] * max(0, size - int(mask.sum())))


def _main_words(n, seed):
    """Float32 main-path words with every binade z = 0..8 (the last: overflowing deep lanes,
    which stay in [2^-9, 2^-8)), no deep slots, and the exact U of each (float64 holds it)."""
    rng = np.random.default_rng(seed)
    w0 = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    w0 >>= rng.integers(0, 10, size=n).astype(np.uint32)
    w = w0.astype(np.uint64)
    z = np.where(w == 0, 32, 31 - np.floor(np.log2(np.maximum(w, 1))).astype(int))
    zs = np.minimum(z, 8)
    m = (((w << (zs + 1).astype(np.uint64)) & 0xFFFFFFFF) >> 9).astype(np.float64)
    u = 2.0 ** -(zs + 1) * (1 + (2 * m + 1) * 2.0**-24)
    words = TailWords(jnp.asarray(w0[None]), jnp.zeros((4, 0), jnp.uint32))
    return words, u, (w0 & 1) == 1


@pytest.mark.parametrize("name", ["gaussian", "fh-0.5", "fh-8"])
def test_float32_main_path_is_as_accurate_as_the_deep_kernel(name):
    """The float32 main path (erfinv from w = -log(U (2 - U)) formed exactly, one log1p per
    branch) against the float64 deep kernel at the same exact U: within 4 float32 epsilons
    relative (of max(|x|, sd / 2)) over 200k random words of every main binade, U near 1
    included.  (Rounding 1 - U to float32 before erfinv, as jax.random.normal does, costs ~18
    epsilons near U = 2^-8.)"""
    noise, _ = FAMILIES[name]
    words, u, negative = _main_words(200_000, 3)
    with jax.enable_x64(False):
        got = np.asarray(jax.jit(lambda b: noise.from_bits(b, jnp.float32))(words), np.float64)
    with jax.enable_x64(True):
        wide = jax.tree_util.tree_map(lambda v: jnp.asarray(v, jnp.float64), noise)
        ref = np.asarray(wide.abs_isf(jnp.log(jnp.asarray(u)), jnp.asarray(1.0 - u), deep=True))
    ref = np.where(negative, -ref, ref)
    sd = float(np.sqrt(noise.variance))
    err = np.abs(got - ref) / np.maximum(np.abs(ref), sd / 2) / np.finfo(np.float32).eps
    assert err.max() < 4, (err.max(), u[np.argmax(err)])
