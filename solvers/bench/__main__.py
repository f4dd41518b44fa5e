"""``python -m solvers.bench``: run a family on every installed backend and write the report.

Example (the headline table; the spherical KL families of dpjax are found through
their entry point, :data:`solvers.bench.families.ENTRY_POINT_GROUP`)::

  python -m solvers.bench --family spherical-kl --out bench-out/kl

Writes ``report.md``, ``profile.png``, ``results.csv`` and ``results.json``
into ``--out`` (default ``bench-out/solvers``, ignored by git) and prints the
summary; ``--json`` prints ``results.json``.
"""

from __future__ import annotations

import os

# jaxlib's CPU Cholesky calls OpenBLAS: on shared cores its threads slow small factorisations
# by orders of magnitude; one thread for every backend alike (recorded in the provenance)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m solvers.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--family", help="family name (--list shows them)")
    ap.add_argument("--families-from", action="append", default=[], metavar="MODULE",
                    help="also import MODULE to register its families (repeatable); installed "
                         "packages' families are found through their entry points")
    ap.add_argument("--sizes", help="size labels separated by ';' (default: the family's)")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    ap.add_argument("--backends", help="comma-separated backends (default: all installed)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per solve")
    ap.add_argument("--repeats", type=int, default=3, help="timed JAX solves per instance")
    ap.add_argument("--host-repeats", type=int, default=1, help="timed host solves per instance")
    ap.add_argument("--baseline", default="cvxpy-clarabel", help="backend of the ratios")
    ap.add_argument("--batch", type=int, default=8,
                    help="batched-throughput batch size at the smallest size (0: skip)")
    ap.add_argument("--run-after-timeout", action="store_true",
                    help="run every size even after a backend hit the limit at a smaller one "
                         "(default: those count as failures at the limit without running)")
    ap.add_argument("--out", default="bench-out/solvers", help="output folder")
    ap.add_argument("--list", action="store_true", help="list families and backends, then exit")
    ap.add_argument("--json", action="store_true", help="print results.json")
    ap.add_argument("--report-from", metavar="RESULTS_JSON",
                    help="re-render the report of an earlier run into --out (no solving)")
    return ap


def _fail(msg: str) -> int:
    print(f"python -m solvers.bench: error: {msg}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    """Parse ``argv``, run, write the report; exit status 2 on misuse.

    Args:
      argv: the arguments (default ``sys.argv[1:]``).
    """
    args = _parser().parse_args(argv)
    from solvers.bench.families import load_entry_points

    for name, err in load_entry_points().items():
        print(f"python -m solvers.bench: warning: families {name!r} not loaded ({err})",
              file=sys.stderr)
    for module in args.families_from:
        try:
            importlib.import_module(module)
        except ImportError as err:
            return _fail(f"cannot import {module}: {err}")
    import jax

    jax.config.update("jax_enable_x64", True)
    from solvers.bench import report, runner
    from solvers.bench.families import families, get_family

    try:
        backends = runner.available_backends(args.backends)
    except ValueError as err:
        return _fail(str(err))
    if args.list:
        for name in families():
            f = get_family(name)
            print(f"{name}: {f.description} (sizes {'; '.join(f.sizes)})")
        print("backends:", ", ".join(b.name for b in backends))
        return 0
    if args.report_from:
        try:
            path = report.report_from_json(args.report_from, Path(args.out), args.baseline)
        except (OSError, ValueError, KeyError) as err:
            return _fail(f"cannot read {args.report_from}: {err}")
        print(f"report: {path}")
        return 0
    if not args.family:
        return _fail("--family is required (--list shows the families)")
    if args.time_limit <= 0 or args.repeats < 1 or args.host_repeats < 1 or args.batch < 0:
        return _fail("need --time-limit > 0, --repeats >= 1, --host-repeats >= 1, --batch >= 0")
    try:
        family = get_family(args.family)
        seeds = [int(s) for s in args.seeds.split(",")]
        sizes = args.sizes.split(";") if args.sizes else list(family.sizes)
        instances = [family.make(size, seed) for size in sizes for seed in seeds]
    except ValueError as err:
        return _fail(str(err))

    def show(row):
        print(f"{row['instance']:<70} {row['backend']:<15} {row['time_s']:10.4g} s "
              f"res {row['residual']:.1e} {'ok' if row['solved_1e-08'] else 'FAIL'}"
              f"{' (limit)' if row['timed_out'] else ''}", file=sys.stderr, flush=True)

    try:
        rows = runner.run_benchmark(instances, backends, args.time_limit, args.repeats,
                                    args.host_repeats, progress=show,
                                    skip_after_timeout=not args.run_after_timeout)
        throughput = []
        if args.batch and family.batchable:
            batch = [family.make(sizes[0], seed) for seed in range(args.batch)]
            host = next((b for b in backends if b.name == args.baseline), None)
            throughput.append(runner.batched_throughput(batch, host, args.time_limit,
                                                        args.repeats))
    finally:
        for b in backends:
            if hasattr(b, "close"):
                b.close()
    prov = report.provenance(seeds, args.time_limit, args.repeats, args.host_repeats)
    prov["skip_after_timeout"] = not args.run_after_timeout
    path = report.write_report(rows, Path(args.out), prov, throughput, args.baseline)
    if args.json:
        print((Path(args.out) / "results.json").read_text())
    else:
        for ln in report.summary(rows, args.time_limit, args.baseline):
            print(f"{ln['backend']:<15} tol {ln['tol']:g}: solved {ln['solved']}/"
                  f"{ln['instances']}, sgm ratio vs {ln['baseline']} {ln['ratio_10']:.3g} "
                  f"(shift 10 s), {ln['ratio_0.001']:.3g} (shift 1 ms)")
        for th in throughput:
            print(f"batched {th['family']} {th['size']} x{th['batch']}: jax "
                  f"{th['jax_instances_per_s']:.4g}/s"
                  + (f", {th['host_backend']} loop {th['host_instances_per_s']:.4g}/s, ratio "
                     f"{th['throughput_ratio']:.4g}x" if "host_backend" in th else ""))
        print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
