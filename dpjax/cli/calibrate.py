"""``dpjax calibrate MECHANISM --epsilon E --delta D ...``"""

from __future__ import annotations

import numpy as np

import dpjax
from dpjax.cli import _common as c
from dpjax.mechanisms import RELATIONS, names, parameter_help


def add_parser(sub) -> None:
    """Add ``dpjax calibrate MECHANISM --epsilon E --delta D [sensitivities] [uses]``.

    Args:
      sub: the subparsers object of the ``dpjax`` parser, to add ``calibrate`` to.
    """
    p = sub.add_parser("calibrate", help="least-error certified parameters for a target")
    p.add_argument("mechanism", choices=names(),
                   help="which mechanism (parameters, support: dpjax mechanisms): "
                   + parameter_help())
    p.add_argument("--epsilon", type=c.float_list, required=True, help="epsilon (comma list ok)")
    p.add_argument("--delta", type=c.float_list, required=True, help="delta (comma list ok)")
    c.add_sensitivity_args(p)
    c.add_use_args(p)
    p.add_argument("--condition", choices=("exact", "sufficient"), default="exact")
    c.add_relation_arg(p, RELATIONS)
    c.add_json_arg(p)
    p.set_defaults(func=run)


def run(args) -> None:
    """Print the least-error certified parameters for each ``(epsilon, delta)``.

    Calls :func:`dpjax.calibrate` (comma lists: one vectorised call) and prints a table,
    or JSON with ``mechanism``, ``params``, ``variance``, ``mse``, ``epsilon``, ``delta``,
    ``delta_at_params`` and ``member`` (which member of a shape family won).

    Args:
      args: the parsed arguments.
    """
    cal = dpjax.calibrate(
        args.mechanism,
        epsilon=c.scalar_or_list(args.epsilon),
        delta=c.scalar_or_list(args.delta),
        compositions=args.compositions,
        sampling_rate=args.sampling_rate,
        condition=args.condition,
        relation=args.relation,
        **c.sensitivity_kwargs(args),
    )
    if args.json:
        c.print_json(cal.to_json())
        return
    headers = ["epsilon", "delta", *cal.params, "variance", "mse", "delta_at_params"]
    cols = np.broadcast_arrays(
        cal.epsilon, cal.delta, *cal.params.values(), cal.variance, cal.mse, cal.delta_at_params
    )
    if cal.member is not None:  # a shape family: which member won, per target
        headers.append("member")
        cols = (*cols, np.broadcast_to(np.asarray(cal.member, dtype=object), cols[0].shape))
    rows = list(zip(*(np.atleast_1d(col) for col in cols), strict=True))
    c.print_table(
        headers, rows, title=f"{cal.mechanism} (condition={cal.condition}, "
        f"relation={args.relation}; "
        + c.query_text(c.query_fields(args)) + ")"
    )
    print(f"({c.COLUMNS})")
    for line in c.note_lines(cal.mechanism, cal.notes):
        print(line)
