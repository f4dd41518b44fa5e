"""Accelerator timings of the two device checks of issue 19 (item 5), with CPU beside them.

1. ``fh-grid``: the exact ``K``-dim flipped Huber profile (``K = 20``, corner shift
   ``Delta = 1``, the 1-D pessimistic pair self-composed ``K`` times by the PLD engine) on a
   grid of ``shapes x variances`` (100 x 100 = 10^4 ``(alpha, gamma)`` pairs by default) in
   vmapped chunks of one compiled kernel: ``log delta(epsilon)`` per pair, then per shape
   ``b = alpha / gamma`` the least variance on the grid that meets ``delta``.  That brute
   force is an independent check of the shape search
   (:func:`dpjax.calibration.flipped_huber_kdim.calibrate_flipped_huber_exact`, ``fh-calibrate``):
   the search's variance must not exceed the grid's best (it searches the scale exactly, the
   grid only steps it).  The same kernel on a slice of the pairs on the host CPU of the same
   machine (``--cpu-pairs``) gives the ratio per pair.
2. ``spherical``: the windowed KL-optimal spherical design at ``m`` (default 10^4; the
   incomplete-beta coefficients and the barrier-Newton solve), the exact sampler and the
   certified PLD epsilon (one use, delta = 1e-5), first call and again.
3. ``fh-calibrate``: the shape search itself (first call and again).

Each part is its own process (``python bench/bench_gpu.py PART [...]``) so that a driver can
bound it with ``timeout``; every part prints a ``device:`` line and one JSON line per result
(``--out FILE`` appends them).  Timings are wall seconds around ``block_until_ready`` /
host conversion; the first call of a new shape includes its XLA compile.

    python bench/bench_gpu.py fh-grid [--k 20 --epsilon 1 --delta 1e-8 --shapes 100
                                       --variances 100 --chunk 1000 --cpu-pairs 200]
    python bench/bench_gpu.py spherical [--m 10000 --n 20 --samples 10000]
    python bench/bench_gpu.py fh-calibrate [--k 20 --epsilon 1 --delta 1e-8]

Measured 2026-11-26 on one NVIDIA H100 80GB HBM3 (driver 580.159.04; jax 0.11.2 with its CUDA
plugin, x64), beside the same machine's 16 host CPU cores (``JAX_PLATFORMS=cpu``, same jax);
the lent machine's persistent compilation cache was empty, so "first" includes compiles.
Raw lines: ``bench/results/gpu_2026-11-26.jsonl``::

  spherical, m = 10^4, n = 20 (N = 2114, window shells 1803..2188, 28 Newton steps, KL 1.9148)
  step                          GPU first / again     CPU (16 cores) first / again   CPU/GPU again
  design (coefficients + solve) 9.84 s / 1.79 s       4.89 s / 1.74 s                0.97 (host)
  sampler, 10^4 draws in R^m    3.03 s / 0.0075 s     2.53 s / 1.33 s                178
  PLD epsilon(1e-5), one use    3.94 s / 0.030 s      2.01 s / 0.066 s               2.2
  epsilon 5.022453852846557 (GPU) vs 5.022453852839916 (CPU)

  K = 20 flipped Huber, exact, eps = 1, delta = 1e-8: 100 shapes x 100 variances = 10^4 pairs
  (grid 16384 points, FFT 60000), chunks of 500 pairs
  GPU: first chunk 24.8 s (compile), all 10^4 pairs 0.199 s = 0.020 ms per pair
  CPU (16 cores, 300 pairs): 2.29 ms per pair; CPU/GPU per pair 115
  max |log delta GPU - log delta CPU| = 1.1e-3 (FFT round-off, inside both certificates)
  (chunks of 1000 pairs: the GPU compile passed 190 s, XLA's "very slow compile" alarm on
  a reduce fusion, and was stopped; 500 compiled in 25 s)
  grid's least feasible variance 525.88 at b = 0 (variance step 1.1%); Laplace end 792.87
  (pure-DP Laplace 800); shape search (fh-calibrate): 520.2617 at b = 0.1, delta at the
  parameters 9.99998e-9, first call 48.3 s on the GPU, again 0.062 s -- below the grid's
  best, as it must be; the Gaussian (Delta_2 = sqrt 20) needs 520.2630.

  K = 10^4 flipped Huber, exact calibration (fh-calibrate --k 10000 --delta 1e-6, eps = 1):
  GPU first 37.7 s / again 0.056 s; CPU (16 cores) first 16.2 s / again 1.47 s (CPU/GPU
  again 26); both return b = 0 (member gaussian), gamma 422.4678889347398, variance
  178479.117, delta at the parameters 9.999999999e-7.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
from _timing import emit_json


def _setup():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def device_report() -> dict:
    jax = _setup()
    return {"backend": jax.default_backend(), "devices": [str(d) for d in jax.devices()],
            "x64": bool(jax.config.jax_enable_x64), "jax": jax.__version__,
            "cpu_count": os.cpu_count()}


def _grid(k: int, epsilon: float, delta: float, n_shapes: int, n_var: int):
    """Shapes ``b`` (the Gaussian end 0, a geometric range, the Laplace end 1e4) and, per
    shape, variances from 0.6 to 1.8 times the Gaussian's (``Delta_2 = sqrt(K)``)."""
    from dpjax.calibration.gaussian import sigma_gaussian
    from dpjax.noise.flipped_huber.standard import standard_variance

    sg = float(np.asarray(sigma_gaussian(epsilon, delta, math.sqrt(k))[0]))
    shapes = np.concatenate([[0.0], np.geomspace(0.05, 100.0, n_shapes - 2), [1e4]])
    var = sg**2 * np.geomspace(0.6, 1.8, n_var)
    v_b = np.asarray(standard_variance(shapes))
    gamma = np.sqrt(var[None, :] / v_b[:, None])  # (shapes, variances)
    b = np.broadcast_to(shapes[:, None], gamma.shape)
    return sg, shapes, var, b.ravel(), gamma.ravel()


def _grid_kernel(k: int, epsilon: float, b, gamma, bin_width: float):
    """A jitted ``(gamma, b) -> log delta(epsilon)`` over a chunk, sizes covering every pair."""
    jax = _setup()
    import jax.numpy as jnp

    from dpjax.accounting.pld.engine import log_delta_kernel
    from dpjax.accounting.pld.plan import sizes_for
    from dpjax.noise import FlippedHuber

    sizes = sizes_for(FlippedHuber.from_scale, gamma, b, 1.0, None, k, bin_width)
    eps = jnp.asarray([epsilon], jnp.float64)

    def one(g, s):
        return log_delta_kernel(g, s, 1.0, 1.0, float(k), eps, noise_fn=FlippedHuber.from_scale,
                                bin_width=bin_width, sizes=sizes, subsampled=False)[0]

    return jax.jit(jax.vmap(one)), sizes


def _run_chunks(kernel, b, gamma, chunk: int, device=None):
    import jax

    out = np.empty(b.size)
    for s in range(0, b.size, chunk):
        g_c = np.resize(gamma[s:s + chunk], chunk)  # pad the last chunk: one compiled shape
        b_c = np.resize(b[s:s + chunk], chunk)
        args = (g_c, b_c) if device is None else tuple(jax.device_put(a, device)
                                                       for a in (g_c, b_c))
        got = np.asarray(kernel(*args).block_until_ready())
        out[s:s + chunk] = got[: min(chunk, b.size - s)]
    return out


def fh_grid(a) -> None:
    jax = _setup()
    sg, shapes, var, b, gamma = _grid(a.k, a.epsilon, a.delta, a.shapes, a.variances)
    kernel, sizes = _grid_kernel(a.k, a.epsilon, b, gamma, a.bin_width)
    chunk = min(a.chunk, b.size)
    t0 = time.perf_counter()
    _run_chunks(kernel, b[:chunk], gamma[:chunk], chunk)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    log_d = _run_chunks(kernel, b, gamma, chunk)
    again = time.perf_counter() - t0
    ok = log_d <= math.log(a.delta * (1.0 - 1e-10))
    feas = ok.reshape(shapes.size, var.size)
    v_grid = var[None, :] * np.ones((shapes.size, 1))
    best_by_shape = np.where(feas, v_grid, np.inf).min(axis=1)
    i = int(np.argmin(best_by_shape))
    row = {"part": "fh-grid", "backend": jax.default_backend(), "K": a.k, "epsilon": a.epsilon,
           "delta": a.delta, "pairs": int(b.size), "chunk": chunk,
           "grid_points": sizes.grid, "fft": sizes.fft, "first_chunk_s": first,
           "all_pairs_s": again, "ms_per_pair": 1e3 * again / b.size,
           "nan_pairs": int(np.isnan(log_d).sum()), "gaussian_variance": sg**2,
           "grid_best_variance": float(best_by_shape[i]), "grid_best_shape": float(shapes[i]),
           "grid_gaussian_end_variance": float(best_by_shape[0]),
           "grid_laplace_end_variance": float(best_by_shape[-1])}
    if a.cpu_pairs:
        cpu = jax.devices("cpu")[0]
        n = min(a.cpu_pairs, b.size)
        with jax.default_device(cpu):
            k_cpu, _ = _grid_kernel(a.k, a.epsilon, b, gamma, a.bin_width)
            c = min(chunk, n)
            _run_chunks(k_cpu, b[:c], gamma[:c], c, cpu)
            t0 = time.perf_counter()
            log_c = _run_chunks(k_cpu, b[:n], gamma[:n], c, cpu)
            t_cpu = time.perf_counter() - t0
        row.update({"cpu_pairs": n, "cpu_chunk": c, "cpu_ms_per_pair": 1e3 * t_cpu / n,
                    "cpu_over_device_per_pair": (t_cpu / n) / (again / b.size),
                    "cpu_max_abs_diff_log_delta": float(np.max(np.abs(
                        np.nan_to_num(log_c) - np.nan_to_num(log_d[:n]))))})
    emit_json(row, a.out)


def fh_calibrate(a) -> None:
    jax = _setup()
    from dpjax.calibration.flipped_huber_kdim import calibrate_flipped_huber_exact

    t0 = time.perf_counter()
    alpha, gamma, var, d_at, ok = calibrate_flipped_huber_exact(a.epsilon, a.delta, a.k, 1.0)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    calibrate_flipped_huber_exact(a.epsilon, a.delta, a.k, 1.0)
    again = time.perf_counter() - t0
    emit_json({"part": "fh-calibrate", "backend": jax.default_backend(), "K": a.k,
           "epsilon": a.epsilon, "delta": a.delta, "alpha": float(alpha), "gamma": float(gamma),
           "shape": float(alpha / gamma), "variance": float(var), "delta_at": float(d_at),
           "certified": bool(ok), "first_s": first, "again_s": again}, a.out)


def spherical(a) -> None:
    jax = _setup()
    from dpjax.spherical.windowed import design_windowed

    def timed(fn):
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0

    row = {"part": "spherical", "backend": jax.default_backend(), "m": a.m, "n": a.n}
    (mech, info), row["design_first_s"] = timed(lambda: design_windowed(a.m, float(a.m), a.n))
    row.update({"N": mech.N, "first": info["first"], "rows": info["rows"], "kl": info["kl"],
                "gaussian_kl": info["gaussian_kl"], "iterations": info.get("iterations")})
    emit_json(row, a.out)  # each step reported as it lands: a timeout keeps what was measured
    for name, fn in (
        ("sample_first_s", lambda: mech.sample(jax.random.key(1), (a.samples,))
         .block_until_ready()),
        ("sample_again_s", lambda: mech.sample(jax.random.key(0), (a.samples,))
         .block_until_ready()),
        ("pld_first_s", lambda: row.__setitem__("epsilon_1e-5", float(mech.epsilon(1e-5)))),
        ("pld_again_s", lambda: mech.epsilon(1e-5)),
        ("design_again_s", lambda: design_windowed(a.m, float(a.m), a.n)),
    ):
        _, row[name] = timed(fn)
        emit_json(dict(row, samples=a.samples), a.out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("device", "fh-grid", "fh-calibrate", "spherical"))
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-8)
    ap.add_argument("--shapes", type=int, default=100)
    ap.add_argument("--variances", type=int, default=100)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--bin-width", type=float, default=1e-4)
    ap.add_argument("--cpu-pairs", type=int, default=0)
    ap.add_argument("--m", type=int, default=10000)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--out", default=None, help="append the JSON lines to this file")
    a = ap.parse_args()
    print("device:", json.dumps(device_report()), flush=True)
    {"device": lambda a: None, "fh-grid": fh_grid, "fh-calibrate": fh_calibrate,
     "spherical": spherical}[a.part](a)


if __name__ == "__main__":
    main()
