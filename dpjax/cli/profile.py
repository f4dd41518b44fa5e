"""``dpjax profile MECHANISM --param NAME=VALUE ... --epsilon E1,E2,...``"""

from __future__ import annotations

import numpy as np

import dpjax
from dpjax.cli import _common as c
from dpjax.mechanisms import RELATIONS, names, parameter_help


def add_parser(sub) -> None:
    """Add ``dpjax profile MECHANISM --param NAME=VALUE ... --epsilon E1,E2,...``.

    Args:
      sub: where subcommands of ``dpjax`` are registered (``add_subparsers()``'s result).
    """
    p = sub.add_parser("profile", help="privacy profile delta(epsilon) of given parameters")
    p.add_argument("mechanism", choices=names())
    p.add_argument("--param", type=c.param, action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter, repeated for each (see dpjax mechanisms): "
                   + parameter_help())
    p.add_argument("--epsilon", type=c.float_list, required=True, help="epsilons, comma-separated")
    c.add_sensitivity_args(p)
    c.add_use_args(p)
    c.add_relation_arg(p, RELATIONS)
    c.add_json_arg(p)
    p.set_defaults(func=run)


def run(args) -> None:
    """Print ``delta(epsilon)`` of the given parameters at each epsilon.

    Calls :func:`dpjax.profile` and prints a table, or JSON with ``epsilon`` and ``delta``
    arrays.

    Args:
      args: the parsed arguments.
    """
    params = c.params_dict(args.param)
    eps = np.asarray(args.epsilon, dtype=np.float64)
    sens = c.sensitivity_kwargs(args)
    delta = np.atleast_1d(
        dpjax.profile(
            args.mechanism,
            params,
            eps,
            compositions=args.compositions,
            sampling_rate=args.sampling_rate,
            relation=args.relation,
            **sens,
        )
    )
    query = c.query_fields(args, sens)
    if args.json:
        c.print_json({"mechanism": args.mechanism, "params": params, **query,
                      "relation": args.relation, "epsilon": eps, "delta": delta})
        return
    c.print_table(["epsilon", "delta"], list(zip(eps, delta, strict=True)),
                  title=f"{args.mechanism} ({c.params_text(params)}; {c.query_text(query)}"
                        f"{c.relation_text(args.relation)})")
