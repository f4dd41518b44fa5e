"""DP-SGD on scikit-learn's digits with one certified plan per method (Sec. VI-C, Table IV).

A 64-32-10 MLP (tanh) trained by DP-SGD (:mod:`dpjax.train`: Poisson sampler, optax DP
transform, accountant) at one ``(epsilon, delta)`` with four noise designs:

* ``global``: global l2 clipping ``C = 1`` + Gaussian (Abadi et al. 2016);
* ``spr``: flat per-layer clipping (``C_m = 1 / sqrt(2)``) + the SPR allocation (every
  coordinate an equal share of the privacy resource);
* ``inid``: the same clipping + the optimal i.n.i.d. per-layer allocation (Theorem 4 of
  inid-noise-laplace-beats-gaussian);
* ``flipped_huber``: global clipping + flipped Huber noise (Theorem 9 of
  flipped-huber-mechanism, Poisson-subsampled RDP accounting);
* ``laplace`` (extra, at the target epsilon only): global **l1** clipping
  (``C_1 = 20``, about the median l1 / l2 ratio of the per-example gradients at
  initialisation) + Laplace noise, accounted by the PLD engine (:mod:`dpjax.train.laplace`).

Test accuracy over 5 seeds (mean and sd), accuracy against epsilon, and the certified
epsilon each accountant reports at the end of training.  The data ship with scikit-learn;
nothing is downloaded.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dpjax.reproduce._report import markdown_table, new_figure, save_figure
from dpjax.train import flat_per_layer, make_plan

METHODS = ("global", "spr", "inid", "flipped_huber")
#: Run at the target epsilon only (not in the sweep).
EXTRA = ("laplace",)
L1_CLIP = 20.0
LABELS = {
    "global": "(a) global clip + Gaussian",
    "spr": "(b) per-layer clip + SPR",
    "inid": "(c) per-layer clip + optimal i.n.i.d.",
    "flipped_huber": "(d) global clip + flipped Huber",
    "laplace": "(e) global l1 clip + Laplace",
}
TARGET_EPSILON, DELTA = 3.0, 1e-5
BATCH, HIDDEN, LEARNING_RATE, MOMENTUM, SEEDS = 64, 32, 0.1, 0.9, 5
#: Paper's Table IV (ResNet-20 / CIFAR-10, Gaussian, delta = 1e-5): global, SPR, i.n.i.d.
PAPER_TABLE_IV = {5.0: (63.26, 42.90, 57.86), 8.0: (68.55, 47.16, 61.58)}


def _data():
    try:
        # deferred: scikit-learn (optional `reproduce` extra)
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:
        raise RuntimeError(
            "the training reproduction needs scikit-learn (its bundled digits data): "
            "pip install 'dpjax[reproduce]'"
        ) from None

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    return train_test_split(x, y.astype(np.int32), test_size=0.2, random_state=0, stratify=y)


def _init(key):
    k1, k2 = jax.random.split(key)

    def dense(k, n_in, n_out):
        w = jax.random.normal(k, (n_in, n_out), jnp.float32) / jnp.sqrt(jnp.float32(n_in))
        return {"w": w, "b": jnp.zeros((n_out,), jnp.float32)}

    return {"dense1": dense(k1, 64, HIDDEN), "dense2": dense(k2, HIDDEN, 10)}


def _logits(params, x):
    h = jnp.tanh(x @ params["dense1"]["w"] + params["dense1"]["b"])
    return h @ params["dense2"]["w"] + params["dense2"]["b"]


def _loss(params, x, y):
    logp = jax.nn.log_softmax(_logits(params, x[None]))[0]
    return -logp[y]


def _plan(method: str, epsilon: float, n: int, epochs: int):
    shapes = jax.eval_shape(_init, jax.random.key(0))
    kw = dict(dataset_size=n, batch_size=BATCH, epochs=epochs, epsilon=epsilon, delta=DELTA)
    if method == "laplace":
        return make_plan(shapes, clip_norms=L1_CLIP, noise="laplace", **kw)
    if method in ("global", "flipped_huber"):
        noise = "gaussian" if method == "global" else "flipped-huber"
        return make_plan(shapes, clip_norms=1.0, noise=noise, **kw)
    return make_plan(shapes, clip_norms=flat_per_layer(shapes, 1.0), allocation=method, **kw)


def train(plan, data, seeds: int = SEEDS, optimizer=None) -> np.ndarray:
    """Test accuracy of DP-SGD under ``plan`` for ``seeds`` seeds (one jitted, vmapped run).

    Args:
      plan: a :class:`dpjax.train.PrivacyPlan` for the MLP's parameters.
      data: ``(x_train, x_test, y_train, y_test)``.
      seeds: how many seeds.
      optimizer: the optax optimizer behind the DP transform (default SGD, momentum 0.9).

    Returns:
      Accuracies, shape ``(seeds,)``.
    """
    x_tr, x_te, y_tr, y_te = (jnp.asarray(a) for a in data)
    tx = plan.optimizer(optimizer if optimizer is not None else _optimizer(), seed=0)
    sampler = plan.sampler()
    per_example = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))

    def one(key):
        k_init, k_noise, k_batches = jax.random.split(key, 3)
        params = _init(k_init)
        state = tx.init(params)
        state = (state[0]._replace(key=k_noise),) + tuple(state[1:])

        def step(carry, k):
            params, state = carry
            batch = sampler.sample(k)
            grads = per_example(params, x_tr[batch.indices], y_tr[batch.indices])
            updates, state = tx.update(grads, state, params, mask=batch.mask)
            return (optax.apply_updates(params, updates), state), None

        keys = jax.random.split(k_batches, plan.steps)
        (params, _), _ = jax.lax.scan(step, (params, state), keys)
        return jnp.mean(jnp.argmax(_logits(params, x_te), -1).astype(y_te.dtype) == y_te)

    keys = jax.random.split(jax.random.key(2024), seeds)
    return np.asarray(jax.jit(jax.vmap(one))(keys), np.float64)


def _optimizer():
    return optax.sgd(LEARNING_RATE, momentum=MOMENTUM)


def _nonprivate(data, epochs: int, seeds: int = SEEDS) -> np.ndarray:
    """Reference: the same MLP and schedule without clipping or noise."""
    x_tr, x_te, y_tr, y_te = (jnp.asarray(a) for a in data)
    tx = _optimizer()
    steps = math.ceil(epochs * len(y_tr) / BATCH)

    def one(key):
        k_init, k_batches = jax.random.split(key)
        params = _init(k_init)

        def step(carry, k):
            params, state = carry
            idx = jax.random.choice(k, len(y_tr), (BATCH,), replace=False)
            g = jax.grad(lambda p: jnp.mean(jax.vmap(_loss, (None, 0, 0))(p, x_tr[idx],
                                                                          y_tr[idx])))(params)
            upd, state = tx.update(g, state, params)
            return (optax.apply_updates(params, upd), state), None

        (params, _), _ = jax.lax.scan(step, (params, tx.init(params)),
                                      jax.random.split(k_batches, steps))
        return jnp.mean(jnp.argmax(_logits(params, x_te), -1).astype(y_te.dtype) == y_te)

    keys = jax.random.split(jax.random.key(2024), seeds)
    return np.asarray(jax.jit(jax.vmap(one))(keys), np.float64)


def run(out_dir: Path, quick: bool = False) -> Path:
    """Train the four DP-SGD designs on digits; write ``training.md``, a PNG, ``summary.json``.

    Args:
      out_dir: output directory.
      quick: 15 epochs and epsilon in {1, 3, 8} (about 3 minutes on 2 CPU cores) instead
        of 30 epochs and epsilon in {1, 2, 3, 5, 8}.

    Returns:
      The path of ``training.md``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = _data()
    n = len(data[2])
    epochs = 15 if quick else 30
    grid = (1.0, 3.0, 8.0) if quick else (1.0, 2.0, 3.0, 5.0, 8.0)
    results: dict = {m: {} for m in METHODS}
    plans = {}
    for eps in grid:
        done = {}
        for m in METHODS:
            plan = _plan(m, eps, n, epochs)
            key = _noise_key(plan)
            acc = done[key] if key in done else train(plan, data)  # identical run: reuse
            done[key] = acc
            spent = plan.accountant().epsilon(plan.steps) if eps == TARGET_EPSILON else None
            results[m][eps] = {"mean": float(acc.mean()), "sd": float(acc.std(ddof=1)),
                               "seeds": acc.tolist(), "epsilon_spent": spent}
            if eps == TARGET_EPSILON:
                plans[m] = plan
    for m in EXTRA:
        plans[m] = plan = _plan(m, TARGET_EPSILON, n, epochs)
        acc = train(plan, data)
        results[m] = {TARGET_EPSILON: {
            "mean": float(acc.mean()), "sd": float(acc.std(ddof=1)), "seeds": acc.tolist(),
            "epsilon_spent": plan.accountant().epsilon(plan.steps)}}
    baseline = _nonprivate(data, epochs)
    summary = _summary(results, plans, baseline, epochs, n, quick)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    _figure(results, grid, baseline, out_dir / "training_accuracy_vs_epsilon.png")
    report = out_dir / "training.md"
    report.write_text(_markdown(summary, results, grid))
    return report


def _noise_key(plan) -> tuple:
    """Plans with this key run bit-identical training (same clipping, same Gaussian noise)."""
    gaussian = plan.noise == "gaussian" or plan.fh_alpha == 0.0
    return (gaussian, plan.max_batch_size, tuple(plan.groups.clip_norms),
            tuple(plan.noise_std), plan.fh_alpha if not gaussian else 0.0)


def _summary(results, plans, baseline, epochs, n, quick) -> dict:
    every = METHODS + EXTRA
    at = {m: results[m][TARGET_EPSILON] for m in every}
    return {
        "target_epsilon": TARGET_EPSILON,
        "delta": DELTA,
        "accuracy": {m: at[m]["mean"] for m in every},
        "accuracy_sd": {m: at[m]["sd"] for m in every},
        "accuracy_seeds": {m: at[m]["seeds"] for m in every},
        "epsilon_spent": {m: at[m]["epsilon_spent"] for m in every},
        "nonprivate_accuracy": float(baseline.mean()),
        "table_iv_ordering_inid_beats_spr": bool(at["inid"]["mean"] > at["spr"]["mean"]),
        "sweep": {m: {str(e): v["mean"] for e, v in results[m].items()} for m in METHODS},
        "plans": {m: plans[m].summary() for m in every},
        "dataset_size": n,
        "batch_size": BATCH,
        "epochs": epochs,
        "seeds": SEEDS,
        "quick": quick,
    }


def _figure(results, grid, baseline, path):
    fig, ax = new_figure(figsize=(6, 4))
    for m in METHODS:
        mean = [results[m][e]["mean"] for e in grid]
        sd = [results[m][e]["sd"] for e in grid]
        ax.errorbar(grid, mean, yerr=sd, marker="o", capsize=3, label=LABELS[m])
    ax.axhline(baseline.mean(), color="gray", ls=":", label="non-private")
    ax.set_xscale("log")
    ax.set_xlabel(f"epsilon (delta = {DELTA:g})")
    ax.set_ylabel("test accuracy (5 seeds)")
    ax.set_title("DP-SGD, digits MLP 64-32-10")
    ax.legend(fontsize=7)
    save_figure(fig, path)


def _markdown(summary, results, grid) -> str:
    rows = [
        [LABELS[m], f"{100 * summary['accuracy'][m]:.2f} ± {100 * summary['accuracy_sd'][m]:.2f}",
         summary["epsilon_spent"][m], _noise_line(summary["plans"][m])]
        for m in METHODS + EXTRA
    ]
    sweep = [[LABELS[m]] + [f"{100 * results[m][e]['mean']:.2f}" for e in grid] for m in METHODS]
    holds = summary["table_iv_ordering_inid_beats_spr"]
    paper = [[f"eps = {e:g}"] + [f"{v:.2f}" for v in vals] for e, vals in PAPER_TABLE_IV.items()]
    fh = summary["plans"]["flipped_huber"]
    a, b = summary["accuracy_seeds"]["inid"], summary["accuracy_seeds"]["spr"]
    diff = 100 * (np.mean(a) - np.mean(b))
    se = 100 * math.sqrt(np.var(a, ddof=1) / len(a) + np.var(b, ddof=1) / len(b))
    return (
        "# DP-SGD with one certified plan (inid Sec. VI-C / Table IV; flipped Huber Thm 9)\n\n"
        f"scikit-learn digits ({summary['dataset_size']} train / 360 test), MLP 64-32-10 "
        f"(tanh), SGD {LEARNING_RATE} with momentum {MOMENTUM}, expected batch {BATCH} "
        "(Poisson, padded), "
        f"{summary['epochs']} epochs, {SEEDS} seeds; epsilon = {TARGET_EPSILON}, delta = "
        f"{DELTA:g}.  Non-private reference: {100 * summary['nonprivate_accuracy']:.2f}%.\n\n"
        "## Test accuracy at the target (mean ± sd over seeds, %)\n\n"
        + markdown_table(["method", "accuracy", "epsilon spent (certified)", "noise"], rows)
        + "\n## Accuracy against epsilon (mean, %)\n\n"
        + markdown_table(["method"] + [f"eps = {e:g}" for e in grid], sweep)
        + "\n![accuracy vs epsilon](training_accuracy_vs_epsilon.png)\n\n"
        "## The paper's ordering\n\n"
        "Table IV of inid-noise-laplace-beats-gaussian (ResNet-20 on CIFAR-10, Gaussian, "
        "delta = 1e-5, global / SPR / i.n.i.d.):\n\n"
        + markdown_table(["", "global", "SPR", "i.n.i.d."], paper)
        + f"\nHere (c) i.n.i.d. {'beats' if holds else 'does NOT beat'} (b) SPR at "
        f"epsilon = {TARGET_EPSILON} by {diff:+.2f} points (standard error of the difference "
        f"{se:.2f} over {SEEDS} seeds): the ordering {'holds' if holds else 'does not hold'}"
        f"{' (within noise)' if abs(diff) < 2 * se else ''}.  "
        "The network has two layers of very different sizes (2080 and 330 parameters); with "
        "flat clipping SPR gives the small layer sqrt(2080/330) = 2.5 times the noise std of "
        "the large one, the optimal allocation only (2080/330)^(1/4) = 1.6 times; the total "
        "noise variance of i.n.i.d. is the smaller by construction (Theorem 4).  In the "
        "paper per-layer clipping costs accuracy against global clipping (57.86 vs 63.26); "
        "here global minus i.n.i.d. is "
        + ", ".join(f"{100 * (results['global'][e]['mean'] - results['inid'][e]['mean']):+.2f}"
                    f" at eps = {e:g}" for e in grid)
        + " points: a two-layer MLP loses much less to per-layer clipping than a ResNet-20 "
        "with 20+ layers (the paper's setting), where SPR's penalty on small layers and "
        "the clipping bias of many groups are far larger.\n\n"
        "## Flipped Huber\n\n"
        f"Certificate of (d): {fh['certificate']}.\n\n"
        "The d-dimensional flipped Huber mechanism under an l2 clip has no one-dimensional "
        "dominating pair the PLD engine could compose, so shapes alpha > 0 are accounted by "
        "Theorem 9 (zCDP per coordinate, xi growing like alpha sqrt(d)) and the general "
        "Poisson-subsampled RDP bound (Zhu & Wang 2019, Thm 6), whose factor 3 leaves a "
        "noise-independent floor per step; alpha = 0 is the Gaussian, accounted by the PLD "
        "engine.  For d = 2410 and hundreds of steps the least-variance certified member is "
        "alpha = 0, so (d) trains with exactly the noise of (a) (the same run, reused): the "
        "flipped Huber advantage of the paper (few compositions, Sec. VI-B) does not carry "
        "over to DP-SGD here, as the paper itself anticipates for heavy composition.\n\n"
        "## Laplace (extra)\n\n"
        f"(e) clips every per-example gradient to l1 norm {L1_CLIP:g} and adds Laplace noise "
        "to the sum, accounted by the PLD engine through the one-dimensional Laplace pair "
        "(an l1 shift of product Laplace noise is dominated by the 1-D shift: "
        "dpjax.train.laplace).  In d = 2410 dimensions an l1 ball of the same clipping "
        "strength is about sqrt(d) times wider than the l2 ball in the coordinates' units, "
        "so the Laplace noise per coordinate is far larger than the Gaussian's: "
        f"{_noise_line(summary['plans']['laplace'])}.  The i.n.i.d. paper's 'Laplace beats "
        "Gaussian' regime is few coordinates and little composition, not DP-SGD.\n\n"
        "## Accounting\n\n"
        "Every epsilon above is the certified upper value of the plan's accountant after "
        "the planned steps (Gaussian: the PLD engine through dpjax.account, the same "
        "schedule the noise was calibrated on; flipped Huber: the RDP accountant).  The "
        "accountant's `bracket` also gives a lower value (the optimistic PLD of the same "
        "pair); it is not computed here, to keep the run short.\n"
    )


def _noise_line(plan: dict) -> str:
    if plan["noise"] == "gaussian":
        stds = ", ".join(f"{v['noise_std']:.3f}" for v in plan["groups"].values())
        return f"Gaussian std per group {stds} (multiplier {plan['noise_multiplier']:.4f})"
    if plan["noise"] == "laplace":
        (g,) = plan["groups"].values()
        return (f"Laplace scale {g['laplace_scale']:.3f} (std {g['noise_std']:.3f}; "
                f"{plan['noise_multiplier']:.4f} per unit l1)")
    return f"FH(alpha {plan['alpha']:.3g}, gamma {plan['gamma']:.4f})"
