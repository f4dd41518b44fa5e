"""Bench: the geometric spherical design's banded barrier-Newton solver, host vs JAX.

The same programme (the window, band and tail of :func:`dpjax.spherical.geometric.plan` at the
geometric shell count) solved by the host solver
(:func:`dpjax.spherical.banded.solve_banded_kl`: NumPy/SciPy, LAPACK ``dpbtrf`` on one BLAS
thread, no compilation) and by the JAX solver
(:func:`dpjax.spherical.banded_jax.solve_banded_kl_jax`: the whole path in one jitted
``lax.while_loop``, block-tridiagonal Cholesky).  Per row: the window (nodes ``N+1``, band
``b``, rows ``M``), the KL of each and their relative difference, Newton steps, the host
solve, the JAX first call (compile + solve) and its compile share (first call minus the
steady solve), the JAX steady solve (best of ``--repeats`` after the first call), and the
ratio ``jax / host`` of the steady solves -- each as wall seconds and as CPU seconds of the
process (all its threads; the steadier number on a shared machine).  The cells (incomplete
beta, host) are computed once per row, untimed.  The JAX compile is measured cold: dpjax's
persistent compilation cache is switched off (``DPJAX_NO_COMPILATION_CACHE=1``) unless
``--cache`` is given.

The JAX solver exists for accelerators (no host round trip per step); on a CPU it is expected
to be no faster than LAPACK's band Cholesky.  The device line says which backend JAX used.

Usage: python bench/bench_spherical_solver.py [--cases 10:2.5,10:10,1000:1000,10000:10000]
       [--repeats 3] [--cache]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time


def _timed(fn, *args):
    """``(result, wall s, process CPU s)`` of ``fn(*args)``."""
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w, time.process_time() - c


def _parse_cases(text: str) -> list[tuple[int, float]]:
    out = []
    for item in text.split(","):
        m, c = item.split(":")
        out.append((int(m), float(c)))
    return out


def main() -> None:
    """Print the host-vs-JAX table (module docstring)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="10:2.5,10:10,1000:1000,10000:10000",
                    help="m:C pairs (dimension : budget)")
    ap.add_argument("--repeats", type=int, default=3, help="timed solves after the first")
    ap.add_argument("--cache", action="store_true",
                    help="keep dpjax's persistent compilation cache (compile = cache load)")
    args = ap.parse_args()
    if not args.cache:
        os.environ["DPJAX_NO_COMPILATION_CACHE"] = "1"  # before dpjax is imported

    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    from dpjax.spherical.banded import solve_banded_kl
    from dpjax.spherical.banded_jax import solve_banded_kl_jax
    from dpjax.spherical.geometric import plan, programme

    dev = jax.devices()[0]
    print(f"# device: JAX backend {jax.default_backend()} ({dev.device_kind}, "
          f"{len(jax.devices())} device(s)); jax {jax.__version__}, numpy {np.__version__}, "
          f"python {platform.python_version()}, float64; os.cpu_count() {os.cpu_count()}; "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; compilation cache "
          f"{'on' if args.cache else 'off'}")
    print("m | C | N+1 | b | M | KL host | KL jax | rel diff | steps host/jax | host s (cpu) | "
          "jax first s (cpu) | jax compile s (cpu) | jax solve s (cpu) | jax/host wall (cpu)")
    for m, C in _parse_cases(args.cases):
        p = plan(m, C)
        prob, _, log_v, y0 = programme(p)
        mu = np.exp(y0 + log_v[: prob.N + 1])
        weight = mu[:-1] / mu.sum()
        reps = max(1, args.repeats)
        data = (prob, y0, weight)
        host_runs = [_timed(solve_banded_kl, *data) for _ in range(reps)]
        # host values at the end: the JAX result is waited for
        jx, first, first_cpu = _timed(solve_banded_kl_jax, *data)
        jax_runs = [_timed(solve_banded_kl_jax, *data) for _ in range(reps)]
        host = host_runs[-1][0]
        hs, hc = min(r[1] for r in host_runs), min(r[2] for r in host_runs)
        js, jc = min(r[1] for r in jax_runs), min(r[2] for r in jax_runs)
        rel = (jx["kl"] - host["kl"]) / host["kl"]
        print(f"{m} | {C:g} | {prob.N + 1} | {prob.half_width} | {prob.log_w.shape[0]} | "
              f"{host['kl']:.12f} | {jx['kl']:.12f} | {rel:+.1e} | "
              f"{host['newton_steps']}/{jx['newton_steps']} | {hs:.3f} ({hc:.3f}) | "
              f"{first:.2f} ({first_cpu:.2f}) | {first - js:.2f} ({first_cpu - jc:.2f}) | "
              f"{js:.3f} ({jc:.3f}) | {js / hs:.2f} ({jc / hc:.2f})", flush=True)
        if host["status"] != 0 or jx["status"] != 0:
            print(f"# status host {host['status']}, jax {jx['status']}", file=sys.stderr)


if __name__ == "__main__":
    main()
