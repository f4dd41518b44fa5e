"""Bench: dpjax's vectorised M_mean (one PRNG key, all users and rows at once) against the
per-user NumPy loop a user would otherwise write (Mechanism 2 with a rejection loop for the
hemisphere, one call per user and row, as in the paper's public scripts).

Setting of Appendix B.1: d = 10, delta = (0.2, 0.2, 2, ..., 2), epsilon = 2, q = 0.5,
data in {-1, 1}^10.  dpjax is timed after a compile warm-up with ``block_until_ready``
(median of ``--repeats``); the loop runs once on ``--loop-users`` users and is scaled
linearly to ``--users``.  Both use the unbiased Duchi constant.

Usage: PYTHONPATH=. python bench/bench_bcdp.py [--users 10000] [--loop-users 500] [--repeats 5]
       PYTHONPATH=. python bench/bench_bcdp.py --sweep [--repeats 3]   # PrivUnit2 vs Duchi, n x d

``--sweep`` times one channel call on ``n`` reports of dimension ``d`` (epsilon 2) and
M_mean (``n`` users, ``d`` coordinates, Theorem 2 at q = 0.5), compiled, median of the
repeats.  Measured 2026-11-26 on 2 CPU cores shared with other jobs (load 10-15 during
both runs, so single timings are noisy to +-50 %), jax 0.10.2, float64; "before" is the
same script on main at 19ea9c8 (PrivUnit2's cap by safeguarded Newton on JAX's
``betainc``, up to 40 steps; M_mean drawing all d rows), "after" this version (knots of
the angle's inverse CDF on the host, 3 Newton steps with 8-point Gauss-Legendre per
report; M_mean drawing only the released rows)::

  PrivUnit2 seconds            before     after   speed-up   (Duchi after)
  channel   n=1e4,  d=10        0.423     0.029      15x       0.036
  channel   n=1e5,  d=10        4.446     0.411      11x       0.257
  channel   n=1e5,  d=100       7.414     3.004       2.5x     2.140
  channel   n=1e4,  d=1000      5.044     2.176       2.3x     2.028
  M_mean    n=1e3,  d=4         0.778     0.006     130x       0.004
  M_mean    n=1e4,  d=4         2.827     0.068      42x       0.008
  M_mean    n=1e3,  d=10        1.559     0.004     390x       0.009
  M_mean    n=1e4,  d=10       26.316     0.056     470x       0.048
  M_mean    n=1e4,  d=32       88.671     0.519     170x       0.672

At large ``d`` both channels cost the same O(n d) vector work (normals, projections);
the cap's angle is O(n) whatever ``d``.  M_mean's gain also counts the rows not drawn
(2 of d released at q = 0.5).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
from scipy import special as sps

jax.config.update("jax_enable_x64", True)

from dpjax.bcdp import budget, mean  # noqa: E402


def loop_duchi(rng, x, eps, r):
    """Mechanism 2 for one user (rejection sampling on the hemisphere), unbiased constant."""
    m = x.size
    b = r / np.tanh(eps / 2) * np.sqrt(np.pi) * np.exp(sps.gammaln((m + 1) / 2)
                                                       - sps.gammaln(m / 2))
    k = rng.random() < np.exp(eps) / (1 + np.exp(eps))
    norm = np.linalg.norm(x)
    s = rng.random() < 0.5 + norm / (2 * r)
    tilde = (2 * s - 1) * r * x / norm
    while True:
        z = rng.normal(size=m)
        z = b * z / np.linalg.norm(z)
        if (2 * k - 1) * z @ tilde > 0:
            return z


def loop_mean(rng, xs, c):
    """Per-user loop over users and rows, combined with the paper's weights."""
    d = xs.shape[1]
    inc = np.diff(np.concatenate([[0.0], c]))
    w = inc**2 / (d - np.arange(d))
    out = np.zeros_like(xs)
    for j, x in enumerate(xs):
        acc = np.zeros(d)
        for k in range(d):
            if inc[k] > 0:
                acc[k:] += w[k] * loop_duchi(rng, x[k:], inc[k], np.sqrt(d - k))
        out[j] = acc / np.cumsum(w)
    return out


def _timed(f, *args, repeats: int) -> float:
    """Median wall time of the compiled ``f(*args)`` after one warm-up call."""
    f(*args).block_until_ready()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f(*args).block_until_ready()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def sweep(repeats: int) -> None:
    """PrivUnit2 against Duchi: one channel call on ``n x d`` inputs, and ``M_mean`` (``n`` users,
    ``d`` coordinates, ``d`` rows each), epsilon 2 / Theorem 2's budget at q = 0.5."""
    from dpjax.bcdp import channels

    print("channel alone: n reports of dimension d, epsilon 2")
    print(f"{'n':>8} {'d':>6} {'duchi s':>9} {'privunit s':>11} {'ratio':>7}")
    rng = np.random.default_rng(0)
    for n, d in ((10_000, 10), (100_000, 10), (100_000, 100), (10_000, 1000)):
        x = jnp.asarray(rng.choice([-1.0, 1.0], size=(n, d)) / np.sqrt(d))
        out = {}
        for chan in (channels.DUCHI, channels.PRIVUNIT):
            prm = chan.parameters(2.0, d, 1.0)
            if hasattr(channels, "as_arrays"):  # absent before 27bb795 (the "before" run)
                prm = channels.as_arrays(prm)
            f = jax.jit(lambda k, v, prm=prm, hemi=chan.name == "duchi":
                        channels.sample(k, v, prm, hemisphere=hemi))
            out[chan.name] = _timed(f, jax.random.key(1), x, repeats=repeats)
        print(f"{n:>8} {d:>6} {out['duchi']:>9.3f} {out['privunit']:>11.3f} "
              f"{out['privunit'] / out['duchi']:>7.1f}")
    print("M_mean: n users, d coordinates (d rows of dimension d..1), Theorem 2 at q = 0.5")
    print(f"{'n':>8} {'d':>6} {'duchi s':>9} {'privunit s':>11} {'ratio':>7}")
    for n, d in ((1_000, 4), (10_000, 4), (1_000, 10), (10_000, 10), (10_000, 32)):
        deltas = np.array([0.2, 0.2] + [2.0] * (d - 2))
        b = budget.theorem2_budget(deltas, 2.0, 0.5)
        x = jnp.asarray(rng.choice([-1.0, 1.0], size=(n, d)))
        out = {}
        for name in ("duchi", "privunit"):
            p = mean.plan(b.c, name)
            f = jax.jit(lambda k, xx, p=p: mean.combine(mean.release(k, xx, p), p))
            out[name] = _timed(f, jax.random.key(1), x, repeats=repeats)
        print(f"{n:>8} {d:>6} {out['duchi']:>9.3f} {out['privunit']:>11.3f} "
              f"{out['privunit'] / out['duchi']:>7.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=10_000)
    ap.add_argument("--loop-users", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sweep", action="store_true", help="PrivUnit2 vs Duchi over n x d")
    args = ap.parse_args()
    if args.sweep:
        print(f"device {jax.devices()[0].device_kind}, jax {jax.__version__}")
        sweep(args.repeats)
        return
    deltas = np.array([0.2, 0.2] + [2.0] * 8)
    b = budget.theorem2_budget(deltas, 2.0, 0.5)
    c = b.c[b.order]
    rng = np.random.default_rng(0)
    x = rng.choice([-1.0, 1.0], size=(args.users, 10))
    print(f"device {jax.devices()[0].device_kind}, jax {jax.__version__}, users {args.users}, "
          f"d 10, c {np.round(c, 4).tolist()}")
    results = {}
    for name in ("duchi", "privunit"):
        p = mean.plan(c, name)
        f = jax.jit(lambda k, xx, p=p: mean.combine(mean.release(k, xx, p), p))
        xj = jnp.asarray(x)
        f(jax.random.key(0), xj).block_until_ready()
        times = []
        for i in range(args.repeats if name == "duchi" else 1):
            t = time.perf_counter()
            f(jax.random.key(i + 1), xj).block_until_ready()
            times.append(time.perf_counter() - t)
        results[name] = float(np.median(times))
    t = time.perf_counter()
    loop_mean(rng, x[: args.loop_users], c)
    loop = (time.perf_counter() - t) * args.users / args.loop_users
    print(f"dpjax M_mean duchi     {results['duchi']:.3f} s")
    print(f"dpjax M_mean privunit  {results['privunit']:.3f} s")
    print(f"numpy per-user loop    {loop:.3f} s (scaled from {args.loop_users} users)")
    print(f"speed-up duchi vs loop {loop / results['duchi']:.1f}x; "
          f"privunit costs {results['privunit'] / results['duchi']:.1f}x duchi")


if __name__ == "__main__":
    main()
