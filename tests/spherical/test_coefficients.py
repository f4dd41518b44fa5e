"""Spherical KL coefficients: measure identity, symmetry, Monte Carlo cell volumes, m = 1, costs."""

import math

import mpmath
import numpy as np
import pytest
from _helpers import shell_cell_frequencies
from scipy import integrate
from scipy.special import logsumexp

from dpjax.spherical import coefficients as co


def _dense(lw, n):
    rows = lw.shape[0]
    out = np.full((rows, rows), -np.inf)
    for i in range(rows):
        for d in range(2 * n + 1):
            j = i + d - n
            if 0 <= j < rows:
                out[i, j] = lw[i, d]
    return out


@pytest.mark.parametrize("m", [3, 4, 10, 31])
def test_rows_sum_to_shell_volume(m):
    n, rows = 12, 40
    lw = co.log_cell_volumes(m, n, rows)
    lv = co.log_shell_volumes(m, n, rows)
    # A_m sum_j gamma_ij = v_i (measure identity)
    assert np.max(np.abs(np.expm1(logsumexp(lw, axis=1) - lv))) < 2e-12
    lg = lw - co.log_A(m) if m != 10 else co.log_gamma(m, n, rows)
    fin = np.isfinite(lw)
    assert np.array_equal(np.isfinite(lg), fin)
    assert np.allclose(lg[fin] + co.log_A(m), lw[fin], rtol=0, atol=1e-12)


@pytest.mark.parametrize("m", [2, 10, 31])
def test_gemm_band_matches_elementwise(m):
    # the two-GEMM band (u = rho + theta, w = rho - theta separation) is the same quadrature
    # as the cell-by-cell path: equal up to round-off, same empty cells
    n, rows = 9, 33
    a = co.log_cell_volumes(m, n, rows, method="elementwise")
    b = co.log_cell_volumes(m, n, rows)
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    fin = np.isfinite(a)
    assert np.max(np.abs(a[fin] - b[fin])) < 1e-12


@pytest.mark.parametrize("m", [2, 3, 10])
def test_symmetric_and_banded(m):
    n, rows = 10, 30
    w = _dense(co.log_cell_volumes(m, n, rows), n)
    assert np.array_equal(np.isfinite(w), np.isfinite(w.T))
    fin = np.isfinite(w)
    assert np.max(np.abs(np.expm1(w[fin] - w.T[fin]))) < 1e-12
    i, j = np.nonzero(fin)
    assert np.all(np.abs(i - j) <= n)
    assert np.all(i + j >= n - 1)  # cells with rho + theta <= 1 everywhere have no volume


def test_m2_row_sums():
    n, rows = 10, 30
    lw = co.log_cell_volumes(2, n, rows)
    lv = co.log_shell_volumes(2, n, rows)
    assert np.max(np.abs(np.expm1(logsumexp(lw, axis=1) - lv))) < 1e-8


def test_m1_exact_kernel():
    n, rows = 5, 14
    lw = co.log_cell_volumes(1, n, rows)
    w = np.exp(_dense(lw, n))
    assert np.allclose(w.sum(axis=1)[: rows - n], 2.0 / n)
    # x in [i/n, (i+1)/n) -> |x - 1| shell; x in -[i/n, (i+1)/n) -> shell i + n
    for i in range(rows - n):
        x = np.array([(i + 0.5) / n, -(i + 0.5) / n])
        js = np.floor(np.abs(x - 1.0) * n).astype(int)
        for j in js:
            assert w[i, j] == pytest.approx(1.0 / n)


@pytest.mark.parametrize("m", [3, 10])
def test_monte_carlo_cell_volumes(m):
    n, rows = 4, 12
    lk = co.log_cell_volumes(m, n, rows) - co.log_shell_volumes(m, n, rows)[:, None]
    rng = np.random.default_rng(0)
    size = 40000
    for i in (0, 3, 5, 8):
        emp = shell_cell_frequencies(m, n, i, size, rng)
        p = np.exp(lk[i])
        sd = np.sqrt(p * (1 - p) / size) + 1e-12
        assert np.all(np.abs(emp - p) <= 5 * sd + 1e-4), (i, emp, p)


def test_shell_volumes_and_costs_vs_quadrature():
    m, n = 6, 7
    lv = co.log_shell_volumes(m, n, 20)
    vm = mpmath.pi ** (m / 2) / mpmath.gamma(m / 2 + 1)
    for i in (0, 1, 13):
        ref = vm * (mpmath.mpf(i + 1) ** m - mpmath.mpf(i) ** m) / mpmath.mpf(n) ** m
        assert math.exp(lv[i]) == pytest.approx(float(ref), rel=1e-13)
    lc = co.log_cost_coefficients(m, n, 20, power=1.5)
    lc2 = co.log_cost_coefficients(m, n, 20, radial_cost=lambda r: r**1.5)
    assert np.allclose(lc, lc2, atol=1e-12)
    for i in (0, 4, 19):
        val, _ = integrate.quad(lambda r: r**1.5 * m * float(vm) * r ** (m - 1), i / n, (i + 1) / n,
                                epsabs=0, epsrel=1e-13)
        assert math.exp(lc[i]) == pytest.approx(val, rel=1e-11)


def test_tail_sum_and_rows():
    m, n, N, r = 10, 8, 20, 0.7
    lv = lambda i: co.log_diff_powers(i, m)  # noqa: E731
    total, _ = co.log_tail_sum(lv, math.log(r), N)
    t = np.arange(1, 5000)
    assert total == pytest.approx(float(logsumexp(t * math.log(r) + lv(N + t))), abs=1e-12)
    M = co.tail_rows(m, n, N, r)
    t_cut = M - N - 1 - n  # first tail shell left out: N + t_cut, relative mass r^t v_{N+t} / v_N
    assert t_cut * math.log(r) + lv(np.array([N + t_cut]))[0] - lv(np.array([N]))[0] < -32
