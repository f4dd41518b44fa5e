"""Backend registry and the single entry point :func:`solve`.

A backend is an object with ``name``, ``jittable`` and
``solve(problem, **options) -> RawResult``.  :func:`solve` evaluates the
objective and the problem's shared KKT residual at what the backend
returned, and downgrades an ``OPTIMAL`` status to ``INACCURATE`` when that
residual exceeds ``tol``.  Everything after the backend call is written
with ``jnp.where`` (no Python branching on values), so ``solve`` is
jittable whenever the backend is.
"""

from __future__ import annotations

from typing import Protocol

import jax.numpy as jnp

from solvers._problem import ConvexProblem
from solvers._solution import RawResult, Solution, Status


class Backend(Protocol):
    name: str
    jittable: bool

    def solve(self, problem: ConvexProblem, **options) -> RawResult: ...


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    """Register ``backend`` under ``backend.name`` (replaces an existing one)."""
    _BACKENDS[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    if name not in _BACKENDS:
        raise ValueError(f"unknown solver backend {name!r}; known: {', '.join(sorted(_BACKENDS))}")
    return _BACKENDS[name]


def backends() -> tuple[str, ...]:
    """Names of the registered backends."""
    return tuple(sorted(_BACKENDS))


def solve(
    problem: ConvexProblem, backend: str = "jax", *, tol: float = 1e-8, **options
) -> Solution:
    """Solve ``problem`` with the named backend; judge it by ``problem.residual``.

    Args:
      problem: a :class:`ConvexProblem`.
      backend: registered backend name (``"jax"``, ``"cvxpy"``, ...).
      tol: a backend ``OPTIMAL`` whose shared residual exceeds ``tol`` is
        reported as ``INACCURATE``.
      **options: passed to the backend.
    """
    raw = get_backend(backend).solve(problem, **options)
    x = jnp.asarray(raw.x)
    lam = jnp.asarray(raw.inequality_multipliers)
    nu = jnp.asarray(raw.equality_multipliers)
    res = problem.residual(x, lam, nu)
    status = jnp.asarray(raw.status, dtype=jnp.int32)
    bad = jnp.isnan(res.total) | ~jnp.all(jnp.isfinite(x))
    status = jnp.where((status == Status.OPTIMAL) & bad, Status.FAILED, status)
    status = jnp.where((status == Status.OPTIMAL) & (res.total > tol), Status.INACCURATE, status)
    stats = dict(raw.stats)
    be = get_backend(backend)
    if not be.jittable:  # jittable backends keep stats numeric so Solution can leave jax.jit
        stats.setdefault("backend", backend)
    return Solution(
        x=x,
        value=problem.objective(x),
        status=status,
        residual=res,
        inequality_multipliers=lam,
        equality_multipliers=nu,
        stats=stats,
    )
