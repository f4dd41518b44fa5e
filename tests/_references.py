"""Independent high-precision references for the closed-form privacy profiles (mpmath).

Each function takes the mechanism's float parameters *as given* (converted to
``mpf`` exactly, so the reference is the profile of the very floats dpjax was
handed) and evaluates the paper's formula directly, at the caller's working
precision (use ``mpmath.workdps(60)`` or more; the direct formulas cancel, so
the precision, not the formula, carries the accuracy).  Not a test module.
"""

import mpmath


def _mpf(*xs):
    return tuple(mpmath.mpf(float(x)) for x in xs)


def q(x):
    """``Q(x) = P(Z > x)``."""
    return mpmath.erfc(x / mpmath.sqrt(2)) / 2


def gaussian_delta(eps, sigma, sensitivity, compositions=1):
    r"""Balle & Wang 2018: ``Q(eps/mu - mu/2) - e^eps Q(eps/mu + mu/2)``,
    ``mu = sqrt(T) Delta / sigma``."""
    eps, sigma, sens = _mpf(eps, sigma, sensitivity)
    mu = mpmath.sqrt(compositions) * sens / sigma
    return max(q(eps / mu - mu / 2) - mpmath.exp(eps) * q(eps / mu + mu / 2), mpmath.mpf(0))


def laplace_delta(eps, scale, sensitivity):
    """1-D Laplace (App. F(b) of flipped-huber-mechanism): ``[1 - exp((eps - Delta/b)/2)]_+``."""
    eps, b, sens = _mpf(eps, scale, sensitivity)
    return max(1 - mpmath.exp((eps - sens / b) / 2), mpmath.mpf(0))


def truncated_laplace_delta(eps, scale, bound, sensitivity):
    r"""Truncated Laplace on ``[-A, A]``: ``int [g(t) - e^eps g(t + Delta)]_+ dt`` in closed form.

    The density is ``exp(-|t|/lam) / (2 lam D)``, ``D = 1 - e^{-c}``; the integrand is
    positive on ``(A - Delta, A]`` (shifted density 0) and, on ``[-A, A - Delta]``, where
    ``(|t + Delta| - |t|)/lam > eps``, i.e. ``t > t* = lam (eps - Delta/lam) / 2``.
    """
    eps, lam, a, sens = _mpf(eps, scale, bound, sensitivity)
    if sens >= 2 * a:
        return mpmath.mpf(1)
    norm = 2 * lam * (1 - mpmath.exp(-a / lam))

    def mass(lo, hi):  # int_lo^hi exp(-|t|/lam) dt / norm, each side in cancellation-free form
        if hi <= lo:
            return mpmath.mpf(0)
        if lo < 0 < hi:
            return mass(lo, mpmath.mpf(0)) + mass(mpmath.mpf(0), hi)
        if lo >= 0:
            return lam * (mpmath.exp(-lo / lam) - mpmath.exp(-hi / lam)) / norm
        return lam * (mpmath.exp(hi / lam) - mpmath.exp(lo / lam)) / norm

    top = mass(a - sens, a)  # shifted density vanishes there
    # on [-A, A - Delta] the loss (|t + Delta| - |t|) / lam exceeds eps iff t > t*
    t_star = max(lam * (eps - sens / lam) / 2, -a)
    if t_star >= a - sens:
        return top
    first = mass(t_star, a - sens)
    second = mpmath.exp(eps) * mass(t_star + sens, a)
    return top + max(first - second, mpmath.mpf(0))


def osgt_delta(eps, vartheta, rho, sensitivity):
    r"""OSGT profile (App. F(c) of flipped-huber-mechanism), ``varpi = Delta + 2 vartheta``."""
    eps, th, r, d = _mpf(eps, vartheta, rho, sensitivity)
    k = th / r
    varpi = d + 2 * th
    qk2 = 2 * q(k)
    if eps <= varpi * d / (2 * r * r):
        x = varpi / (2 * r)
        y = r * eps / varpi
        return 1 - (q(x - y) + mpmath.exp(eps) * q(x + y)) / qk2
    x = r * eps / d
    y = d / (2 * r)
    return (q(x - y) - mpmath.exp(eps) * q(x + y)) / qk2


def flipped_huber_delta(eps, alpha, gamma, sensitivity):
    """Eq. (13) of flipped-huber-mechanism exactly as printed (cancels: use >= 60 digits)."""
    eps, a, g, d = _mpf(eps, alpha, gamma, sensitivity)
    gauss = q(g * eps / d - d / (2 * g)) - mpmath.exp(eps) * q(g * eps / d + d / (2 * g))
    if a == 0:
        return max(gauss, mpmath.mpf(0))
    b = a / g
    omega = 2 * (mpmath.sqrt(2 * mpmath.pi) * q(b) + 2 / b * mpmath.sinh(b * b / 2))
    c = mpmath.sqrt(2 * mpmath.pi) / omega
    k = g / (a * omega) * mpmath.exp(a * a / (2 * g * g))
    nu1 = (max(d - a, 0) ** 2 + 2 * a * d) / (2 * g * g)
    nu2 = (d + 2 * a) * d / (2 * g * g)
    if eps < (d - 2 * a) * d / (2 * g * g):
        return (1 - c) + c * gauss
    if eps < min(2 * a - d, d) * a / (g * g):
        return (1 - mpmath.exp(eps)) / 2 + k * (
            1 + mpmath.exp(eps) - 2 * mpmath.exp(eps / 2 - a * d / (2 * g * g))
        )
    if (max(2 * a, d) ** 2 - 2 * a * d) / (2 * g * g) <= eps < nu1:
        r = mpmath.sqrt(2 * (g * g * eps + a * d))
        return (
            mpmath.mpf(1) / 2
            + k * (1 - mpmath.exp(a / (g * g) * (-a + r - d)))
            - mpmath.exp(eps) * c * q((r - a) / g)
        )
    if nu1 <= eps < nu2:
        r = mpmath.sqrt(2 * (g * g * eps - a * d))
        return (
            mpmath.mpf(1) / 2
            - k * (1 - mpmath.exp(a / (g * g) * (-a - r + d)))
            - mpmath.exp(eps) * c * q((r + a) / g)
        )
    return c * gauss


def _fh_rho(x, b):
    """``rho_b(x)``: ``b |x|`` inside ``[-b, b]``, ``(x^2 + b^2) / 2`` outside."""
    return b * abs(x) if abs(x) <= b else (x * x + b * b) / 2


def _fh_normaliser(b):
    b = mpmath.mpf(b)
    lap = (1 - mpmath.e ** (-b * b)) / b if b > 0 else mpmath.mpf(0)
    return 2 * (lap + mpmath.e ** (-b * b / 2) * mpmath.sqrt(2 * mpmath.pi) * mpmath.ncdf(-b))


def flipped_huber_delta_integral(eps, b, d):
    """int [g(t) - e^eps g(t + D)]_+ dt for FH(b, 1), breakpoints at every kink of the integrand."""
    eps, b, d = mpmath.mpf(eps), mpmath.mpf(b), mpmath.mpf(d)

    def zeta(t):  # log g(t) - log g(t + D), non-decreasing
        return _fh_rho(t + d, b) - _fh_rho(t, b)

    lo, hi = -b - d - 10 - eps / d, b + d + 10 + eps / d
    for _ in range(120):  # the zero crossing of the integrand (where zeta = eps)
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if zeta(mid) >= eps else (mid, hi)
    t1 = hi
    kinks = sorted(k for k in {-b, mpmath.mpf(0), b, -b - d, -d, b - d} if k > t1)
    last = kinks[-1] if kinks else t1
    scale = 1 / max(abs(last), b, mpmath.mpf(1))
    pts = [t1] + kinks + [last + scale * m for m in (1, 4, 16, 64)] + [mpmath.inf]
    r0 = _fh_rho(t1, b)

    def integrand(t):
        val = mpmath.e ** (r0 - _fh_rho(t, b)) - mpmath.e ** (eps + r0 - _fh_rho(t + d, b))
        return max(val, 0)

    return mpmath.quad(integrand, pts) * mpmath.e ** (-r0) / _fh_normaliser(b)


def staircase_density(decay, gamma):
    """The width-1 staircase density (Geng & Viswanath 2016) in mpmath."""
    e, gm = mpmath.mpf(decay), mpmath.mpf(gamma)
    b = mpmath.exp(-e)
    a = (1 - b) / (2 * (gm + (1 - gm) * b))

    def g(t):
        at = abs(t)
        k = mpmath.floor(at)
        return a * b**k * (1 if at - k < gm else b)

    return g


def staircase_delta_shift(eps, decay, gamma, d):
    """Direct integral of ``[g(t) - e^eps g(t + d)]_+`` (width 1): the integrand is piecewise
    constant, so cutting at every jump of g and of g(. + d) over a window holding all but
    ``e^-80`` of the mass and summing value x length is the exact integral."""
    with mpmath.workdps(30):
        eps, gm, d = mpmath.mpf(eps), mpmath.mpf(gamma), mpmath.mpf(d)
        g = staircase_density(decay, gamma)
        n = int(80 / decay) + 5
        pts = set()
        for k in range(-n, n + 1):
            for p in (k, k + gm, k - gm):
                pts.update((p, p - d))
        pts = sorted(pts)
        total = mpmath.mpf(0)
        for lo, hi in zip(pts[:-1], pts[1:], strict=True):
            v = g((lo + hi) / 2) - mpmath.exp(eps) * g((lo + hi) / 2 + d)
            if v > 0:
                total += v * (hi - lo)
        return total


def log_or_neg_inf(x):
    """``log x`` as a float, ``-inf`` for 0."""
    return float(mpmath.log(x)) if x > 0 else float("-inf")


def subsampled_gaussian_delta_bromwich(eps, sigma, q, compositions, adjacency, x_cut=None):
    r"""``delta(eps)`` of ``K`` Poisson-subsampled uses of ``N(0, sigma^2)`` (sensitivity 1)
    by inverting the ``K``-fold moment generating function along a vertical line (NumPy
    float64; an independent check of the PLD engine at huge ``K``, not a certified bound).

    .. math:: \delta(\epsilon) = \frac{1}{2\pi}\int_{-\infty}^{\infty}
              \frac{e^{K\kappa(c + it) - (c + it)\epsilon}}{(c + it)(c + it + 1)}\,dt
              + K\,P(x > x_{cut})

    (the two-sided Laplace transform of ``(1 - e^{eps - s})_+`` is ``e^{-lambda eps} /
    (lambda (lambda + 1))``), ``kappa(lambda) = log E_P[e^{lambda L}; x <= x_cut]`` by the
    trapezoidal rule in ``x`` on 200001 points under ``Q = N(0, sigma^2)``, with ``L = log(1 -
    q + q e^{(2x - 1) / (2 sigma^2)})`` (``remove``: ``E_Q[e^{(lambda + 1) L}]``) or ``-L``
    (``add``: ``E_Q[e^{-lambda L}]``); ``c`` the saddle point on a real grid, ``t`` over 12
    standard deviations of the tilted sum.  The mass above ``x_cut`` (``remove`` only, where
    the loss has a heavy upper tail and its moments explode at large ``lambda``) is
    counted at ``+infinity``.  At ``q = 1`` it matches the closed form of ``K`` Gaussian
    uses to ``1e-9`` relative.  It is not reliable for much heavier tails: at ``(sigma, q, K)
    = (0.5, 1e-6, 10^5)`` it gave ``8.1e-4`` at ``eps = 0.00837``, where dp_accounting's
    pessimistic connect-the-dots (interval ``1e-5``, an upper bound) gives ``1.05e-5``; it is
    used at ``sigma >= 0.8``.
    """
    import numpy as np
    from scipy.special import log_ndtr

    x_cut = 40.0 * sigma if x_cut is None else x_cut
    x = np.linspace(-40.0 * sigma, x_cut, 200_001)
    step = x[1] - x[0]
    loss = np.log1p(q * np.expm1((2.0 * x - 1.0) / (2.0 * sigma**2)))
    log_w = -0.5 * (x / sigma) ** 2 - np.log(sigma * np.sqrt(2.0 * np.pi)) + np.log(step)
    log_w[[0, -1]] += np.log(0.5)

    def kappa(lam):
        out = []
        for v in np.atleast_1d(np.asarray(lam, complex)):
            z = ((v + 1.0) * loss if adjacency == "remove" else -v * loss) + log_w
            top = np.max(z.real)
            out.append(top + np.log(np.sum(np.exp(z - top))))
        return np.array(out)

    k = float(compositions)
    cs = np.geomspace(1e-2, 1e5, 300)
    c = cs[np.argmin(k * kappa(cs).real - cs * eps - np.log(cs * (cs + 1.0)))]
    d = 1e-4 * c
    curv = k * (kappa(c + d).real - 2.0 * kappa(c).real + kappa(c - d).real)[0] / d**2
    t = np.linspace(-12.0, 12.0, 1201) / np.sqrt(curv)
    lam = c + 1j * t
    top = k * kappa(c).real[0] - c * eps
    f = np.exp(k * kappa(lam) - lam * eps - top) / (lam * (lam + 1.0))
    out = np.trapezoid(f.real, t) / (2.0 * np.pi) * np.exp(top)
    if adjacency == "remove":
        tail = np.logaddexp(
            np.log1p(-q) + log_ndtr(-x_cut / sigma), np.log(q) + log_ndtr(-(x_cut - 1.0) / sigma)
        ) if q < 1.0 else log_ndtr(-(x_cut - 1.0) / sigma)
        out += k * np.exp(tail)
    return float(out)
