"""DP-SGD with dpjax.train: step time and calibration time against the peers, as ratios.

1. **Step time** of a full jitted DP-SGD step (per-example gradients by ``vmap(grad)``,
   clip, sum, noise, normalise, SGD update) on an MLP 784-256-256-10 with a padded batch:
   ``dpjax.train`` (global clipping; and per-layer i.n.i.d.) against
   ``optax.contrib.differentially_private_aggregate`` on the same model and batch, same
   run, after warm-up, ``block_until_ready``.  Also the aggregation alone on precomputed
   per-example gradients.
2. **Calibration time** for DP-SGD (N = 60000, expected batch 256, 30 epochs, epsilon 3,
   delta 1e-5): ``dpjax.train.make_plan`` (the PLD engine, certified) against
   dp-accounting's ``calibrate_dp_mechanism`` with its PLD accountant (the default
   discretisation 1e-4, pessimistic).  Opacus's ``get_noise_multiplier`` is timed only if
   Opacus is installed (it is not a dependency of dpjax).
3. **Acceptance**: dpjax's sigma against dp-accounting's PLD at finer discretisations
   (``--intervals``), relative gap (must be >= 0 and <= 1e-4).

4. **Laplace** (``--parts laplace``): the same two for the Laplace plan (l1 clipping): its
   scale per unit l1 sensitivity against dp-accounting's ``LaplaceDpEvent`` under Poisson
   sampling (calibration time, and the value against its pessimistic PLD).

Run: ``python bench/bench_train.py [--batch 256] [--intervals 1e-4,5e-5]``.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from _timing import mean_time

N, BATCH, EPOCHS, EPSILON, DELTA = 60000, 256, 30, 3.0, 1e-5


def _mlp(key):
    sizes = [784, 256, 256, 10]
    keys = jax.random.split(key, len(sizes) - 1)
    return {
        f"dense{i}": {
            "w": jax.random.normal(k, (a, b), jnp.float32) / np.sqrt(a),
            "b": jnp.zeros((b,), jnp.float32),
        }
        for i, (k, a, b) in enumerate(zip(keys, sizes[:-1], sizes[1:], strict=True))
    }


def _loss(params, x, y):
    h = x
    for i in range(3):
        h = h @ params[f"dense{i}"]["w"] + params[f"dense{i}"]["b"]
        if i < 2:
            h = jax.nn.relu(h)
    return -jax.nn.log_softmax(h)[y]


def bench_step(batch: int, repeats: int) -> None:
    from dpjax.train import flat_per_layer, make_plan

    params = _mlp(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (batch, 784), jnp.float32)
    y = jax.random.randint(jax.random.key(2), (batch,), 0, 10)
    mask = jnp.arange(batch) < int(0.6 * batch)
    per_example = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))
    common = dict(dataset_size=N, batch_size=0.6 * batch, steps=1000, epsilon=EPSILON,
                  delta=DELTA, max_batch_size=batch)
    plans = {
        "dpjax global": make_plan(params, clip_norms=1.0, **common),
        "dpjax per-layer i.n.i.d.": make_plan(params, clip_norms=flat_per_layer(params),
                                              **common),
    }
    sigma = plans["dpjax global"].noise_multiplier
    txs = {name: p.optimizer(optax.sgd(0.1), seed=0) for name, p in plans.items()}
    txs["optax.contrib DP aggregate"] = optax.chain(
        optax.contrib.differentially_private_aggregate(1.0, sigma, seed=0), optax.sgd(0.1)
    )

    def make_step(tx, with_mask):
        @jax.jit
        def step(params, state):
            g = per_example(params, x, y)
            kw = {"mask": mask} if with_mask else {}
            upd, state = tx.update(g, state, params, **kw)
            return optax.apply_updates(params, upd), state

        return step

    grads = jax.jit(per_example)(params, x, y)
    print(f"step time: MLP 784-256-256-10 ({sum(p.size for p in jax.tree.leaves(params))} "
          f"params), padded batch {batch}, float32, sigma {sigma:.4f}")
    times, agg = {}, {}
    for name, tx in txs.items():
        dp = name.startswith("dpjax")
        step = make_step(tx, dp)
        state = tx.init(params)
        times[name] = mean_time(lambda s=step, st=state: s(params, st), repeats)
        upd = jax.jit(lambda g, st, t=tx, d=dp: t.update(g, st, params,
                                                         **({"mask": mask} if d else {})))
        agg[name] = mean_time(lambda u=upd, st=state: u(grads, st), repeats)
    ref, ref_agg = times["optax.contrib DP aggregate"], agg["optax.contrib DP aggregate"]
    for name in txs:
        print(f"  {name:28s} step {1e3 * times[name]:8.2f} ms (ratio {times[name] / ref:5.2f})"
              f"   aggregation only {1e3 * agg[name]:7.2f} ms (ratio {agg[name] / ref_agg:5.2f})")
    print("  ratio = time / optax.contrib time (< 1: dpjax faster)")


def _dp_accounting_sigma(interval: float, tol: float = 2e-7, noise: str = "gaussian") -> float:
    from dp_accounting.pld import privacy_loss_distribution as pldm

    q, steps = BATCH / N, math.ceil(EPOCHS * N / BATCH)
    make = pldm.from_gaussian_mechanism if noise == "gaussian" else pldm.from_laplace_mechanism

    def eps(sigma):
        pld = make(
            sigma, sampling_prob=q, value_discretization_interval=interval,
            use_connect_dots=True, pessimistic_estimate=True,
        )
        return pld.self_compose(steps).get_epsilon_for_delta(DELTA)

    lo, hi = 0.5, 2.0
    while eps(hi) > EPSILON:
        lo, hi = hi, 2.0 * hi
    while eps(lo) <= EPSILON:
        lo, hi = 0.5 * lo, lo
    while hi / lo - 1 > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if eps(mid) <= EPSILON else (mid, hi)
    return hi


def bench_calibration(intervals, noise: str = "gaussian") -> None:
    """Calibration time and value against dp-accounting; ``noise``: ``"gaussian"`` (the
    noise multiplier) or ``"laplace"`` (the Laplace scale per unit l1 sensitivity)."""
    import dp_accounting

    from dpjax.train import make_plan

    params = {"w": jax.ShapeDtypeStruct((10,), jnp.float32)}
    kw = dict(dataset_size=N, batch_size=BATCH, epochs=EPOCHS, epsilon=EPSILON, delta=DELTA,
              max_batch_size=N + 1, noise=noise)  # no truncation share: the bare target
    base = dp_accounting.GaussianDpEvent if noise == "gaussian" else dp_accounting.LaplaceDpEvent
    what = "sigma" if noise == "gaussian" else "scale per unit l1"
    t = time.perf_counter()
    plan = make_plan(params, **kw)
    first = time.perf_counter() - t
    t = time.perf_counter()
    make_plan(params, **kw)
    warm = time.perf_counter() - t
    sigma = plan.noise_multiplier
    steps, q = plan.steps, plan.sampling_rate

    def make_event(s):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, base(s)), steps
        )

    t = time.perf_counter()
    peer = dp_accounting.calibrate_dp_mechanism(
        lambda: dp_accounting.pld.PLDAccountant(), make_event, EPSILON, DELTA,
        dp_accounting.LowerEndpointAndGuess(0.3, 1.0), tol=1e-6,
    )
    t_peer = time.perf_counter() - t
    print(f"calibration ({noise}): N {N}, batch {BATCH} (q = {q:.6g}), {EPOCHS} epochs = "
          f"{steps} steps, "
          f"epsilon {EPSILON}, delta {DELTA:g}")
    print(f"  dpjax make_plan (PLD engine, bin 1e-4, certified): first call {first:.1f} s "
          f"(incl. compile), warm {warm:.1f} s, {what} {sigma!r}")
    print(f"  dp-accounting calibrate_dp_mechanism (PLDAccountant, interval 1e-4): "
          f"{t_peer:.1f} s, {what} {peer!r}")
    print(f"  time ratio dpjax / dp-accounting: first {first / t_peer:.2f}, warm "
          f"{warm / t_peer:.2f}")
    try:
        import opacus  # noqa: F401
        print("  Opacus installed but not timed here")
    except ImportError:
        print("  Opacus: not installed in this environment (not timed)")
    print(f"acceptance: dpjax {what} vs dp-accounting's pessimistic PLD (connect-the-dots), "
          "bisection to 2e-7")
    for h in intervals:
        t = time.perf_counter()
        ref = _dp_accounting_sigma(h, noise=noise)
        gap = sigma / ref - 1
        ok = 0 <= gap <= 1e-4
        print(f"  interval {h:g}: dp-accounting {what} {ref!r} ({time.perf_counter() - t:.0f} s); "
              f"dpjax / ref - 1 = {gap:.3e} ({'ok' if ok else 'FAILS'}: in [0, 1e-4])")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--intervals", default="1e-4,5e-5")
    ap.add_argument("--parts", default="step,calibration",
                    help="which parts to run: step, calibration, laplace (its calibration)")
    args = ap.parse_args()
    jax.config.update("jax_enable_x64", True)
    import dp_accounting  # noqa: F401

    print(f"jax {jax.__version__}, optax {optax.__version__}, device {jax.devices()[0]}, "
          f"{platform.processor() or platform.machine()}")
    parts = args.parts.split(",")
    if "step" in parts:
        bench_step(args.batch, args.repeats)
    if "calibration" in parts:
        bench_calibration([float(h) for h in args.intervals.split(",")])
    if "laplace" in parts:
        bench_calibration([float(h) for h in args.intervals.split(",")], noise="laplace")


if __name__ == "__main__":
    main()
