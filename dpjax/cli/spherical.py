"""``dpjax spherical design|account``: optimal spherical noise (spherical-kl-optimal-mechanisms).

Mechanism files are written and read by :mod:`dpjax.spherical.io`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dpjax.cli import _common as c
from dpjax.numerics.lazy_scipy import special


def gaussian_kl(dim: int, budget: float, power: float) -> float:
    r"""KL at unit shift of ``N(0, s^2 I_m)`` with ``E|Z|^a = C``: ``1 / (2 s^2)``.

    .. math:: E|Z|^a = s^a 2^{a/2} \Gamma((m + a)/2) / \Gamma(m/2)

    (the Gaussian reference of Fig. 2 of spherical-kl-optimal-mechanisms).

    Args:
      dim: dimension ``m``.
      budget: the cost budget ``C``.
      power: the cost exponent ``a``.
    """
    log_s = (math.log(budget) - 0.5 * power * math.log(2.0) - special.gammaln((dim + power) / 2)
             + special.gammaln(dim / 2)) / power
    return 0.5 * math.exp(-2.0 * log_s)


def add_parser(sub) -> None:
    """Register ``dpjax spherical design|account``.

    Args:
      sub: the ``argparse`` subparsers of the ``dpjax`` command.
    """
    p = sub.add_parser("spherical", help="optimal spherical noise in R^m for l2 sensitivity 1 "
                       "(spherical-kl-optimal-mechanisms)")
    sp = p.add_subparsers(dest="spherical_command", metavar="ACTION", required=True)
    d = sp.add_parser("design", help="solve the monotone KL programme (Theorem 4)")
    d.add_argument("--dim", type=int, required=True, help="dimension m")
    d.add_argument("--cost", type=float, required=True, help="budget C on E|Z|^a")
    d.add_argument("--cost-power", type=float, default=2.0, help="a (default 2)")
    d.add_argument("--n", type=int, default=None,
                   help="shells per unit radius (default with --r slope: from the geometry, "
                   "the shells, band, window and tail of dpjax.spherical.geometric; else 100)")
    d.add_argument("--N", type=int, default=None,
                   help="last free shell (default: 8 Gaussian radius deviations past sqrt(C) "
                   "with --r slope, else 300)")
    d.add_argument("--r", default="slope",
                   help="tail ratio in (0, 1), 'slope' (default: the Gaussian's log-density "
                   "slope at the junction; windowed log-space design, any m, cost power 2), "
                   "or 'auto' (outer search)")
    d.add_argument("--loss-cap", type=float, help="cap on log p_i - log p_{i+n}")
    d.add_argument("--solver", choices=("host", "jax", "cvxpy"), default=None,
                   help="the geometric design (no --n/--N, --r slope): its banded "
                   "barrier-Newton solver, 'host' (NumPy/SciPy, default) or 'jax' (one jitted "
                   "program: no host round trip per step, for an accelerator); explicit shells: "
                   "'jax' (default) or 'cvxpy'")
    d.add_argument("--auto-delta", type=float, default=None,
                   help="with --r auto: minimise epsilon at this delta (default: minimise KL)")
    d.add_argument("--auto-compositions", type=int, default=1)
    d.add_argument("--auto-sampling-rate", type=float, default=None)
    d.add_argument("--out", type=Path, help="save the mechanism (.npz) for 'account'")
    c.add_json_arg(d)
    d.set_defaults(func=run_design)
    a = sp.add_parser("account", help="certified epsilon of a saved mechanism")
    a.add_argument("file", type=Path)
    a.add_argument("--compositions", type=int, default=1)
    a.add_argument("--sampling-rate", type=float)
    a.add_argument("--relation", choices=("add_remove", "add", "remove", "replace_one"),
                   default="add_remove",
                   help="neighbouring relation under subsampling (default add_remove: the "
                   "worse of adding and removing a record; replace_one: a profile bound)")
    a.add_argument("--delta", type=float, required=True)
    c.add_json_arg(a)
    a.set_defaults(func=run_account)


def run_design(args) -> None:
    """Solve the monotone KL programme (Theorem 4 of spherical-kl-optimal-mechanisms), print it.

    Args:
      args: the parsed ``argparse`` namespace (``--out`` saves it, :func:`dpjax.spherical.io.save`).
    """
    # deferred: dpjax.spherical (imports JAX; the CLI parser stays JAX-free)
    from dpjax.spherical import design as de
    from dpjax.spherical.mechanism import check_use
    from dpjax.spherical.windowed import check_budget

    args.cost = check_budget(args.cost)
    for name in ("dim", "n"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name} must be an integer >= 1, got {value}")
    if args.N is not None and args.N < 2:
        raise ValueError(f"--N must be an integer >= 2, got {args.N}")
    if args.auto_delta is not None or args.auto_sampling_rate is not None \
            or args.auto_compositions != 1:
        check_use(0.5 if args.auto_delta is None else args.auto_delta, [args.auto_compositions],
                  args.auto_sampling_rate, prefix="auto_")
    if str(args.r).lower() == "slope":
        if args.n is None and args.N is None and args.dim >= 2:
            return _run_geometric_design(args)
        args.n = 100 if args.n is None else args.n
        _explicit_shell_solver(args)
        return _run_slope_design(args)
    _explicit_shell_solver(args)
    args.n = 100 if args.n is None else args.n
    args.N = 300 if args.N is None else args.N
    if args.dim < 1 or args.n < 1 or args.N < 2 or args.cost <= 0:
        raise ValueError("need --dim >= 1, --n >= 1, --N >= 2, --cost > 0")
    auto = str(args.r).lower() == "auto"
    r = None if auto else float(args.r)
    if r is not None and not 0 < r < 1:
        raise ValueError(f"--r must be in (0, 1), 'auto' or 'slope', got {args.r!r}")
    r_max = math.exp(-4.0 / args.n) if auto else r
    coeffs = de.coefficients_for(args.dim, args.n, args.N, r_max, args.cost_power)
    if auto:
        crit = (de.kl_criterion if args.auto_delta is None else
                de.epsilon_criterion(args.auto_delta, args.auto_compositions,
                                     args.auto_sampling_rate, prefix="auto_"))
        mech, r, _ = de.search_r(coeffs, args.N, args.cost, crit, (4.0, 45.0), 7, args.loss_cap)
    mech, prob, sol = de.design_mechanism(coeffs, args.N, r, args.cost, args.solver,
                                          args.loss_cap)
    monotone = bool(np.all(np.diff(mech.log_p) <= 1e-12))
    out = {
        "kl": mech.kl,
        "gaussian_kl": gaussian_kl(args.dim, args.cost, args.cost_power),
        "r": r,
        "residual": float(sol.residual.total),
        "monotone": monotone,
        "solver": args.solver,
        "dim": args.dim, "n": args.n, "N": args.N, "cost": args.cost,
        "cost_power": args.cost_power,
    }
    _save_and_print(args, mech, out)


def _explicit_shell_solver(args) -> None:
    """``--solver`` of the explicit-shell designs: ``jax`` (default) or ``cvxpy``, not ``host``."""
    if args.solver == "host":
        raise ValueError("--solver host is the geometric design's banded solver (no --n, --N, "
                         "--r slope); explicit shells solve with --solver jax or cvxpy")
    args.solver = "jax" if args.solver is None else args.solver


def _square_cost_design(args, refusal: str, design, *extra, solvers=("jax",), **options):
    """``design(dim, cost, *extra, **options)`` for the square cost: ``(mech, info)``.

    Args:
      args: the parsed arguments (``--cost-power 2``, no ``--loss-cap``, a solver in
        ``solvers``).
      refusal: the message of the ``ValueError`` raised for any other arguments.
      design: the designer, called as ``design(args.dim, args.cost, *extra, **options)``.
      extra: its further positional arguments.
      solvers: the ``--solver`` values this design accepts.
      options: its keyword arguments.
    """
    if args.cost_power != 2.0 or args.loss_cap is not None or args.solver not in solvers:
        raise ValueError(refusal)
    return design(args.dim, args.cost, *extra, **options)


def _run_slope_design(args) -> None:
    # deferred: dpjax.spherical (imports JAX; the CLI parser stays JAX-free)
    from dpjax.spherical.windowed import design_windowed

    mech, info = _square_cost_design(
        args, "--r slope designs for --cost-power 2 with the jax solver and no --loss-cap; "
        "give a numeric --r or 'auto' otherwise", design_windowed, args.n, args.N)
    out = {"kl": mech.kl, "gaussian_kl": gaussian_kl(args.dim, args.cost, 2.0),
           "grid_gaussian_kl": info["grid_gaussian_kl"], "r": mech.r,
           "residual": info["residual"], "monotone": bool(np.all(np.diff(mech.log_p) <= 1e-12)),
           "solver": "jax", "dim": args.dim, "n": args.n, "N": mech.N,
           "first": info["first"], "cost": args.cost, "cost_power": 2.0}
    _save_and_print(args, mech, out)


def _run_geometric_design(args) -> None:
    # deferred: dpjax.spherical (imports JAX; the CLI parser stays JAX-free)
    from dpjax.spherical.geometric import design_geometric

    args.solver = "host" if args.solver is None else args.solver
    mech, info = _square_cost_design(
        args, "the geometric design is for --cost-power 2 with no --loss-cap and --solver host "
        "or jax (its banded barrier-Newton solver); give --n, or a numeric --r or 'auto' "
        "otherwise", design_geometric, solvers=("host", "jax"), solver=args.solver)
    out = {"kl": info["kl"], "gaussian_kl": info["gaussian_kl"],
           "grid_gaussian_kl": info["grid_gaussian_kl"],
           "continuum_kl_estimate": info["continuum_kl_estimate"],
           "excess_estimate": info["excess_estimate"],
           "above_gaussian": info["above_gaussian"],
           "relative_to_gaussian": info["relative_to_gaussian"],
           "verdict": info["verdict"],
           "r": mech.r, "residual": info["gap"], "monotone": bool(np.all(np.diff(mech.log_p)
                                                                         <= 1e-12)),
           "solver": "banded-newton" if args.solver == "host" else "banded-newton-jax",
           "dim": args.dim, "n": mech.n,
           "band": info["b"], "N": mech.N, "first": info["first"], "cost": args.cost,
           "cost_power": 2.0}
    _save_and_print(args, mech, out)


def _save_and_print(args, mech, out) -> None:
    if args.out is not None:
        # deferred: dpjax.spherical (imports JAX; the CLI parser stays JAX-free)
        from dpjax.spherical.io import save

        save(mech, args.out)
        out["file"] = str(args.out)
    if args.json:
        c.print_json(out)
        return
    c.print_table(["quantity", "value"], [[k, v if not isinstance(v, bool) else str(v)]
                                          for k, v in out.items()])


def run_account(args) -> None:
    """Print the certified epsilon of a saved mechanism after ``T`` (subsampled) uses.

    Args:
      args: the parsed ``argparse`` namespace (the file, ``--compositions``,
        ``--sampling-rate``, ``--relation``, ``--delta``).
    """
    # deferred: dpjax.spherical (imports JAX; the CLI parser stays JAX-free)
    from dpjax.spherical.io import load
    from dpjax.spherical.mechanism import check_use

    check_use(args.delta, [args.compositions], args.sampling_rate)

    mech = load(args.file)
    q = None if args.sampling_rate in (None, 1.0) else args.sampling_rate
    eps = mech.epsilon(args.delta, args.compositions, q, relation=args.relation)
    out = {"epsilon": eps, "delta": args.delta, "compositions": args.compositions,
           "sampling_rate": args.sampling_rate, "relation": args.relation, "dim": mech.m,
           "kl": mech.kl}
    if args.json:
        c.print_json(out)
        return
    c.print_table(["quantity", "value"], [[k, v if v is not None else "none"]
                                          for k, v in out.items()])
