r"""The benchmark runner: every backend on every instance, verified by the shared KKT residual.

Rules (those of benchopt, Mittelmann's and qpbenchmark's reports):

* **verification from the problem data only** -- each returned point and its
  multipliers are judged by the problem's own KKT residual
  (:meth:`solvers.ConvexProblem.residual`, evaluated in float64 on the float64
  problem); the backend's status is recorded but never trusted: a backend
  that says "optimal" at a wrong point is a failure;
* **success at a matched accuracy** -- an instance is solved at ``tol`` when
  the residual is finite and ``<= tol`` (columns for 1e-6 and 1e-8) *and* the
  solve took at most the time limit;
* **compile time separate** -- JAX backends are lowered and compiled ahead of
  time (``jax.jit(...).lower(problem).compile()``, one compile per shape and
  dtype, timed on its own); the solve times are of the compiled programme
  (``block_until_ready``);
* **time limit** -- host solvers get it as their own option where they have
  one (Clarabel ``time_limit``, SCS ``time_limit_secs``); any solve whose wall
  time exceeds it is a failure recorded *at the limit*;
* **repetitions** -- median, min and max over ``repeats`` solves (host
  solvers, whose solves take seconds, ``host_repeats``); cvxpy times include
  canonicalisation, which a user pays on every solve;
* **no run past a time-out** (``skip_after_timeout``) -- instances run in the
  order given (a family's sizes smallest first); once a backend hits the limit
  on a family and seed, its later instances of that family and seed are
  recorded as failures at the limit without being run (error ``"not run: ..."``),
  as a larger instance would hit it too.

Backends (:func:`available_backends`): ``jax-f64`` / ``jax-f32`` (the
problem's default JAX solver in float64 / on the problem cast to float32),
``cvxpy-clarabel``, ``cvxpy-scs``, ``cvxpy-ecos`` (where installed).  A
backend is an object with ``name``, ``kind`` and ``run(problem, time_limit,
repeats) -> Run``; :func:`run_benchmark` accepts any such object (the tests
use one that lies).
"""

from __future__ import annotations

import dataclasses
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from solvers._registry import resolve
from solvers.bench._run import SETUP_LIMIT, Run
from solvers.bench.cvxpy_backend import CVXPY_SETTINGS, CvxpyBackend

#: success tolerances of the tables (residual columns)
TOLERANCES = (1e-6, 1e-8)


def cast_problem(problem, dtype):
    """``problem`` with every floating array leaf cast to ``dtype``.

    Args:
      problem: a problem pytree.
      dtype: e.g. ``jnp.float32``.
    """
    def cast(a):
        a = jnp.asarray(a)
        return a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a

    return jax.tree_util.tree_map(cast, problem)


def _shape_key(problem) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(problem)
    return (treedef, tuple((np.shape(v), str(jnp.asarray(v).dtype)) for v in leaves))


@dataclasses.dataclass
class JaxBackend:
    """The problem's default JAX solver (``solve(problem, "jax")``), compiled ahead of time.

    Args:
      dtype: ``"float64"`` or ``"float32"`` (the problem's arrays are cast; the
        answer is still verified on the float64 problem).
    """

    dtype: str = "float64"
    kind = "jax"

    def __post_init__(self):
        if self.dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")
        self._compiled: dict = {}

    @property
    def name(self) -> str:
        return "jax-f64" if self.dtype == "float64" else "jax-f32"

    def compiled_program(self, problem, batched: bool = False):
        """``(compiled, compile_s)``: the solve compiled for ``problem``'s shapes (cached).

        Args:
          problem: the problem (already cast to this backend's dtype), or a stack.
          batched: compile the ``jax.vmap`` of the solve over the leading axis.
        """
        key = (_shape_key(problem), batched)
        if key in self._compiled:
            return self._compiled[key], 0.0
        solver = resolve("jax")

        def one(p):
            raw = solver.solve(p)
            iterations = jnp.asarray(raw.stats.get("iterations", -1), jnp.int32)
            return (raw.x, raw.inequality_multipliers, raw.equality_multipliers, raw.status,
                    iterations)

        fn = jax.vmap(one) if batched else one
        t = time.perf_counter()
        compiled = jax.jit(fn).lower(problem).compile()
        compile_s = time.perf_counter() - t
        self._compiled[key] = compiled
        return compiled, compile_s

    def run(self, problem, time_limit: float, repeats: int, batched: bool = False) -> Run:
        """Compile (once per shape), then solve ``repeats`` times.

        Args:
          problem: the (float64) problem, or a stacked batch when ``batched``.
          time_limit: seconds (a JAX solve cannot be interrupted: checked afterwards).
          repeats: timed solves.
          batched: ``problem`` is a stack of problems; solve them under ``jax.vmap``.
        """
        if self.dtype == "float32":
            problem = cast_problem(problem, jnp.float32)
        compiled, compile_s = self.compiled_program(problem, batched)
        times = []
        for _ in range(max(1, repeats)):
            t = time.perf_counter()
            out = jax.block_until_ready(compiled(problem))
            times.append(time.perf_counter() - t)
            if times[-1] > time_limit:
                break
        x, lam, nu, status, iterations = (np.asarray(v) for v in out)
        self.last_iterations = iterations
        return Run(x, lam, nu, status if batched else int(status), tuple(times), compile_s)

    def run_loop(self, problems, repeats: int) -> tuple[list, float, tuple]:
        """The loop of single compiled solves over ``problems`` (one shape): ``(runs,
        compile_s, times)``, ``times`` the wall seconds of each pass over all of them.

        Args:
          problems: problems of one shape (float64; cast here for float32).
          repeats: timed passes.
        """
        if self.dtype == "float32":
            problems = [cast_problem(p, jnp.float32) for p in problems]
        compiled, compile_s = self.compiled_program(problems[0])
        jax.block_until_ready(compiled(problems[0]))  # warm-up, untimed
        times, outs = [], []
        for _ in range(max(1, repeats)):
            t = time.perf_counter()
            outs = [jax.block_until_ready(compiled(p)) for p in problems]
            times.append(time.perf_counter() - t)
        runs = [Run(*(np.asarray(v) for v in o[:3]), int(o[3]), ()) for o in outs]
        return runs, compile_s, tuple(times)


def available_backends(names: str | None = None) -> list:
    """The backends to run: both JAX precisions and every installed cvxpy solver.

    Args:
      names: comma-separated backend names to keep (``None``: all available).

    Raises:
      ValueError: a requested name is not available.
    """
    out: list = [JaxBackend("float64"), JaxBackend("float32")]
    try:
        import cvxpy as cp

        installed = set(cp.installed_solvers())
        out += [CvxpyBackend(s) for s in CVXPY_SETTINGS if s in installed]
    except ImportError:  # pragma: no cover - depends on the environment
        pass
    if names is None:
        return out
    wanted = [v.strip() for v in names.split(",") if v.strip()]
    known = {b.name: b for b in out}
    missing = [w for w in wanted if w not in known]
    if missing:
        raise ValueError(f"backend(s) not available: {', '.join(missing)}; "
                         f"available: {', '.join(known)}")
    return [known[w] for w in wanted]


@jax.jit
def _verify(problem, x, lam, nu):
    res = problem.residual(x, lam, nu)
    return res.total, problem.objective(x), jnp.all(jnp.isfinite(x))


def verify(problem, x, lam, nu) -> tuple[float, float]:
    """``(residual, objective)`` of a returned point on the float64 problem (``inf`` if unusable).

    Args:
      problem: the float64 problem.
      x, lam, nu: the point and multipliers as returned (any float dtype).
    """
    try:
        x = jnp.asarray(x, jnp.float64)
        lam = jnp.asarray(lam, jnp.float64)
        nu = jnp.asarray(nu, jnp.float64)
        total, value, finite = _verify(problem, x, lam, nu)
    except Exception:  # noqa: BLE001 - malformed answers (wrong shape) are failures
        return math.inf, math.nan
    total = float(total)
    if not bool(finite) or not math.isfinite(total):
        return math.inf, math.nan
    return total, float(value)


def _failed_run(message: str) -> Run:
    return Run(None, None, None, 5, (math.inf,), error=message)


def _timed(backend, problem, time_limit, reps) -> tuple[Run, float]:
    """``(run, wall seconds of the call)``; a crash becomes a failed :class:`Run`."""
    t = time.perf_counter()
    try:
        run = backend.run(problem, time_limit, reps)
    except Exception as err:  # noqa: BLE001 - a crash is a failure, not an abort
        run = _failed_run(f"{type(err).__name__}: {err}")
    return run, time.perf_counter() - t


def run_benchmark(instances, backends, time_limit: float = 300.0, repeats: int = 3,
                  host_repeats: int = 1, progress=None,
                  skip_after_timeout: bool = True, setup_limit: float = SETUP_LIMIT) -> list[dict]:
    r"""Run every backend on every instance; one verified row per (instance, backend).

    **Warm-up.**  The first instance of each (backend, family, size, array shapes) is solved
    once untimed before its timed solves (its wall time may exceed ``time_limit``
    by ``setup_limit``; a host backend allows its worker that much more on a new
    size before killing it); the wall time of that call is what a user waits for a
    first solve of this size (process start and imports of a host worker, JAX
    compilation, compilation of the Newton polish, caches).  Every instance is
    then timed alike:

    .. math:: \text{time\_s} = \operatorname{median}(\text{solve}), \quad
              \text{end\_to\_end\_s} = \begin{cases}
                 \text{wall of the warm-up call} & \text{first of its size} \\
                 \text{time\_s} + \text{per-solve setup} & \text{otherwise,}
              \end{cases}

    ``setup_s = end_to_end_s - time_s`` (per-solve setup: cvxpy's model build
    and canonicalisation; JAX: none).  A warm-up that fails (a crash, a kill,
    or over ``time_limit + setup_limit``) is the row; the instance is not solved
    again.

    Args:
      instances: :class:`solvers.bench.families.Instance` objects.
      backends: backend objects (:func:`available_backends`).
      time_limit: seconds per solve (setup included for cvxpy, whose
        canonicalisation is paid on every solve); slower solves fail, recorded at the limit.
      repeats: timed solves of JAX backends.
      host_repeats: timed solves of host backends.
      progress: ``progress(row)`` called after each row (e.g. to print it).
      skip_after_timeout: do not run a backend on the later instances of a family and
        seed once it hit the limit there (module docstring); they fail at the limit.
      setup_limit: seconds a warm-up may take beyond ``time_limit``.

    Returns:
      Rows (dicts): ``instance, family, size, seed, backend, time_s`` (median solve
      time, or the limit on failure), ``time_min_s, time_max_s, repeats, compile_s,
      setup_s, end_to_end_s, warm_up`` (the row paid the warm-up of its size),
      ``reported_status, residual, objective, timed_out, error`` and ``solved_<tol>``
      for each of :data:`TOLERANCES`.
    """
    if not time_limit > 0:
        raise ValueError(f"time_limit must be > 0, got {time_limit}")
    if not setup_limit >= 0:
        raise ValueError(f"setup_limit must be >= 0, got {setup_limit}")
    rows = []
    timed_out_at: dict = {}
    warmed: set = set()
    for inst in instances:
        for backend in backends:
            reps = repeats if backend.kind == "jax" else host_repeats
            key = (backend.name, inst.family, inst.seed)
            # one warm-up per backend and shape (a family's seeds may differ in shape at one
            # size label: the m = 1000 family's free shells depend on the budget)
            shape = (backend.name, inst.family, inst.size, _shape_key(inst.problem))
            first = shape not in warmed
            cold = math.nan
            if skip_after_timeout and key in timed_out_at:
                run = _failed_run(f"not run: hit the time limit at size {timed_out_at[key]}")
            else:
                warmed.add(shape)
                run = None
                if first:
                    warm, wall = _timed(backend, inst.problem, time_limit, 1)
                    # the call's wall time, or what the backend reports when that is more
                    reported = warm.times[0] + warm.setup_s + (
                        warm.compile_s if math.isfinite(warm.compile_s) else 0.0)
                    cold = max(wall, reported)
                    if (warm.error or warm.x is None or not reported <= time_limit + setup_limit
                            or wall > time_limit + setup_limit):
                        run = warm._replace(error=f"warm-up: {warm.error}" if warm.error
                                            else "", times=(max(warm.times[0], wall),))
                if run is None:
                    run, _ = _timed(backend, inst.problem, time_limit, reps)
            residual, value = (math.inf, math.nan) if run.x is None else verify(
                inst.problem, run.x, run.inequality_multipliers, run.equality_multipliers)
            med = float(np.median(run.times))
            in_time = med + run.setup_s <= time_limit
            solve_s = med if in_time else float(time_limit)
            e2e = cold if math.isfinite(cold) else solve_s + run.setup_s
            row = {
                "instance": inst.name, "family": inst.family, "size": inst.size,
                "seed": inst.seed, "backend": backend.name, "time_s": solve_s,
                "time_min_s": float(np.min(run.times)), "time_max_s": float(np.max(run.times)),
                "repeats": len(run.times),
                "compile_s": float(run.compile_s if math.isnan(cold) else warm.compile_s),
                "setup_s": max(e2e - solve_s, 0.0) if in_time else math.nan,
                "end_to_end_s": max(e2e, solve_s) if in_time else float(time_limit),
                "warm_up": first and math.isfinite(cold),
                "reported_status": int(run.reported_status), "residual": residual,
                "objective": value, "timed_out": not in_time, "error": run.error,
            }
            for tol in TOLERANCES:
                row[f"solved_{tol:g}"] = bool(in_time and residual <= tol)
            rows.append(row)
            hit_limit = not in_time and (math.isfinite(med) or "killed" in run.error)
            if hit_limit and key not in timed_out_at:
                timed_out_at[key] = inst.size
            if progress is not None:
                progress(row)
    return rows


def stack(problems):
    """One batched problem from problems of equal shapes (leading batch axis on every array).

    Args:
      problems: problems of one family and size.

    Raises:
      ValueError: shapes or static fields differ.
    """
    keys = {_shape_key(p) for p in problems}
    if len(keys) != 1:
        raise ValueError("problems to batch must share every shape and static field")
    return jax.tree_util.tree_map(lambda *a: jnp.stack([jnp.asarray(v) for v in a]), *problems)


def batched_throughput(instances, host_backend=None, time_limit: float = 300.0,
                       repeats: int = 3) -> dict:
    r"""Instances per second of a batch: JAX batched against a loop of host solves.

    The JAX batch is solved two ways, both compiled ahead of time and timed
    after a warm-up: one ``jax.vmap``-ed solve of the stacked batch, and a loop
    of the single compiled solve over the instances.  Under ``vmap`` a
    ``lax.while_loop`` runs every lane until the slowest lane stops (the
    lanes' iteration counts are reported: ``jax_lane_efficiency = mean / max``)
    and each iteration's dense factorisations run as a batch, so on a CPU the
    loop can win; the batched runner takes the faster of the two measured
    (``jax_strategy``), and ``jax_instances_per_s`` is its throughput:

    .. math:: \text{jax\_instances\_per\_s} = B / \min(t_{vmap}, t_{loop}).

    Every answer is verified (:func:`verify`); throughputs count all instances,
    and the number verified at each tolerance is reported beside them.

    Args:
      instances: instances of one family and size (equal shapes).
      host_backend: the peer looped over the batch (default ``cvxpy-clarabel``; ``None``
        skips it when cvxpy is missing).
      time_limit: seconds per host solve.
      repeats: timed batched solves and loop passes (median).
    """
    batch = stack([i.problem for i in instances])
    jaxb = JaxBackend("float64")
    run = jaxb.run(batch, math.inf, 1, batched=True)  # compile + warm-up, untimed
    lanes = np.asarray(jaxb.last_iterations)
    run = jaxb.run(batch, math.inf, repeats, batched=True)._replace(compile_s=run.compile_s)
    vmap_s = float(np.median(run.times))
    loop_runs, loop_compile_s, loop_times = jaxb.run_loop([i.problem for i in instances],
                                                         repeats)
    loop_s = float(np.median(loop_times))
    vmap_res = [verify(inst.problem, run.x[k], run.inequality_multipliers[k],
                       run.equality_multipliers[k])[0] for k, inst in enumerate(instances)]
    loop_res = [verify(inst.problem, r.x, r.inequality_multipliers, r.equality_multipliers)[0]
                for r, inst in zip(loop_runs, instances, strict=True)]
    strategy = "vmap" if vmap_s <= loop_s else "loop"
    res = vmap_res if strategy == "vmap" else loop_res
    jax_s = min(vmap_s, loop_s)
    n = len(instances)
    out = {"family": instances[0].family, "size": instances[0].size, "batch": n,
           "jax_strategy": strategy, "jax_compile_s": run.compile_s,
           "jax_loop_compile_s": loop_compile_s, "jax_batch_s": jax_s,
           "jax_instances_per_s": n / jax_s,
           "jax_vmap_s": vmap_s, "jax_vmap_instances_per_s": n / vmap_s,
           "jax_loop_s": loop_s, "jax_loop_instances_per_s": n / loop_s,
           "jax_vmap_over_loop": loop_s / vmap_s,
           "jax_max_residual": float(max(res)),
           "jax_vmap_max_residual": float(max(vmap_res)),
           "jax_loop_max_residual": float(max(loop_res))}
    if lanes.size and np.all(lanes >= 0):
        out.update({"jax_lane_iterations_mean": float(np.mean(lanes)),
                    "jax_lane_iterations_max": int(np.max(lanes)),
                    "jax_lane_efficiency": float(np.mean(lanes) / max(np.max(lanes), 1))})
    for tol in TOLERANCES:
        out[f"jax_solved_{tol:g}"] = int(sum(r <= tol for r in res))
    if host_backend is None:
        try:
            host_backend = available_backends("cvxpy-clarabel")[0]
        except ValueError:
            return out
    host_rows = run_benchmark(instances, [host_backend], time_limit, 1, 1)
    host_s = float(sum(r["time_s"] for r in host_rows))
    out.update({"host_backend": host_backend.name, "host_loop_s": host_s,
                "host_instances_per_s": n / host_s,
                "host_max_residual": float(max(r["residual"] for r in host_rows)),
                "throughput_ratio": (n / jax_s) / (n / host_s)})
    for tol in TOLERANCES:
        out[f"host_solved_{tol:g}"] = int(sum(r[f"solved_{tol:g}"] for r in host_rows))
    return out


__all__ = ["CVXPY_SETTINGS", "SETUP_LIMIT", "TOLERANCES", "CvxpyBackend", "JaxBackend", "Run",
           "available_backends", "batched_throughput", "cast_problem", "run_benchmark", "stack",
           "verify"]
