"""``dpjax account MECHANISM --param NAME=VALUE ... (--epsilon E | --delta D)``"""

from __future__ import annotations

import dpjax
from dpjax.cli import _common as c
from dpjax.mechanisms import names, parameter_help


def add_parser(sub) -> None:
    """Add ``dpjax account MECHANISM --param NAME=VALUE ... (--epsilon E | --delta D)``.

    Args:
      sub: the ``dpjax`` parser's subparsers.
    """
    p = sub.add_parser("account", help="epsilon (or delta) after T uses of given parameters")
    p.add_argument("mechanism", choices=names())
    p.add_argument("--param", type=c.param, action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter, repeated for each (see dpjax mechanisms): "
                   + parameter_help())
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
    query = c.query_fields(args, sens)
    if args.json:
        c.print_json({"mechanism": args.mechanism, "params": params, **query,
                      "epsilon": eps, "delta": delta})
        return
    c.print_table(["epsilon", "delta"], [[eps, delta]],
                  title=f"{args.mechanism} ({c.params_text(params)}; {c.query_text(query)})")
