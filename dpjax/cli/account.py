"""``dpjax account MECHANISM --param NAME=VALUE ... (--epsilon E | --delta D)``"""

from __future__ import annotations

import dpjax
from dpjax.cli import _common as c
from dpjax.mechanisms import names


def add_parser(sub) -> None:
    """Add ``dpjax account MECHANISM --param NAME=VALUE ... (--epsilon E | --delta D)``.

    Args:
      sub: the ``dpjax`` parser's subparsers.
    """
    p = sub.add_parser("account", help="epsilon (or delta) after T uses of given parameters")
    p.add_argument("mechanism", choices=names())
    p.add_argument("--param", type=c.param, action="append", default=[], metavar="NAME=VALUE")
    c.add_use_args(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--epsilon", type=float, help="report delta at this epsilon")
    target.add_argument("--delta", type=float, help="report epsilon at this delta")
    c.add_sensitivity_args(p)
    c.add_json_arg(p)
    p.set_defaults(func=run)


def run(args) -> None:
    """Print the epsilon (at ``--delta``) or delta (at ``--epsilon``) after ``T`` uses.

    Calls :func:`dpjax.account` (unit sensitivity when none is given: the parameters are
    then noise multipliers) and prints a table, or JSON with ``epsilon``, ``delta``,
    ``compositions``, ``sampling_rate``.

    Args:
      args: the parsed arguments.
    """
    params = dict(args.param)
    sens = c.sensitivity_kwargs(args)
    if sens["l1"] is None and sens["l2"] is None and sens["linf"] is None and sens["dim"] == 1:
        sens = {}  # unit sensitivity: params are noise multipliers
    value = dpjax.account(
        args.mechanism,
        params,
        compositions=args.compositions,
        sampling_rate=args.sampling_rate,
        epsilon=args.epsilon,
        delta=args.delta,
        **sens,
    )
    eps, delta = (value, args.delta) if args.delta is not None else (args.epsilon, value)
    out = {
        "mechanism": args.mechanism,
        "params": params,
        "epsilon": eps,
        "delta": delta,
        "compositions": args.compositions,
        "sampling_rate": args.sampling_rate,
    }
    if args.json:
        c.print_json(out)
        return
    c.print_table(
        ["mechanism", "params", "compositions", "sampling_rate", "epsilon", "delta"],
        [
            [
                args.mechanism,
                str(params),
                str(args.compositions),
                str(args.sampling_rate),
                eps,
                delta,
            ]
        ],
    )
