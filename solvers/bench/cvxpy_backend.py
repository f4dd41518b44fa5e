r"""The host backends of the benchmark: cvxpy with Clarabel, SCS or ECOS, under a hard time limit.

Each backend runs the problem's cvxpy model (hook ``cvxpy_model``) through
:class:`solvers.CvxpySolver` at tight tolerances (:data:`CVXPY_SETTINGS`),
by default in a spawned child process that is killed once it has spent the
time limit (after an untimed start-up and warm-up), so that solvers without a
time-limit option (ECOS) and canonicalisation are bounded too.  The answer
goes back to :mod:`solvers.bench.runner`, which verifies it.
"""

from __future__ import annotations

import dataclasses
import math
import time

import jax
import numpy as np

from solvers.bench._run import Run

#: cvxpy solver -> (its time-limit option, tight tolerances used for the benchmark)
CVXPY_SETTINGS = {
    "CLARABEL": ("time_limit", {}),  # solvers.CvxpySolver's own tight defaults
    "SCS": ("time_limit_secs", {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 100_000}),
    "ECOS": (None, {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10, "max_iters": 400}),
}


@dataclasses.dataclass
class CvxpyBackend:
    """cvxpy with one conic solver (:class:`solvers.CvxpySolver`), at tight tolerances.

    The problem's ``cvxpy_polish`` choice is kept (the allocation programmes
    Newton-polish the IPM point; the spherical KL programme does not).

    Args:
      solver: the cvxpy solver name (``CLARABEL``, ``SCS``, ``ECOS``).
    """

    solver: str = "CLARABEL"
    kind = "host"

    @property
    def name(self) -> str:
        return f"cvxpy-{self.solver.lower()}"

    isolate: bool = True

    def run(self, problem, time_limit: float, repeats: int) -> Run:
        """Solve ``repeats`` times (canonicalisation included in each time).

        With ``isolate`` (the default) the solves run in a child process
        (``spawn``) that is killed once it has spent ``time_limit`` per solve
        after its start-up: a hard limit also for solvers without a time-limit
        option (ECOS) and for canonicalisation.

        Args:
          problem: the problem (needs the ``cvxpy_model`` hook).
          time_limit: seconds, passed as the solver's own limit where it has one.
          repeats: timed solves.
        """
        limit_opt, tight = CVXPY_SETTINGS.get(self.solver.upper(), (None, {}))
        opts = dict(tight)
        if limit_opt is not None and math.isfinite(time_limit):
            opts[limit_opt] = float(time_limit)
        args = (problem, self.solver, tuple(opts.items()), max(1, repeats), time_limit)
        if not self.isolate or not math.isfinite(time_limit):
            return _host_solves(*args)
        return _in_child(args, time_limit * max(1, repeats))


def _host_solves(problem, solver_name, options, repeats, time_limit) -> Run:
    """``repeats`` timed cvxpy solves (stops after one that exceeds ``time_limit``)."""
    from solvers.cvxpy_reference import CvxpySolver

    solver = CvxpySolver(solver=solver_name, options=options)
    times, raw = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        raw = solver.solve(problem)
        times.append(time.perf_counter() - t)
        if times[-1] > time_limit:
            break
    return Run(np.asarray(raw.x), np.asarray(raw.inequality_multipliers),
               np.asarray(raw.equality_multipliers), int(raw.status), tuple(times))


def _warm_up(problem, solver_name: str) -> None:
    """Warm-up left out of the timing: cvxpy's and the solver's lazy imports (one tiny
    exponential-cone solve) and the first build of the problem's model (its JAX ops compile)."""
    import warnings

    import cvxpy as cp

    problem.cvxpy_model(cp)
    y = cp.Variable(2, pos=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cp.Problem(cp.Minimize(cp.sum(cp.rel_entr(y, np.ones(2)))),
                       [cp.sum(y) == 1]).solve(solver=solver_name)
        except cp.error.SolverError:
            pass


def _child(conn, args) -> None:  # pragma: no cover - runs in the child process
    import jax as _jax

    _jax.config.update("jax_enable_x64", True)
    _warm_up(args[0], args[1])
    conn.send("ready")
    try:
        conn.send(_host_solves(*args))
    except Exception as err:  # noqa: BLE001 - reported to the parent as a failure
        conn.send(f"{type(err).__name__}: {err}")
    conn.close()


def _in_child(args, budget: float) -> Run:
    """Run :func:`_host_solves` in a spawned child; kill it after ``budget`` s of solving."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    problem = jax.tree_util.tree_map(np.asarray, args[0])  # host arrays pickle cheaply
    proc = ctx.Process(target=_child, args=(child, (problem, *args[1:])), daemon=True)
    proc.start()
    try:
        if not parent.poll(600.0):  # start-up (imports, unpickling) is not timed
            return Run(None, None, None, 5, (math.inf,), error="child did not start")
        parent.recv()
        if not parent.poll(budget + 1.0):
            return Run(None, None, None, 5, (math.inf,), error="killed at the time limit")
        out = parent.recv()
    except EOFError:
        return Run(None, None, None, 5, (math.inf,), error="child died")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
    if isinstance(out, str):
        return Run(None, None, None, 5, (math.inf,), error=out)
    return out


__all__ = ["CVXPY_SETTINGS", "CvxpyBackend"]
