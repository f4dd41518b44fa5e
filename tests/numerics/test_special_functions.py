"""Numerics core vs mpmath over the whole range, including extreme tails."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest

from dpjax import numerics as nm

mpmath.mp.dps = 60


def mp_log_Q(x):
    return mpmath.log(mpmath.erfc(mpmath.mpf(x) / mpmath.sqrt(2)) / 2)


def rel_err(got, ref):
    ref = mpmath.mpf(ref)
    return float(abs((mpmath.mpf(got) - ref) / ref)) if ref != 0 else abs(float(got))


X_GRID = [-40, -37.5, -20, -8, -5, -1, -1e-3, 0, 1e-8, 0.5, 1, 3, 8, 10, 20, 37, 38.5, 100, 1e3,
          1e4]


@pytest.mark.parametrize("x", X_GRID)
def test_log_Q_matches_mpmath(x):
    got = float(nm.log_Q(jnp.float64(x)))
    if x < 0:  # log Q(x) = log1p(-Q(-x)): evaluate so mpmath keeps the tiny Q(-x)
        ref = mpmath.log1p(-mpmath.erfc(-mpmath.mpf(x) / mpmath.sqrt(2)) / 2)
    else:
        ref = mp_log_Q(x)
    if abs(ref) < 1e-320:  # below the float64 range: -0
        assert got == 0.0
    else:
        # a few ulps times the condition number of exp(-x^2/2) for the far-left tail
        assert rel_err(got, ref) < 4e-16 * (10 + (x * x / 2 if x < 0 else 0))


def test_log_Q_fixes_log_ndtr_cancellation():
    # jax.scipy.special.log_ndtr(5) is off by ~1e-10 relative; ours is not.
    ref = mp_log_Q(-5)
    assert rel_err(float(nm.log_Q(-5.0)), ref) < 1e-15


@pytest.mark.parametrize("x", [-30.0, -3.0, 0.0, 2.0, 40.0, 1e4])
def test_log_mills_matches_mpmath(x):
    ref = mp_log_Q(x) + mpmath.mpf(x) ** 2 / 2 + mpmath.log(2 * mpmath.pi) / 2
    assert abs(float(nm.log_mills(x)) - float(ref)) < 1e-14 * max(1.0, abs(float(ref)))


@pytest.mark.parametrize(
    "a,h", [(0.0, 1e-6), (3.0, 1e-3), (37.0, 2.7e-4), (10.0, 5.0), (1e3, 1e-2)])
def test_log_mills_step_matches_mpmath(a, h):
    def lm(x):
        return mp_log_Q(x) + mpmath.mpf(x) ** 2 / 2
    ref = lm(mpmath.mpf(a) + mpmath.mpf(h)) - lm(a)
    assert rel_err(float(nm.log_mills_step(a, h)), ref) < 1e-12


def test_mills_ratio_through_the_erfcx_zero_window():
    """jax's erfcx returns 0 for x / sqrt 2 in ~[26.54, 26.64]: R(x) and the step of the
    Gaussian profile (h = 1 / 6.37, a Gaussian-tail flipped Huber's D) stay finite and
    accurate on a dense grid across x in [35, 40] (the step was NaN for a in ~[37.54, 37.68],
    so the profiles reported delta = 1 there)."""
    a = np.linspace(35.0, 40.0, 161)
    for h in (0.157, 1e-3):
        got = np.asarray(jax.jit(nm.log_mills_step)(a, jnp.full_like(a, h)))
        assert np.all(np.isfinite(got))
        for x, g in zip(a[::8], got[::8], strict=True):
            lo, hi = mpmath.mpf(x), mpmath.mpf(x) + mpmath.mpf(h)
            ref = (mp_log_Q(hi) + hi**2 / 2) - (mp_log_Q(lo) + lo**2 / 2)
            assert rel_err(float(g), ref) < 1e-12
    log_q = np.asarray(jax.jit(nm.log_Q)(a))
    assert np.all(np.isfinite(log_q)) and np.all(np.diff(log_q) < 0)


@pytest.mark.parametrize(
    "p", [1 - 1e-12, 0.999, 0.7, 0.5, 0.3, 1e-3, 1e-20, 1e-100, 1e-200, 1e-300, 3e-308]
)
def test_Q_inv_round_trips_in_mpmath(p):
    x = float(nm.Q_inv(p))
    # the exact inverse is within one ulp-scale step of x: Q(x) ~ p to ~1e-14 relative in log
    ref = mpmath.log(mpmath.mpf(p))
    slope = abs(float(mpmath.npdf(x) / (mpmath.erfc(x / mpmath.sqrt(2)) / 2)))
    tol = 1e-15 * (1 + slope * abs(x)) * 4
    assert abs(float(mp_log_Q(x) - ref)) <= tol * max(1.0, abs(float(ref)))


@pytest.mark.parametrize("log_p", [-1e-20, -1e-5, -0.5, -3.0, -700.0, -1000.0, -1e5, -1e7])
def test_log_Q_inv_beyond_float_range(log_p):
    x = float(nm.log_Q_inv(log_p))
    assert rel_err(float(mp_log_Q(x)), log_p) < 1e-13


def test_Q_inv_edges():
    out = np.asarray(nm.Q_inv(jnp.array([0.0, 1.0, 0.5])))
    assert out[0] == np.inf and out[1] == -np.inf and out[2] == 0.0


@pytest.mark.parametrize("x", [-1e-300, -1e-10, -0.1, -np.log(2), -1.0, -50.0, -800.0])
def test_log1mexp(x):
    ref = mpmath.log(-mpmath.expm1(mpmath.mpf(x)))
    assert rel_err(float(nm.log1mexp(x)), ref) < 4e-15


@pytest.mark.parametrize("x", [1e-300, 1e-20, 1e-8, 0.5, 0.6931471805599453, 1.0, 37.0, 700.0])
def test_log_expm1(x):
    # one log(e^x - 1) for the package (the truncated Laplace profile, the RDP moments' A - 1)
    log_expm1_host = nm.log_expm1_host
    # near x = log 2 the value crosses 0: absolute there (x - log 2 rounds), relative beyond
    ref = float(mpmath.log(mpmath.expm1(mpmath.mpf(x))))
    tol = 4e-15 * max(1.0, abs(ref))
    assert abs(float(nm.log_expm1(x)) - ref) <= tol
    assert abs(float(log_expm1_host(x)) - ref) <= tol
    assert float(nm.log_expm1(0.0)) == -np.inf and log_expm1_host(0.0) == -np.inf
    assert log_expm1_host(np.inf) == np.inf


def test_log1mexp_host_matches_the_traced_kernel():
    x = -np.geomspace(1e-300, 700.0, 401)
    np.testing.assert_allclose(nm.log1mexp_host(x), np.asarray(nm.log1mexp(jnp.asarray(x))),
                               rtol=1e-15)
    assert nm.log1mexp_host(0.0) == -np.inf


def test_logsubexp_logaddexp():
    for a, b in [(0.0, -1e-12), (5.0, 4.0), (-700.0, -800.0), (3.0, -np.inf)]:
        ref = mpmath.log(mpmath.exp(mpmath.mpf(a)) - mpmath.exp(mpmath.mpf(b)))
        assert rel_err(float(nm.logsubexp(a, b)), ref) < 1e-14
        ref = mpmath.log(mpmath.exp(mpmath.mpf(a)) + mpmath.exp(mpmath.mpf(b)))
        assert rel_err(float(nm.logaddexp(a, b)), ref) < 1e-15
    assert float(nm.logsubexp(1.0, 1.0)) == -np.inf
    assert np.isnan(float(nm.logsubexp(1.0, 2.0)))
    assert float(nm.logaddexp(-np.inf, -np.inf)) == -np.inf


def test_gradients_are_finite_where_the_value_is():
    g = jax.grad(lambda x: nm.log1mexp(x))
    assert np.isfinite(g(-1e-3)) and np.isfinite(g(-50.0))
    # double-where: the branch not taken must not poison the gradient
    assert np.isfinite(jax.grad(lambda a: nm.logaddexp(a, -jnp.inf))(1.0))
    assert np.isfinite(jax.grad(lambda b: nm.logsubexp(0.0, b))(-jnp.inf))
    for x in [-35.0, -5.0, 0.0, 5.0, 1e3]:
        ref = -float(mpmath.npdf(x) / (mpmath.erfc(x / mpmath.sqrt(2)) / 2))
        assert rel_err(float(jax.grad(nm.log_Q)(x)), ref) < 1e-12
    assert np.all(np.isfinite(jax.vmap(jax.grad(nm.log_Q_inv))(jnp.array([-1.0, -100.0]))))


@pytest.mark.parametrize(
    "a,b,eps", [(3.0, 4.0, 2.0), (-1.0, 0.5, 0.3), (10.0, 10.3, 3.045), (37.0, 37.0001, 0.0037)]
)
def test_log_hockey_stick(a, b, eps):
    q = lambda x: mpmath.erfc(mpmath.mpf(x) / mpmath.sqrt(2)) / 2
    ref = mpmath.log(q(a) - mpmath.exp(mpmath.mpf(eps)) * q(b))
    assert rel_err(float(nm.log_hockey_stick(a, b, eps)), ref) < 1e-9


def test_log_hockey_stick_nonpositive_is_minus_inf():
    assert float(nm.log_hockey_stick(1.0, 1.0, 0.5)) == -np.inf
    assert float(nm.log_hockey_stick(2.0, 1.0, 0.0)) == -np.inf


def test_bisection_status_and_vmap_fairness():
    target = jnp.array([0.25, 2.0, -1.0, 10.0])

    def pred(x):  # feasible below the target
        return x <= target

    res = nm.bisect_monotone(pred, good=jnp.zeros(4), bad=jnp.full(4, 5.0), num_iterations=60)
    status = np.asarray(res.status)
    assert list(status) == [
        nm.Status.OPTIMAL, nm.Status.OPTIMAL, nm.Status.INFEASIBLE, nm.Status.BRACKET_TOO_SMALL
    ]
    good = np.asarray(res.good)
    assert np.all(good[:2] <= np.asarray(target[:2]))  # feasible end returned
    assert np.allclose(good[:2], [0.25, 2.0], atol=1e-15)
    jitted = jax.jit(jax.vmap(lambda t: nm.bisect_monotone(lambda x: x <= t, 0.0, 5.0).good))
    assert np.allclose(jitted(target[:2]), good[:2])


def test_bisection_nan_status():
    res = nm.bisect_monotone(lambda x: jnp.where(x > 1, jnp.nan, x) <= 3.0, 0.0, 5.0)
    assert int(res.status) in (nm.Status.OPTIMAL, nm.Status.FAILED, nm.Status.INFEASIBLE)


def test_gauss_legendre_exact_for_polynomials():
    x, w = nm.gauss_legendre(8, -1.0, 3.0)
    for k in range(16):
        exact = (3.0 ** (k + 1) - (-1.0) ** (k + 1)) / (k + 1)
        assert abs(np.sum(w * x**k) - exact) < 1e-12 * 3.0**k
    with pytest.raises(ValueError, match="n must be"):
        nm.gauss_legendre(0)
    with pytest.raises(ValueError, match="lower < upper"):
        nm.gauss_legendre(4, 1.0, 1.0)


def test_integrate_panels_on_kinked_function():
    # |t| on [-1, 2] with the kink at a panel edge: exact
    val = nm.integrate_panels(jnp.abs, jnp.array([-1.0, 0.0, 2.0]), n=4)
    assert abs(float(val) - 2.5) < 1e-14


def test_logsumexp_host_is_scipys_answer_bit_for_bit():
    """The host log-sum-exp of the RDP moments returns ``scipy.special.logsumexp``'s answers
    bit for bit (the same algorithm for real input without weights), on arrays with ties at
    the maximum, ``-inf`` terms and slices, ``+inf`` terms, over every axis and keepdims."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(7)
    for trial in range(60):
        shape = tuple(int(n) for n in rng.integers(1, 12, size=1 + trial % 3))
        x = rng.normal(size=shape) * 10.0 ** rng.uniform(-3, 3)
        u = rng.uniform(size=shape)
        x[u < 0.25] = -np.inf
        x[u > 0.9] = np.max(np.where(np.isfinite(x), x, 0.0))  # ties at the top
        if trial % 7 == 0:
            x[u > 0.97] = np.inf
        axis = int(rng.integers(0, len(shape)))
        for keepdims in (False, True):
            want = logsumexp(x, axis=axis, keepdims=keepdims)
            got = nm.logsumexp_host(x, axis=axis, keepdims=keepdims)
            assert got.shape == want.shape and np.array_equal(got, want), (x, axis)
    assert nm.logsumexp_host(np.full((2, 3), -np.inf)).tolist() == [-np.inf, -np.inf]


def test_log_gamma_host_matches_mpmath():
    """``log Gamma`` by the C library's ``lgamma`` (no SciPy): within 4 ulps of mpmath at the
    integers of the RDP binomial expansions and at real arguments; poles give ``inf``."""
    x = np.concatenate([np.arange(1.0, 1101.0), [0.5, 1.5, 2.25, 10.1, 63.5, 1e3 + 0.3]])
    got = nm.log_gamma_host(x.reshape(-1, 2))
    assert got.shape == (x.size // 2, 2)
    ref = np.array([float(mpmath.loggamma(mpmath.mpf(v))) for v in x])
    err = np.abs(got.reshape(-1) - ref)
    assert np.all(err <= 4 * 2.0**-52 * np.maximum(np.abs(ref), 1.0)), x[err.argmax()]
    assert nm.log_gamma_host(np.array([0.0, -2.0])).tolist() == [np.inf, np.inf]


def test_log_binomial_host_matches_mpmath_within_the_callers_pad():
    """``log C(n, k)`` of the RDP moments' binomial expansions within 8 ulps of the three
    ``log Gamma`` terms' magnitudes (at most ``2 log Gamma(n + 1)``: the cancellation the
    callers pad for, ``64 u`` of it) at every ``k <= n``; the ``gammaln`` formula of SciPy
    agrees to the same scale."""
    from scipy.special import gammaln

    n = np.array([[2.0], [17.0], [256.0], [1024.0]])
    k = np.arange(0.0, 1025.0)[None, :]
    got = nm.log_binomial_host(n, k)
    old = gammaln(n + 1) - gammaln(k + 1) - gammaln(np.maximum(n - k, 0) + 1)
    pad = 2.0 * gammaln(n + 1) + 1.0
    valid = k <= n
    assert np.all(np.abs(got - old)[valid] <= 8 * 2.0**-52 * np.broadcast_to(pad, got.shape)[valid])
    for row, ni in enumerate([2, 17, 256, 1024]):
        for ki in sorted({0, 1, 2, 3, ni // 3, ni // 2, ni - 1, ni} & set(range(ni + 1))):
            ref = float(mpmath.log(mpmath.binomial(ni, ki)))
            assert abs(got[row, ki] - ref) <= 8 * 2.0**-52 * pad[row, 0], (ni, ki)
            terms = sum(abs(mpmath.loggamma(v + 1)) for v in (ni, ki, ni - ki))
            assert float(terms) <= nm.log_binomial_magnitude_host(float(ni)) * (1 + 1e-15)


def test_log_Q_host_matches_mpmath():
    """The NumPy twin of log_Q (no SciPy) over -40..1e6, across the erfc / series switch at
    ``25 sqrt 2``: a few ulps right of 0; left of 0, ``log1p(-Q(|x|))`` to a few ulps of
    ``|log Q(|x|)|`` relative (the rounding of ``log Q(|x|)`` that ``exp`` carries over)."""
    x = np.array(X_GRID + [25 * 2**0.5 - 1e-9, 25 * 2**0.5 + 1e-9, 1e6, -np.inf, np.inf])
    got = nm.log_Q_host(x.reshape(1, -1))[0]
    for xi, g in zip(x[:-2], got[:-2], strict=True):
        if xi < 0:
            ref = mpmath.log1p(-mpmath.erfc(-mpmath.mpf(xi) / mpmath.sqrt(2)) / 2)
            if abs(ref) < 1e-320:  # below the float64 range: -0
                assert g == 0.0
            else:
                assert rel_err(g, ref) < 4e-16 * (10 + xi * xi / 2), xi
        else:
            assert rel_err(g, mp_log_Q(xi)) < 1e-15, xi
    assert got[-2] == 0.0 and got[-1] == -np.inf
    assert np.isnan(nm.log_Q_host(np.nan))


@pytest.mark.parametrize("log_p", [-1e-20, -1e-5, -0.5, np.log(0.5), -3.0, -92.1, -700.0,
                                   -1e5, -1e7])
def test_log_Q_inv_host_round_trips_in_mpmath(log_p):
    """Q^{-1} of the grid ends, on the host (no SciPy): ``log Q`` of the answer is ``log p``
    to ~1e-13 in mpmath, as the traced :func:`log_Q_inv`."""
    x = float(nm.log_Q_inv_host(log_p))
    if log_p == np.log(0.5):
        assert abs(x) < 1e-15
    else:
        assert rel_err(float(mp_log_Q(x)), log_p) < 1e-13


def test_log_Q_inv_host_edges():
    out = nm.log_Q_inv_host(np.array([0.0, -np.inf, 1.0, np.nan]))
    assert out[0] == -np.inf and out[1] == np.inf and np.isnan(out[2]) and np.isnan(out[3])
