"""Design at large dimension on an accelerator beside the host CPU, in one run (issue 35, item 6).

Each case is a ``dpjax`` command a user would type, run in a fresh process twice: once on the
default backend (the GPU where one is present) and once with ``JAX_PLATFORMS=cpu`` on the same
machine's host cores.  Both runs start from the same empty persistent compilation cache
directory per backend, so the first-call times include XLA compiles, as a user's first call
does.  For each run the script records wall seconds, the child's user + system CPU seconds,
the exit status and the command's last output line (the answer), one JSON line per run::

    python bench/bench_gpu_design.py [--out FILE] [--timeout 240] [--only NAME ...]

A third part times the samplers on ``--draws`` float32 draws against ``jax.random`` in-process
(first call and again), on each backend.

The spherical design's banded Newton runs in NumPy on the host (float64), so its GPU and CPU
rows measure the same host computation; the rows are kept to show that, and its PLD accounting
and sampling (JAX) are timed separately by ``bench/bench_gpu.py spherical``.
Measured 2026-11-28 on one NVIDIA H200 (driver 580.159.04, jax 0.11.2 with its CUDA plugin)
beside the same machine's 16 host cores; empty compile caches (first calls), fresh processes.
Raw lines: ``bench/results/gpu_design_2026-11-28.jsonl``::

  command (first call)                    GPU: wall / CPU s   host: wall / CPU s   answer
  design --dim 20 --linf 1                16.4 / 35.0         8.3 / 16.5           FH best
  calibrate flipped-huber K=1e6 exact     43.2 / 84.8         17.1 / 44.5          gamma 4224.68
  inid gaussian exponential K=1e6         12.8 / 18.3         5.9 / 10.1           mu0 0.23670438
  account s=2 q=1e-5 T=1e6 delta=1e-7     13.1 / 39.3         7.0 / 19.9           eps 0.0201922

  1e8 float32 draws on the GPU, again (after compile), vs jax.random on the GPU:
  Gaussian 1.78 ms (0.73x), Laplace 2.06 ms (0.47x), flipped Huber 2.00 ms (0.65x)

A single design call is compile-bound: the GPU's first call is 2x the host's (XLA's GPU
compile), with the same answers.  The host-CPU sampler run (1e8 draws) and the spherical
cases (m = 1e4 .. 1e6) did not finish inside the session's device time and were not measured.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

from _timing import emit_json

CASES = {
    "design-20": ["design", "--dim", "20", "--linf", "1"],
    "fh-kdim-1e6": ["calibrate", "flipped-huber", "--epsilon", "1", "--delta", "1e-6",
                    "--dim", "1000000", "--linf", "1", "--condition", "exact"],
    "inid-exp-1e6": ["inid", "--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-6",
                     "--profile-kind", "exponential", "--dim", "1000000"],
    "account-tiny-q": ["account", "gaussian", "--param", "sigma=2", "--compositions",
                       "1000000", "--sampling-rate", "1e-5", "--delta", "1e-7"],
    "spherical-1e4": ["spherical", "design", "--dim", "10000", "--cost", "10000"],
    "spherical-1e5": ["spherical", "design", "--dim", "100000", "--cost", "100000"],
    "spherical-1e6": ["spherical", "design", "--dim", "1000000", "--cost", "1000000"],
}


def run_case(name: str, args: list[str], backend: str, cache: str, timeout: float) -> dict:
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=cache, PYTHONUNBUFFERED="1")
    if backend == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "dpjax", *args], env=env, timeout=timeout,
                           capture_output=True, text=True)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(
            e.stdout, bytes) else (e.stdout or ""), ""
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [s for s in (out or "").splitlines() if s.strip()]
    return {"part": "cli", "case": name, "backend": backend, "command": "dpjax " + " ".join(args),
            "rc": rc, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "max_rss_mb": round(after.ru_maxrss / 1024, 1),
            "answer_tail": lines[-6:], "stderr_tail": (err or "").splitlines()[-3:]}


def samplers(draws: int, out: str | None) -> None:
    """Float32 draws of the three samplers vs jax.random, first call and again."""
    import jax
    import jax.numpy as jnp

    from dpjax.noise import FlippedHuber, Gaussian, Laplace

    key = jax.random.key(0)

    def timed(fn):
        t0 = time.perf_counter()
        fn().block_until_ready()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        fn().block_until_ready()
        return first, time.perf_counter() - t0

    ref = {"gaussian": lambda: jax.random.normal(key, (draws,), jnp.float32),
           "laplace": lambda: jax.random.laplace(key, (draws,), jnp.float32)}
    ours = {"gaussian": lambda: Gaussian(1.0).sample(key, (draws,), dtype=jnp.float32),
            "laplace": lambda: Laplace(1.0).sample(key, (draws,), dtype=jnp.float32),
            "flipped-huber": lambda: FlippedHuber(1.0, 1.0).sample(key, (draws,),
                                                                   dtype=jnp.float32)}
    ref_again = {k: timed(v)[1] for k, v in ref.items()}
    for name, fn in ours.items():
        first, again = timed(fn)
        peer = ref_again.get(name, ref_again["gaussian"])
        emit_json({"part": "sampler", "backend": jax.default_backend(), "sampler": name,
               "draws": draws, "first_s": first, "again_s": again,
               "jax_random_again_s": peer, "throughput_vs_jax_random": peer / again}, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="append the JSON lines to this file")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per command")
    ap.add_argument("--only", nargs="*", default=None, help="case names (default: all)")
    ap.add_argument("--backends", nargs="*", default=["default", "cpu"])
    ap.add_argument("--draws", type=int, default=10**8)
    ap.add_argument("--sampler-part", choices=("run", "skip", "only"), default="run")
    a = ap.parse_args()
    if a.sampler_part != "only":
        for name, args in CASES.items():
            if a.only and name not in a.only:
                continue
            for backend in a.backends:
                with tempfile.TemporaryDirectory() as cache:
                    emit_json(run_case(name, args, backend, cache, a.timeout), a.out)
    if a.sampler_part != "skip":
        samplers(a.draws, a.out)


if __name__ == "__main__":
    main()
