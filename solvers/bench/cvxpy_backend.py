r"""The host backends of the benchmark: cvxpy with Clarabel, SCS or ECOS, under a hard time limit.

Each backend runs the problem's cvxpy model (hook ``cvxpy_model``) through
:class:`solvers.CvxpySolver` at tight tolerances (:data:`CVXPY_SETTINGS`),
by default in a spawned worker process that is killed once it has spent the
time limit (after an untimed start-up and warm-up), so that solvers without a
time-limit option (ECOS) and canonicalisation are bounded too.  The worker is
kept for the backend's next instance (one start-up -- importing jax, cvxpy and
the solver, several seconds on a loaded machine -- per backend instead of per
solve) and replaced only after a kill.  The answer goes back to
:mod:`solvers.bench.runner`, which verifies it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import jax
import numpy as np

from solvers.bench._run import SETUP_LIMIT, Run

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
    isolate: bool = True
    setup_limit: float = SETUP_LIMIT
    _worker: Any = dataclasses.field(default=None, init=False, repr=False, compare=False)
    _sizes: set = dataclasses.field(default_factory=set, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        return f"cvxpy-{self.solver.lower()}"

    def close(self, kill: bool = False) -> None:
        """Stop the worker process (a later :meth:`run` starts a new one).

        Args:
          kill: kill it at once (it may still be solving) instead of asking it to exit.
        """
        if self._worker is not None:
            self._worker.close(kill)
            self._worker = None

    def run(self, problem, time_limit: float, repeats: int) -> Run:
        """Solve ``repeats`` times (model build and canonicalisation reported as ``setup_s``).

        With ``isolate`` (the default) the solves run in a worker process
        (``spawn``, kept between calls) that is killed once it has spent
        ``time_limit`` per solve after its warm-up (plus ``setup_limit`` on the
        first call of a size in that worker): a hard limit also for solvers
        without a time-limit option (ECOS) and for canonicalisation.

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
        if self._worker is None or not self._worker.alive():
            self._worker = _Worker()
            self._sizes = set()
        # a size new to this worker compiles the polish (and fills caches): allow setup_limit
        size = tuple(np.shape(v) for v in jax.tree_util.tree_leaves(problem))
        budget = time_limit * max(1, repeats) + (0.0 if size in self._sizes else self.setup_limit)
        self._sizes.add(size)
        run = self._worker.solve(args, budget)
        if run.error:  # killed, died or raised: never reuse that process
            self.close(kill=True)
        return run


def _host_solves(problem, solver_name, options, repeats, time_limit) -> Run:
    """``repeats`` timed cvxpy solves (stops after one whose wall time exceeds ``time_limit``).

    Each solve's wall time is split into setup (the model build and cvxpy's
    canonicalisation, ``stats["setup_s"]`` of :class:`solvers.CvxpySolver`) and
    the solve proper (the conic solver, the answer's recovery and the Newton
    polish): ``Run.times`` holds the latter, ``Run.setup_s`` the median of the former.
    """
    from solvers.cvxpy_reference import CvxpySolver

    solver = CvxpySolver(solver=solver_name, options=options)
    times, setups, raw = [], [], None
    for _ in range(repeats):
        t = time.perf_counter()
        raw = solver.solve(problem)
        wall = time.perf_counter() - t
        setup = min(float(raw.stats.get("setup_s") or 0.0), wall)  # build + canonicalisation
        times.append(wall - setup)
        setups.append(setup)
        if wall > time_limit:
            break
    return Run(np.asarray(raw.x), np.asarray(raw.inequality_multipliers),
               np.asarray(raw.equality_multipliers), int(raw.status), tuple(times),
               setup_s=float(np.median(setups)))


def warm_up(problem, solver_name: str, first: bool = True) -> None:
    """Warm-up left out of the timing: the first build of the problem's model (its JAX ops
    compile) and, on a worker's ``first`` call for a solver, cvxpy's and the solver's lazy
    imports (one tiny exponential-cone solve).

    Args:
      problem: the problem (``cvxpy_model`` hook).
      solver_name: the cvxpy solver name.
      first: also warm the solver up (its first use in this process).
    """
    import warnings

    import cvxpy as cp

    problem.cvxpy_model(cp)
    if not first:
        return
    y = cp.Variable(2, pos=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cp.Problem(cp.Minimize(cp.sum(cp.rel_entr(y, np.ones(2)))),
                       [cp.sum(y) == 1]).solve(solver=solver_name)
        except cp.error.SolverError:
            pass


def _serve(conn) -> None:  # pragma: no cover - runs in the worker process
    import jax as _jax

    _jax.config.update("jax_enable_x64", True)
    warmed: set = set()
    while True:
        try:
            args = conn.recv()
        except EOFError:
            return
        if args is None:
            return
        warm_up(args[0], args[1], args[1] not in warmed)
        warmed.add(args[1])
        conn.send("ready")
        try:
            conn.send(_host_solves(*args))
        except Exception as err:  # noqa: BLE001 - reported to the parent as a failure
            conn.send(f"{type(err).__name__}: {err}")


class _Worker:
    """A spawned process serving :func:`_host_solves` calls, killed at a time limit."""

    def __init__(self):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def alive(self) -> bool:
        return self.proc.is_alive()

    def close(self, kill: bool = False) -> None:
        if self.proc.is_alive() and not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
            self.proc.join(5.0)
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()

    def solve(self, args, budget: float) -> Run:
        """Send one task; wait untimed for its warm-up, then at most ``budget + 1`` s."""
        def failed(msg):
            return Run(None, None, None, 5, (math.inf,), error=msg)

        problem = jax.tree_util.tree_map(np.asarray, args[0])  # host arrays pickle cheaply
        try:
            self.conn.send((problem, *args[1:]))
            if not self.conn.poll(600.0):  # start-up (imports, unpickling) is not timed
                return failed("worker did not start")
            self.conn.recv()
            if not self.conn.poll(budget + 1.0):
                return failed("killed at the time limit")
            out = self.conn.recv()
        except (EOFError, OSError):
            return failed("worker died")
        return failed(out) if isinstance(out, str) else out


__all__ = ["CVXPY_SETTINGS", "CvxpyBackend", "warm_up"]
