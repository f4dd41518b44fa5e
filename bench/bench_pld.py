"""PLD engine vs dp-accounting (and prv-accountant) in the same run: accuracy and time ratios.

    python bench/bench_pld.py          # cases (i)-(iii)
    python bench/bench_pld.py --fh     # also Sec. V-B of flipped-huber-mechanism (slow)

(i)   epsilon at delta = 1e-5, DP-SGD sigma = 1, q = 0.01, T = 1000 (converged 1.828237);
      plus delta = 1e-14, 1e-15, 1e-30 (dp-accounting: 9.34 / inf).
(ii)  delta at epsilon = 1 for 20-fold Laplace(b = 10) (true value in [2.294270e-3, 2.294336e-3]).
(iii) calibrate sigma for q = 0.01, T = 1000 to (epsilon = 2, delta = 1e-5)
      (dp-accounting ~0.959103).

Equal resolution: both engines use pessimistic connect-the-dots with the same loss bin
width (dp-accounting's ``value_discretization_interval``).  dpjax is timed after a warm-up
(compiled), ``block_until_ready``; the cold time (with compilation) is printed too.
dpjax's values are certified upper bounds (window cuts, FFT round-off bounded and added).

Measured 2026-11-22 on the 2-core CPU sandbox (jax 0.10.2, load average ~2, warm):

====  =====================================  ==================  =========  ==========
case  dpjax (certified)                      dp-accounting       time       ratio
====  =====================================  ==================  =========  ==========
(i)   1.828244; 5.325 / 5.682 / 10.083 at     1.828244; 8.579 /   0.054 s /  7.6x
      delta 1e-14 / 1e-15 / 1e-30             inf / inf           0.410 s    (prv 120x)
(ii)  2.2943364e-3                            2.2943364e-3        0.007 s    1.4x
(iii) sigma 0.9591032                         0.9591039           0.178 s /  30.2x
                                                                  5.387 s
====  =====================================  ==================  =========  ==========

(iii) is a coarse-grid Illinois search (bin width 16 h) plus four evaluations at h
(:mod:`dpjax.numerics.roots`); dp-accounting bisects at h.  Under heavy load
(load average 4-5) the same run gave 13.7x: XLA's two threads suffer more from
contention than dp-accounting's single NumPy thread.
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import dp_accounting  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as pldm  # noqa: E402

from dpjax.accounting.pld import engine  # noqa: E402
from dpjax.accounting.rdp import gaussian_rdp_sigma  # noqa: E402
from dpjax.calibration import scale_search  # noqa: E402
from dpjax.noise import Gaussian, Laplace  # noqa: E402

H = 1e-4


def timed(fn, repeat=1):
    t = time.perf_counter()
    for _ in range(repeat):
        out = fn()
        jax.block_until_ready(out)
    return out, (time.perf_counter() - t) / repeat


def case_i():
    print("\n(i) DP-SGD sigma=1, q=0.01, T=1000: epsilon(delta)")
    deltas = np.array([1e-5, 1e-14, 1e-15, 1e-30])

    def ours():
        return engine.epsilon(Gaussian.from_scale, 1.0, 0.0, 1.0, deltas, 1000, 0.01, H)

    _, cold = timed(ours)
    eps, warm = timed(ours, 2)

    def peer():
        p = pldm.from_gaussian_mechanism(
            1.0, value_discretization_interval=H, sampling_prob=0.01, use_connect_dots=True
        ).self_compose(1000)
        return np.array([p.get_epsilon_for_delta(d) for d in deltas])

    ref, t_ref = timed(peer)
    print(f"  {'delta':>8} {'dpjax (certified)':>18} {'dp-accounting':>14}")
    for d, a, b in zip(deltas, eps, ref, strict=True):
        print(f"  {d:8.0e} {a:18.6f} {b:14.6f}")
    print(f"  dpjax - 1.828237 = {eps[0] - 1.828237:+.2e} (acceptance: certified, within 1e-3)")
    print(
        f"  time: dpjax {warm:.3f} s warm ({cold:.1f} s cold), dp-accounting {t_ref:.3f} s, "
        f"ratio {t_ref / warm:.1f}x"
    )
    try:
        from prv_accountant.dpsgd import DPSGDAccountant

        def prv():
            acc = DPSGDAccountant(
                noise_multiplier=1.0,
                sampling_probability=0.01,
                eps_error=1e-3,
                delta_error=1e-9,
                max_steps=1000,
            )
            return np.array(acc.compute_epsilon(num_steps=1000, delta=1e-5))

        (lo, est, hi), t_prv = timed(prv)
        print(
            f"  prv-accountant: {est:.6f} in [{lo:.6f}, {hi:.6f}], {t_prv:.2f} s "
            f"(ratio {t_prv / warm:.1f}x); delta < 1e-12 refused by design"
        )
    except ImportError:
        print("  prv-accountant: not installed")


def case_ii():
    print("\n(ii) 20-fold Laplace(b=10): delta(eps=1)")

    def ours():
        return engine.profile(Laplace.from_scale, 10.0, 0.0, 1.0, np.array([1.0]), 20, None, H)

    _, cold = timed(ours)
    d, warm = timed(ours, 3)

    def peer():
        p = pldm.from_laplace_mechanism(10.0, 1.0, value_discretization_interval=H)
        return p.self_compose(20).get_delta_for_epsilon(1.0)

    ref, t_ref = timed(peer)
    inside = 2.294270e-3 <= d[0] <= 2.294336e-3 * (1 + 1e-4)
    print(f"  dpjax {d[0]:.7e} (in bracket within 1e-4 rel: {inside}), dp-accounting {ref:.7e}")
    print(
        f"  time: dpjax {warm:.3f} s warm ({cold:.1f} s cold), dp-accounting {t_ref:.3f} s, "
        f"ratio {t_ref / warm:.1f}x"
    )


def case_iii():
    print("\n(iii) calibrate sigma: q=0.01, T=1000, (eps=2, delta=1e-5)")
    from dpjax.calibration.gaussian import sigma_gaussian

    def ours():
        guess = gaussian_rdp_sigma(2.0, 1e-5, 0.01, 1000)
        full = float(np.asarray(sigma_gaussian(2.0, 1e-5, np.sqrt(1000.0))[0]))
        return scale_search.calibrate_scale(
            Gaussian.from_scale,
            0.0,
            1.0,
            2.0,
            1e-5,
            1000,
            0.01,
            H,
            upper=min(1.02 * guess, 1.02 * full),
            lower=0.7 * guess,
            fallback_upper=1.02 * full,
        ).scale

    _, cold = timed(ours)
    sigma, warm = timed(ours, 2)

    def peer():
        def acc():
            return dp_accounting.pld.PLDAccountant(value_discretization_interval=H)

        def event(s):
            return dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(s)), 1000
            )

        return dp_accounting.calibrate_dp_mechanism(
            acc, event, 2.0, 1e-5, dp_accounting.ExplicitBracketInterval(0.5, 2.0), tol=1e-6
        )

    ref, t_ref = timed(peer)
    print(
        f"  dpjax sigma {float(sigma):.7f} (certified), dp-accounting {ref:.7f}, "
        f"rel diff {float(sigma) / ref - 1:+.2e} (vs 0.959103: {float(sigma) / 0.959103 - 1:+.2e})"
    )
    print(
        f"  time: dpjax {warm:.3f} s warm ({cold:.1f} s cold), dp-accounting {t_ref:.3f} s, "
        f"ratio {t_ref / warm:.1f}x (acceptance: >= 20x)"
    )


def case_fh():
    print("\n(iv) flipped-huber-mechanism Sec. V-B: K=5, eps=0.3, delta=1e-8, Delta=1")
    from dpjax.calibration.flipped_huber_kdim import calibrate_flipped_huber_exact
    from dpjax.reproduce.flipped_huber_kdim import delta_at_variance

    t = time.perf_counter()
    alpha, gamma, var, dat, ok = calibrate_flipped_huber_exact(0.3, 1e-8, 5, 1.0)
    print(
        f"  certified least variance {float(var):.3f} at alpha={float(alpha):.4f}, "
        f"gamma={float(gamma):.4f} (b={float(alpha / gamma):.3f}), delta_at={float(dat):.3e}, "
        f"certified={bool(ok)}, {time.perf_counter() - t:.0f} s"
    )
    print(
        f"  Laplace pure DP 2 (K/eps)^2 = {2 * (5 / 0.3) ** 2:.3f}; paper: 502 (N&S), 557 (suff.)"
    )
    print("  at the paper's variance 502: delta(0.3) bracket [optimistic, pessimistic] per shape")
    for b, a, g, lo, hi in delta_at_variance(502.0, 5, 0.3)["rows"]:
        print(f"    b={b:5.2f} alpha={a:9.3f} gamma={g:8.3f}: [{lo:.4e}, {hi:.4e}]")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fh", action="store_true", help="also run Sec. V-B (minutes)")
    args = ap.parse_args()
    print(
        f"device {jax.devices()[0].platform}, {platform.processor() or platform.machine()}, "
        f"float64, bin width {H}, jax {jax.__version__}, dp-accounting "
        f"{getattr(dp_accounting, '__version__', '?')}"
    )
    case_i()
    case_ii()
    case_iii()
    if args.fh:
        case_fh()


if __name__ == "__main__":
    main()
