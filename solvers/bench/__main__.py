"""``python -m solvers.bench``: run a family on every installed backend and write the report.

Examples (the spherical KL families of dpjax are found through their entry
point, :data:`solvers.bench.families.ENTRY_POINT_GROUP`)::

  python -m solvers.bench --quick      # every family at its smallest size, 3 seeds
  python -m solvers.bench --family spherical-kl --out bench-out/kl   # the headline table

``--quick`` runs every registered family (``--family`` may narrow it) at its
quick size (:attr:`solvers.bench.Family.quick`: its smallest, or a smaller one
the family names) with seeds 0, 1, 2 on every installed backend, a time limit of
:data:`QUICK_TIME_LIMIT` s, and the batched throughput of
:data:`QUICK_BATCH_FAMILY` at its smallest size: the same report, in minutes.

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

#: --quick: seeds, time limit per solve, and the family whose batched throughput is measured
QUICK_SEEDS = "0,1,2"
QUICK_TIME_LIMIT = 10.0
QUICK_BATCH_FAMILY = "spherical-kl"
#: default output folders (git-ignored: ``/bench-out/`` in ``.gitignore``)
DEFAULT_OUT, QUICK_OUT = "bench-out/solvers", "bench-out/quick"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m solvers.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--family", help="family name, or several separated by ',' (--list shows "
                    "them; 'all': every family)")
    ap.add_argument("--quick", action="store_true",
                    help="every family (or those of --family) at its smallest (quick) size, seeds "
                         f"{QUICK_SEEDS}, time limit {QUICK_TIME_LIMIT:g} s, batched throughput "
                         f"of {QUICK_BATCH_FAMILY}; output bench-out/quick")
    ap.add_argument("--families-from", action="append", default=[], metavar="MODULE",
                    help="also import MODULE to register its families (repeatable); installed "
                         "packages' families are found through their entry points")
    ap.add_argument("--sizes", help="size labels separated by ';' (default: the family's)")
    ap.add_argument("--seeds", help="comma-separated seeds (default 0; --quick: "
                    f"{QUICK_SEEDS})")
    ap.add_argument("--backends", help="comma-separated backends (default: all installed)")
    ap.add_argument("--time-limit", type=float,
                    help=f"seconds per solve (default 300; --quick: {QUICK_TIME_LIMIT:g})")
    ap.add_argument("--setup-limit", type=float, default=None,
                    help="seconds a warm-up solve (the first of each size and backend) may "
                         "take beyond the time limit (default 120)")
    ap.add_argument("--repeats", type=int, default=3, help="timed JAX solves per instance")
    ap.add_argument("--host-repeats", type=int, default=1, help="timed host solves per instance")
    ap.add_argument("--baseline", default="cvxpy-clarabel", help="backend of the ratios")
    ap.add_argument("--batch", type=int, default=8,
                    help="batched-throughput batch size at the smallest size (0: skip)")
    ap.add_argument("--run-after-timeout", action="store_true",
                    help="run every size even after a backend hit the limit at a smaller one "
                         "(default: those count as failures at the limit without running)")
    ap.add_argument("--out", help="output folder (default bench-out/solvers; --quick: "
                    "bench-out/quick)")
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
    if args.quick:
        args.family = args.family or "all"
        args.seeds = args.seeds or QUICK_SEEDS
        args.time_limit = QUICK_TIME_LIMIT if args.time_limit is None else args.time_limit
        args.out = args.out or QUICK_OUT
    args.seeds = args.seeds or "0"
    args.time_limit = 300.0 if args.time_limit is None else args.time_limit
    args.out = args.out or DEFAULT_OUT
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

    setup_limit = runner.SETUP_LIMIT if args.setup_limit is None else args.setup_limit

    try:
        backends = runner.available_backends(args.backends)
    except ValueError as err:
        return _fail(str(err))
    for b in backends:
        if hasattr(b, "setup_limit"):  # host workers: the same allowance for a new size
            b.setup_limit = setup_limit
    if args.list:
        for name in families():
            f = get_family(name)
            print(f"{name}: {f.description} (sizes {'; '.join(f.sizes)}; --quick: {f.quick})")
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
        return _fail("--family is required (--list shows the families; --quick runs all)")
    if (not args.time_limit > 0 or args.repeats < 1 or args.host_repeats < 1 or args.batch < 0
            or not setup_limit >= 0):
        return _fail("need --time-limit > 0, --setup-limit >= 0, --repeats >= 1, "
                     "--host-repeats >= 1, --batch >= 0")
    try:
        names = families() if args.family == "all" else [
            v.strip() for v in args.family.split(",") if v.strip()]
        chosen = [get_family(name) for name in names]
        if not chosen:
            raise ValueError(f"--family: no family named in {args.family!r}")
        seeds = [int(s) for s in args.seeds.split(",")]
        if args.sizes and len(chosen) > 1:
            raise ValueError("--sizes applies to one family; give one --family")
        plan = [(f, args.sizes.split(";") if args.sizes else
                 [f.quick] if args.quick else list(f.sizes)) for f in chosen]
        instances = [f.make(size, seed) for f, sizes in plan for size in sizes for seed in seeds]
    except ValueError as err:
        return _fail(str(err))

    def show(row):
        print(f"{row['instance']:<70} {row['backend']:<15} {row['time_s']:10.4g} s "
              f"(end to end {row['end_to_end_s']:.4g} s) res {row['residual']:.1e} "
              f"{'ok' if row['solved_1e-08'] else 'FAIL'}"
              f"{' (limit)' if row['timed_out'] else ''}", file=sys.stderr, flush=True)

    try:
        rows = runner.run_benchmark(instances, backends, args.time_limit, args.repeats,
                                    args.host_repeats, progress=show,
                                    skip_after_timeout=not args.run_after_timeout,
                                    setup_limit=setup_limit)
        throughput = []
        batch_plan = plan
        if args.quick:  # one throughput row: the headline family, where installed
            batch_plan = [(f, sizes) for f, sizes in plan if f.name == QUICK_BATCH_FAMILY]
        for f, sizes in batch_plan if args.batch else ():
            if f.batchable:
                batch = [f.make(sizes[0], seed) for seed in range(args.batch)]
                host = next((b for b in backends if b.name == args.baseline), None)
                throughput.append(runner.batched_throughput(batch, host, args.time_limit,
                                                            args.repeats))
    finally:
        for b in backends:
            if hasattr(b, "close"):
                b.close()
    prov = report.provenance(seeds, args.time_limit, args.repeats, args.host_repeats)
    prov["skip_after_timeout"] = not args.run_after_timeout
    prov["setup_limit_s"] = setup_limit
    prov["quick"] = bool(args.quick)
    prov["families"] = [f.name for f, _ in plan]
    path = report.write_report(rows, Path(args.out), prov, throughput, args.baseline)
    if args.json:
        print((Path(args.out) / "results.json").read_text())
    else:
        for ln in report.summary(rows, args.time_limit, args.baseline):
            print(f"{ln['backend']:<15} tol {ln['tol']:g}: solved {ln['solved']}/"
                  f"{ln['instances']}, sgm ratio vs {ln['baseline']}: solve "
                  f"{ln['ratio_10']:.3g} (shift 10 s), {ln['ratio_0.001']:.3g} (shift 1 ms); "
                  f"end to end {ln['ratio_e2e_10']:.3g}, {ln['ratio_e2e_0.001']:.3g}")
        for th in throughput:
            print(f"batched {th['family']} {th['size']} x{th['batch']}: jax "
                  f"{th['jax_instances_per_s']:.4g}/s ({th['jax_strategy']}; vmap "
                  f"{th['jax_vmap_instances_per_s']:.4g}/s, loop "
                  f"{th['jax_loop_instances_per_s']:.4g}/s)"
                  + (f", {th['host_backend']} loop {th['host_instances_per_s']:.4g}/s, ratio "
                     f"{th['throughput_ratio']:.4g}x" if "host_backend" in th else ""))
        print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
