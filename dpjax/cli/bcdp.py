"""``dpjax bcdp mean``: Theorem 2's budget vector for M_mean (bayesian-coordinate-dp)."""

from __future__ import annotations

import argparse

import numpy as np

from dpjax.cli import _common as c


def _numbers(text: str, name: str) -> list[float]:
    """``float_list`` with a one-line ``ValueError`` (exit status 2) instead of argparse's usage."""
    try:
        return c.float_list(text)
    except argparse.ArgumentTypeError as err:
        raise ValueError(f"{name}: {err}") from None


def add_parser(sub) -> None:
    p = sub.add_parser("bcdp", help="Bayesian coordinate DP: per-coordinate privacy levels "
                       "(bayesian-coordinate-dp)")
    sp = p.add_subparsers(dest="bcdp_command", metavar="ACTION", required=True)
    m = sp.add_parser("mean", help="budget vector c of Theorem 2 for the mean mechanism M_mean, "
                      "its LDP and BCDP levels and its MSE bound")
    m.add_argument("--epsilon", type=float, required=True, help="LDP target epsilon > 0")
    m.add_argument("--coordinate-deltas", required=True,
                   help="per-coordinate BCDP targets d1,d2,... (> 0, any order)")
    m.add_argument("--correlation", type=float, required=True,
                   help="q in [0, 1]: the dependence bound of Assumption 1")
    m.add_argument("--zeta", type=float, default=None, help="free parameter in (0, 1] "
                   "(default (1 + q)/2)")
    m.add_argument("--channel", choices=("duchi", "privunit"), default="duchi",
                   help="LDP channel of each row (default duchi)")
    m.add_argument("--users", type=int, default=1, help="number of users n (default 1)")
    c.add_json_arg(m)
    m.set_defaults(func=run_mean)


def run_mean(args) -> None:
    # deferred: dpjax.bcdp (imports JAX; the CLI parser stays JAX-free)
    from dpjax.bcdp import budget, mean

    deltas = _numbers(args.coordinate_deltas, "--coordinate-deltas")
    if args.users < 1:
        raise ValueError(f"--users must be an integer >= 1, got {args.users}")
    b = budget.theorem2_budget(deltas, args.epsilon, args.correlation, args.zeta)
    var = mean.variance_bound(b.c, args.users, args.channel)
    out = {
        "c": b.c.tolist(),
        "ldp": b.ldp,
        "bcdp": b.bcdp.tolist(),
        "mse_bound": mean.mse_rate(b.c, args.users),
        "mse_variance_bound": float(np.sum(var)),
        "coordinate_variance_bound": var.tolist(),
        "order": b.order.tolist(),
        "zeta": (1 + args.correlation) / 2 if args.zeta is None else args.zeta,
        "correlation": args.correlation,
        "epsilon": args.epsilon,
        "coordinate_deltas": deltas,
        "channel": args.channel,
        "users": args.users,
    }
    if args.json:
        c.print_json(out)
        return
    rows = [[str(i), d, ci, bi, vi] for i, (d, ci, bi, vi) in
            enumerate(zip(deltas, b.c, b.bcdp, var, strict=True))]
    c.print_table(["coordinate", "delta", "c", "bcdp", "variance bound"], rows)
    print(f"ldp {b.ldp:.6g}   mse bound (17) {out['mse_bound']:.6g} (constant omitted)   "
          f"exact {args.channel} variance bound {out['mse_variance_bound']:.6g}")
