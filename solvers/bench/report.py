r"""Reports of a benchmark run: shifted geometric means, performance profiles, files.

Shifted geometric mean (Mittelmann's benchmarks, qpbenchmark) of the times
``t_i`` of one backend, failures counted at the time limit:

.. math:: \mathrm{sgm}_s(t) = \exp\Big(\frac1n \sum_i \log(t_i + s)\Big) - s,

reported as the ratio to a baseline backend (``> 1``: slower than the
baseline).  The conventional shift ``s = 10`` s flattens sub-second
differences, so a small shift (1 ms) is reported beside it.  The headline
ratios are of solve times (``time_s``: setup excluded, every size warmed up
once, :func:`solvers.bench.runner.run_benchmark`); the end-to-end ratios
beside them are of ``end_to_end_s``, what a user waits (setup included:
process start, imports, compilation, canonicalisation).  Dolan--Moré
performance profile (Dolan and Moré, Math. Program. 91, 2002): for each
backend ``b``, the share of instances it solves within a factor ``tau`` of the
fastest backend on that instance,

.. math:: \rho_b(\tau) = \frac{|\{i : t_{i,b} \le \tau \min_{b'} t_{i,b'}\}|}{n},

with unsolved instances at ``t = inf``.  Files: ``results.csv`` and
``results.json`` (rows plus provenance), ``profile.png``, ``report.md``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

from solvers.bench.runner import TOLERANCES

#: the conventional shift (seconds) and the small one reported beside it
SHIFTS = (10.0, 1e-3)


def shifted_geometric_mean(times, shift: float) -> float:
    """``exp(mean(log(t + shift))) - shift`` (module docstring).

    Args:
      times: positive times (failures already set to the time limit).
      shift: ``s >= 0``.

    Example:
      >>> round(shifted_geometric_mean([1.0, 100.0], 0.0), 6)
      10.0
    """
    t = np.asarray(times, dtype=np.float64)
    if t.size == 0 or shift < 0:
        raise ValueError("need at least one time and shift >= 0")
    return float(np.exp(np.mean(np.log(t + shift))) - shift)


def _times_at(rows, backend, tol, limit, key="time_s"):
    """``{instance: row[key]}`` of ``backend`` with unsolved instances at ``limit``."""
    return {r["instance"]: (r.get(key, r["time_s"]) if r[f"solved_{tol:g}"] else limit)
            for r in rows if r["backend"] == backend}


def summary(rows, time_limit: float, baseline: str = "cvxpy-clarabel") -> list[dict]:
    """One line per (backend, tolerance): solved count and shifted-geometric-mean ratios.

    Keys ``sgm_<shift>`` / ``ratio_<shift>`` are of solve times (the headline),
    ``sgm_e2e_<shift>`` / ``ratio_e2e_<shift>`` of end-to-end times (setup included).

    Args:
      rows: rows of :func:`solvers.bench.runner.run_benchmark`.
      time_limit: the run's time limit (failures are counted at it).
      baseline: the backend the ratios are taken against (first backend if absent).
    """
    names = list(dict.fromkeys(r["backend"] for r in rows))
    base = baseline if baseline in names else names[0]
    out = []
    for tol in TOLERANCES:
        for name in names:
            line = {"backend": name, "tol": tol, "solved": sum(
                r[f"solved_{tol:g}"] for r in rows if r["backend"] == name), "baseline": base}
            for key, tag in (("time_s", ""), ("end_to_end_s", "e2e_")):
                t = _times_at(rows, name, tol, time_limit, key)
                ref = _times_at(rows, base, tol, time_limit, key)
                line["instances"] = len(t)
                keys = sorted(t)
                for s in SHIFTS:
                    own = shifted_geometric_mean([t[k] for k in keys], s)
                    other = shifted_geometric_mean([ref[k] for k in keys], s)
                    line[f"sgm_{tag}{s:g}"] = own
                    line[f"ratio_{tag}{s:g}"] = own / other
            out.append(line)
    return out


def performance_profile(rows, tol: float, taus=None) -> tuple[np.ndarray, dict]:
    """Dolan--Moré profile at ``tol``: ``(taus, {backend: rho(taus)})``.

    Args:
      rows: benchmark rows.
      tol: success tolerance (unsolved instances count as ``inf``).
      taus: ratios at which to evaluate (default: log-spaced 1..1e4).
    """
    taus = np.logspace(0, 4, 200) if taus is None else np.asarray(taus, dtype=np.float64)
    names = list(dict.fromkeys(r["backend"] for r in rows))
    inst = list(dict.fromkeys(r["instance"] for r in rows))
    t = np.full((len(inst), len(names)), np.inf)
    for r in rows:
        if r[f"solved_{tol:g}"]:
            t[inst.index(r["instance"]), names.index(r["backend"])] = max(r["time_s"], 1e-12)
    best = np.min(t, axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        ratio = np.where(np.isfinite(best), t / best, np.inf)
    return taus, {b: np.mean(ratio[:, j][:, None] <= taus[None, :], axis=0)
                  for j, b in enumerate(names)}


def provenance(seeds, time_limit, repeats, host_repeats, argv=None) -> dict:
    """Versions, precision, device, CPU, threads, seeds and settings of a run.

    Args:
      seeds: the seeds used.
      time_limit: seconds per solve.
      repeats: JAX repetitions.
      host_repeats: host repetitions.
      argv: the command line (default ``sys.argv``).
    """
    import importlib.metadata as md

    import jax

    versions = {}
    for pkg in ("jax", "jaxlib", "numpy", "scipy", "cvxpy", "clarabel", "scs", "ecos"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")),
                       cpu)
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=False).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {
        "python": sys.version.split()[0], "versions": versions,
        "x64": bool(jax.config.jax_enable_x64), "device": str(jax.devices()[0]),
        "platform": platform.platform(), "cpu": cpu, "cpu_count": os.cpu_count(),
        "threads": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                   "MKL_NUM_THREADS", "XLA_FLAGS")},
        "seeds": list(seeds), "time_limit_s": time_limit, "repeats": repeats,
        "host_repeats": host_repeats, "tolerances": list(TOLERANCES), "shifts_s": list(SHIFTS),
        "git_commit": commit, "argv": list(sys.argv if argv is None else argv),
        # compile times are cache loads when a persistent compilation cache holds the programs
        "compilation_cache_dir": jax.config.jax_compilation_cache_dir,
    }


def _finite(obj):
    """JSON-safe copy: NumPy scalars as Python numbers, ``inf``/``nan`` as ``None``."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _plot_profiles(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(TOLERANCES), figsize=(5 * len(TOLERANCES), 4), sharey=True)
    for ax, tol in zip(np.atleast_1d(axes), TOLERANCES, strict=True):
        taus, rho = performance_profile(rows, tol)
        for name, curve in rho.items():
            ax.step(taus, curve, where="post", label=name)
        ax.set_xscale("log")
        ax.set_xlabel(r"$\tau$ (time / fastest)")
        ax.set_title(f"solved to KKT residual <= {tol:g}")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("share of instances")
    np.atleast_1d(axes)[-1].legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _markdown(rows, lines, prov, throughput) -> str:
    out = ["# Solver benchmark", "",
           f"Time limit {prov['time_limit_s']:g} s per solve (failures counted at it).  Solve "
           "time: the first instance of each size and backend is solved once untimed (the "
           f"warm-up), then every instance is timed alike: JAX the median of {prov['repeats']} "
           f"solves of the compiled programme, host solvers {prov['host_repeats']} solve(s) less "
           "their model build and canonicalisation.  Setup (process start, imports, "
           "compilation, canonicalisation) is reported apart; end-to-end = setup + solve, what "
           "a user waits (the warm-up's wall time for the first instance of a size).  Success "
           "= the problem's own KKT residual (float64) <= tol; the backend's status is not "
           "trusted.", "",
           "## Shifted geometric means (ratio to the baseline; < 1 is faster)", "",
           "| backend | tol | solved | solve sgm (s=10 s) | solve ratio (s=10 s) "
           "| solve ratio (s=1 ms) | end-to-end sgm (s=10 s) | end-to-end ratio (s=10 s) "
           "| end-to-end ratio (s=1 ms) |", "|---|---|---|---|---|---|---|---|---|"]
    for ln in lines:
        e2e = (f"{ln['sgm_e2e_10']:.4g} | {ln['ratio_e2e_10']:.3g} | {ln['ratio_e2e_0.001']:.3g}"
               if "sgm_e2e_10" in ln else "- | - | -")
        out.append(f"| {ln['backend']} | {ln['tol']:g} | {ln['solved']}/{ln['instances']} | "
                   f"{ln['sgm_10']:.4g} | {ln['ratio_10']:.3g} | {ln['ratio_0.001']:.3g} | "
                   f"{e2e} |")
    out += ["", f"Baseline: {lines[0]['baseline']}.", "", "## Results", "",
            "| instance | backend | solve s (min-max) | setup s | end-to-end s | compile s "
            "| reported | residual | objective | 1e-6 | 1e-8 |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        flag = " (time limit)" if r["timed_out"] else ""
        err = f" {r['error'][:60]}" if r["error"] else ""
        warm = " (warm-up)" if r.get("warm_up") else ""
        out.append(
            f"| {r['instance']} | {r['backend']} | {r['time_s']:.4g} ({r['time_min_s']:.3g}-"
            f"{r['time_max_s']:.3g}){flag} | {r.get('setup_s', math.nan):.3g}{warm} | "
            f"{r.get('end_to_end_s', math.nan):.4g} | {r['compile_s']:.3g} | "
            f"{r['reported_status']}{err} | {r['residual']:.2e} | {r['objective']:.12g} | "
            + " | ".join("yes" if r[f"solved_{tol:g}"] else "no" for tol in TOLERANCES) + " |")
    if throughput:
        out += ["", "## Batched throughput (JAX: the faster of one vmapped solve and a loop of "
                "single compiled solves; host: a loop of solves)", ""]
        for th in throughput:
            both = (f" (vmap {th['jax_vmap_instances_per_s']:.4g}/s, loop "
                    f"{th['jax_loop_instances_per_s']:.4g}/s: {th['jax_strategy']} chosen"
                    + (f"; vmap lanes {th['jax_lane_iterations_mean']:.3g} iterations on average,"
                       f" {th['jax_lane_iterations_max']} at most" if "jax_lane_iterations_max"
                       in th else "") + ")" if "jax_strategy" in th else "")
            out.append(
                f"- {th['family']} at {th['size']}, batch {th['batch']}: JAX "
                f"{th['jax_instances_per_s']:.4g} instances/s{both} (compile "
                f"{th['jax_compile_s']:.3g} s, solved at 1e-8: {th['jax_solved_1e-08']}/"
                f"{th['batch']})"
                + (f"; {th['host_backend']} loop {th['host_instances_per_s']:.4g} instances/s "
                   f"(solved at 1e-8: {th['host_solved_1e-08']}/{th['batch']}); ratio "
                   f"{th['throughput_ratio']:.4g}x" if "host_backend" in th else ""))
    out += ["", "## Failures at residual <= 1e-8 (where and why)", ""] + _failures(rows)
    out += ["", "## Closing note", ""] + _closing_note(rows, lines, throughput)
    out += ["", "## Provenance", "", "```json", json.dumps(prov, indent=1), "```", ""]
    return "\n".join(out)


_STATUS_NAMES = {0: "optimal", 1: "inaccurate", 2: "iteration limit", 3: "infeasible",
                 4: "unbounded", 5: "failed"}


def failure_reason(row) -> str:
    """Why ``row`` is not solved at the tightest tolerance (``""`` if it is).

    Args:
      row: a benchmark row.
    """
    tol = TOLERANCES[-1]
    if row[f"solved_{tol:g}"]:
        return ""
    status = _STATUS_NAMES.get(row["reported_status"], str(row["reported_status"]))
    if row["error"]:
        return row["error"]
    if row["timed_out"]:
        return (f"over the time limit (residual {row['residual']:.2e} when it stopped, "
                f"reported {status})")
    if not math.isfinite(row["residual"]):
        return f"no usable point (not finite), reported {status}"
    return f"residual {row['residual']:.2e} > {tol:g}, reported {status}"


def _failures(rows) -> list[str]:
    """One line per failed (backend, family, size): the instances and the reasons."""
    groups: dict = {}
    for r in rows:
        why = failure_reason(r)
        if why:
            groups.setdefault((r["backend"], r["family"], r["size"]), []).append(
                f"seed {r['seed']}: {why}")
    if not groups:
        return ["- none: every backend solved every instance."]
    return [f"- {b} on {f} at {size}: " + "; ".join(v) for (b, f, size), v in groups.items()]


def _closing_note(rows, lines, throughput) -> list[str]:
    """The headline: ``jax-f64`` against the baseline at the tightest tolerance, and throughput."""
    tol = TOLERANCES[-1]
    base = lines[0]["baseline"]
    line = next((ln for ln in lines if ln["backend"] == "jax-f64" and ln["tol"] == tol), None)
    if line is None or base == "jax-f64":
        return ["(no jax-f64 / baseline pair in this run)"]
    out = [f"- jax-f64 against {base} at residual <= {tol:g}, solve times: shifted geometric "
           f"mean ratio {line['ratio_10']:.3g} (shift 10 s), {line['ratio_0.001']:.3g} (shift "
           f"1 ms); solved {line['solved']}/{line['instances']}, {base} "
           + next(f"{ln['solved']}/{ln['instances']}" for ln in lines
                  if ln["backend"] == base and ln["tol"] == tol) + "."]
    if "ratio_e2e_10" in line:
        out.append(f"- end to end (setup included, what a user waits): ratio "
                   f"{line['ratio_e2e_10']:.3g} (shift 10 s), {line['ratio_e2e_0.001']:.3g} "
                   "(shift 1 ms).")
    for key, what in (("time_s", "solve"), ("end_to_end_s", "end-to-end")):
        both = {}
        for r in rows:
            if r["backend"] in ("jax-f64", base) and r[f"solved_{tol:g}"] and key in r:
                both.setdefault(r["instance"], {})[r["backend"]] = r[key]
        speed = [v[base] / v["jax-f64"] for v in both.values() if len(v) == 2]
        if speed:
            out.append(f"- where both solved ({len(speed)} instances): {base} {what} time / "
                       f"jax-f64 {what} time from {min(speed):.3g} to {max(speed):.3g} "
                       f"(geometric mean {math.exp(np.mean(np.log(speed))):.3g}).")
    for th in throughput:
        if "host_backend" in th:
            out.append(f"- batched ({th['family']} {th['size']}, {th['batch']} instances): "
                       f"{th['jax_instances_per_s']:.4g} instances/s "
                       f"({th.get('jax_strategy', 'vmap')}) against "
                       f"{th['host_instances_per_s']:.4g}/s for the {th['host_backend']} loop "
                       f"({th['throughput_ratio']:.4g}x).")
    return out


def report_from_json(path, out_dir: Path, baseline: str = "cvxpy-clarabel") -> Path:
    """Re-render the report of an earlier run from its ``results.json`` (no solving).

    Args:
      path: a ``results.json`` written by :func:`write_report`.
      out_dir: output folder.
      baseline: backend of the ratios.
    """
    doc = json.loads(Path(path).read_text())

    def undo(v):  # JSON null stood for inf (residual, times) or nan (objective)
        return math.inf if v is None else v

    rows = [{k: (undo(v) if k in ("residual", "time_s", "time_min_s", "time_max_s",
                                  "end_to_end_s") else
                 (math.nan if v is None else v)) for k, v in r.items()} for r in doc["rows"]]
    return write_report(rows, out_dir, doc["provenance"], doc.get("throughput", ()), baseline)


def write_report(rows, out_dir: Path, prov: dict, throughput=(), baseline="cvxpy-clarabel"):
    """Write ``results.csv``, ``results.json``, ``profile.png`` and ``report.md``.

    Args:
      rows: benchmark rows.
      out_dir: output folder (created).
      prov: :func:`provenance`.
      throughput: results of :func:`solvers.bench.runner.batched_throughput`.
      baseline: backend of the ratios.

    Returns:
      The path of ``report.md``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = summary(rows, prov["time_limit_s"], baseline)
    with open(out_dir / "results.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    doc = {"provenance": prov, "summary": lines, "rows": rows, "throughput": list(throughput)}
    (out_dir / "results.json").write_text(json.dumps(_finite(doc), indent=1))
    _plot_profiles(rows, out_dir / "profile.png")
    path = out_dir / "report.md"
    path.write_text(_markdown(rows, lines, prov, list(throughput)))
    return path


__all__ = ["SHIFTS", "failure_reason", "performance_profile", "provenance", "report_from_json",
           "shifted_geometric_mean", "summary", "write_report"]
