r"""Export to the Conic Benchmark Format (CBF, version 3) and a small reader.

The instance written is the problem's cvxpy model (hook ``cvxpy_model``, the
model the ``cvxpy-*`` backends solve) after cvxpy's conic canonicalisation
(``get_problem_data(cvxpy.SCS)``: ``min c^T x + d`` s.t. ``b - A x in K``,
``K`` = zero cone x nonnegative orthant x exponential cones).  CBF states
constraints as ``A' x + b' in K'``, so ``A' = -A``, ``b' = b``; the
exponential cone of CBF is

.. math:: K_{exp} = \operatorname{cl}\{(x_1, x_2, x_3) : x_1 \ge x_2 e^{x_3 / x_2},\ x_2 > 0\},

that of SCS/cvxpy ``{(x, y, z) : z >= y e^{x / y}}``: each triple is written
in reverse order.  Any conic solver that reads CBF (MOSEK, the CBLIB tools,
Hypatia, ...) can then be run on the instance outside dpjax.  Its optimal
value is the cvxpy model's (for :class:`solvers.SphericalKL` the objective
divided by the reference profile's, see ``solvers._spherical_kl_cvxpy``).

:func:`read_cbf` parses the subset written here (``VER``, ``OBJSENSE``,
``VAR``, ``CON``, ``OBJACOORD``, ``OBJBCOORD``, ``ACOORD``, ``BCOORD``;
cones ``F``, ``L=``, ``L+``, ``L-``, ``EXP``) and :func:`cbf_to_cvxpy` rebuilds
a cvxpy problem from it, so a round trip can be checked by solving both.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy import sparse


class CbfData(NamedTuple):
    """A conic programme ``min/max c^T x + d`` s.t. ``A x + b in K`` (CBF conventions).

    Attributes:
      sense: ``"MIN"`` or ``"MAX"``.
      num_vars: number of variables (all free).
      cones: ``((kind, dim), ...)`` in row order.
      c: ``(num_vars,)`` objective.
      d: objective constant.
      A: ``(rows, num_vars)`` sparse matrix (``scipy.sparse.csr_array``).
      b: ``(rows,)``.
    """

    sense: str
    num_vars: int
    cones: tuple
    c: np.ndarray
    d: float
    A: sparse.csr_array
    b: np.ndarray


def cvxpy_to_cbf_data(cvxpy_problem) -> CbfData:
    """Canonicalise a cvxpy problem (zero, nonnegative and exponential cones) into :class:`CbfData`.

    Args:
      cvxpy_problem: a ``cvxpy.Problem`` that SCS accepts.

    Raises:
      ValueError: the canonical form has cones CBF export does not handle here
        (second-order, semidefinite, power) or variable bounds.
    """
    import cvxpy as cp

    if not isinstance(cvxpy_problem.objective, cp.Minimize):
        raise ValueError("only minimisation problems are exported")
    data, _, _ = cvxpy_problem.get_problem_data(cp.SCS)
    dims = data["dims"]
    if dims.soc or dims.psd or dims.p3d or getattr(dims, "pnd", None):
        raise ValueError("only zero, nonnegative and exponential cones are exported")
    if data.get("lower_bounds") is not None or data.get("upper_bounds") is not None:
        raise ValueError("variable bounds are not exported")
    d = float(np.asarray(data["param_prob"].apply_parameters()[1]))
    A = -sparse.csr_array(data["A"], dtype=np.float64)
    b = np.asarray(data["b"], dtype=np.float64)
    start = dims.zero + dims.nonneg
    order = np.arange(b.size)
    exp_rows = order[start:start + 3 * dims.exp].reshape(-1, 3)
    order[start:start + 3 * dims.exp] = exp_rows[:, ::-1].ravel()  # (x, y, z) -> (z, y, x)
    A, b = A[order], b[order]
    cones = tuple((kind, dim) for kind, dim in (("L=", dims.zero), ("L+", dims.nonneg)) if dim)
    cones += (("EXP", 3),) * dims.exp
    return CbfData("MIN", A.shape[1], cones, np.asarray(data["c"], np.float64), d, A, b)


def write_cbf(problem, path) -> Path:
    """Write ``problem`` (a :mod:`solvers` problem with ``cvxpy_model``, or a ``cvxpy.Problem``).

    Args:
      problem: the problem.
      path: output file (``.cbf``).

    Returns:
      The path written.
    """
    import cvxpy as cp

    model = problem if isinstance(problem, cp.Problem) else problem.cvxpy_model(cp).problem
    data = cvxpy_to_cbf_data(model)
    lines = ["# written by solvers.bench.cbf", "VER", "3", "", "OBJSENSE", data.sense, "",
             "VAR", f"{data.num_vars} 1", f"F {data.num_vars}", "",
             "CON", f"{data.b.size} {len(data.cones)}"]
    lines += [f"{kind} {dim}" for kind, dim in data.cones]
    nz = np.flatnonzero(data.c)
    lines += ["", "OBJACOORD", str(nz.size)] + [f"{j} {float(data.c[j])!r}" for j in nz]
    if data.d != 0.0:
        lines += ["", "OBJBCOORD", repr(float(data.d))]
    coo = sparse.coo_array(data.A)
    keep = coo.data != 0
    lines += ["", "ACOORD", str(int(keep.sum()))]
    lines += [f"{i} {j} {float(v)!r}" for i, j, v in
              zip(coo.row[keep], coo.col[keep], coo.data[keep], strict=True)]
    nzb = np.flatnonzero(data.b)
    lines += ["", "BCOORD", str(nzb.size)] + [f"{i} {float(data.b[i])!r}" for i in nzb]
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


def read_cbf(path) -> CbfData:
    """Parse a CBF file (the subset of the module docstring).

    Args:
      path: the file.

    Raises:
      ValueError: an unsupported keyword, cone or variable domain.
    """
    tokens = [ln.strip() for ln in Path(path).read_text().splitlines()]
    tokens = [t for t in tokens if t and not t.startswith("#")]
    pos, sense, n, cones, rows = 0, "MIN", 0, [], 0
    c = A = b = None
    d = 0.0
    coords = {}
    while pos < len(tokens):
        key = tokens[pos]
        pos += 1
        if key == "VER":
            if int(tokens[pos]) > 3:
                raise ValueError(f"CBF version {tokens[pos]} is not supported")
            pos += 1
        elif key == "OBJSENSE":
            sense, pos = tokens[pos], pos + 1
        elif key == "VAR":
            n, k = (int(v) for v in tokens[pos].split())
            for t in tokens[pos + 1:pos + 1 + k]:
                if t.split()[0] != "F":
                    raise ValueError(f"variable domain {t.split()[0]!r} is not supported")
            pos += 1 + k
        elif key == "CON":
            rows, k = (int(v) for v in tokens[pos].split())
            for t in tokens[pos + 1:pos + 1 + k]:
                kind, dim = t.split()
                if kind not in ("F", "L=", "L+", "L-", "EXP"):
                    raise ValueError(f"cone {kind!r} is not supported")
                cones.append((kind, int(dim)))
            pos += 1 + k
        elif key == "OBJBCOORD":
            d, pos = float(tokens[pos]), pos + 1
        elif key in ("OBJACOORD", "ACOORD", "BCOORD"):
            k = int(tokens[pos])
            coords[key] = [t.split() for t in tokens[pos + 1:pos + 1 + k]]
            pos += 1 + k
        else:
            raise ValueError(f"CBF keyword {key!r} is not supported")
    c, b = np.zeros(n), np.zeros(rows)
    for j, v in coords.get("OBJACOORD", []):
        c[int(j)] = float(v)
    entries = np.array(coords.get("ACOORD", []), dtype=np.float64).reshape(-1, 3)
    A = sparse.csr_array((entries[:, 2], (entries[:, 0].astype(int), entries[:, 1].astype(int))),
                         shape=(rows, n))
    for i, v in coords.get("BCOORD", []):
        b[int(i)] = float(v)
    return CbfData(sense, n, tuple(cones), c, d, A, b)


def cbf_to_cvxpy(data: CbfData):
    """The cvxpy problem of a :class:`CbfData` (``ExpCone(x3, x2, x1)`` for each ``EXP`` triple).

    Args:
      data: the parsed instance.
    """
    import cvxpy as cp

    x = cp.Variable(data.num_vars)
    expr = data.A @ x + data.b
    constraints, row = [], 0
    for kind, dim in data.cones:
        block = expr[row:row + dim]
        if kind == "L=":
            constraints.append(block == 0)
        elif kind == "L+":
            constraints.append(block >= 0)
        elif kind == "L-":
            constraints.append(block <= 0)
        elif kind == "EXP":
            constraints.append(cp.constraints.ExpCone(block[2], block[1], block[0]))
        row += dim
    objective = data.c @ x + data.d
    sense = cp.Minimize if data.sense == "MIN" else cp.Maximize
    return cp.Problem(sense(objective), constraints)


__all__ = ["CbfData", "cbf_to_cvxpy", "cvxpy_to_cbf_data", "read_cbf", "write_cbf"]
