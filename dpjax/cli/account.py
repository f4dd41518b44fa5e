"""``dpjax account MECHANISM --param NAME=VALUE ... (--epsilon E | --delta D)``"""

from __future__ import annotations

import json

import dpjax
from dpjax.accounting import PLDAccountant
from dpjax.accounting.events.json_form import event_from_json, event_to_json
from dpjax.api import query_arguments_given
from dpjax.cli import _common as c
from dpjax.mechanisms import names, parameter_help


def add_parser(sub) -> None:
    """Add ``dpjax account MECHANISM --param NAME=VALUE ... (--epsilon E | --delta D)``.

    Args:
      sub: the ``dpjax`` parser's subparsers.
    """
    p = sub.add_parser("account", help="epsilon (or delta) after T uses of given parameters")
    p.add_argument("mechanism", nargs="?", choices=names())
    p.add_argument(
        "--events", metavar="FILE.json",
        help="account the events in this JSON file instead of a mechanism (see README)",
    )
    p.add_argument(
        "--relation", choices=("add_remove", "add", "remove", "replace_one", "replace_special"),
        default=None,
        help="neighbouring relation (default add_remove: the worse of adding and removing a "
             "record; for --events the file's, else add_remove; replace_special: events only)",
    )
    p.add_argument("--bin-width", type=float, default=None, help="PLD grid spacing for --events")
    p.add_argument("--param", type=c.param, action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter, repeated for each (see dpjax mechanisms): "
                   + parameter_help())
    c.add_use_args(p)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--epsilon", type=float, help="report delta at this epsilon")
    target.add_argument("--delta", type=float, help="report epsilon at this delta")
    p.add_argument("--bracket", action="store_true",
                   help="with --delta: also a certified lower end, [epsilon_lower, epsilon_upper]")
    p.add_argument("--epsilon-error", type=float, default=None, metavar="W",
                   help="with --bracket: refine the loss grid until the bracket is at most W "
                        "wide (as prv-accountant's eps_error)")
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
    if args.bracket and args.delta is None:
        raise ValueError("--bracket brackets epsilon: give --delta")
    if args.epsilon_error is not None and not args.bracket:
        raise ValueError("--epsilon-error sets the width of the bracket: give --bracket")
    if args.events is not None:
        if args.epsilon_error is not None:
            raise ValueError("--epsilon-error applies to a MECHANISM (for --events, give a "
                             "smaller --bin-width)")
        if args.mechanism is not None:
            raise ValueError("give either a MECHANISM or --events FILE, not both")
        given = [f"--{'param' if n == 'params' else n.replace('_', '-')}"
                 for n in query_arguments_given(args.param or None, args.compositions,
                                                args.sampling_rate, args.dim, args.l1,
                                                args.l2, args.linf)]
        if given:
            raise ValueError(f"{', '.join(given)}: the events carry their uses, sampling and "
                             "sensitivities (compose them in the file instead)")
        _run_events(args)
        return
    if args.mechanism is None:
        raise ValueError("give a MECHANISM or --events FILE")
    if args.bin_width is not None:
        raise ValueError("--bin-width applies to --events only (a MECHANISM sets its own grid)")
    relation = args.relation or "add_remove"
    params = c.params_dict(args.param)
    sens = c.sensitivity_kwargs(args)
    value = dpjax.account(
        args.mechanism,
        params,
        compositions=args.compositions,
        sampling_rate=args.sampling_rate,
        epsilon=args.epsilon,
        delta=args.delta,
        bracket=args.bracket,
        epsilon_error=args.epsilon_error,
        relation=relation,
        **sens,
    )
    bracket = value.bracket if args.bracket else None
    value = value.epsilon if args.bracket else value
    eps, delta = (value, args.delta) if args.delta is not None else (args.epsilon, value)
    query = c.query_fields(args, sens)
    _print(args, {"mechanism": args.mechanism, "params": params, **query, "relation": relation,
                  "epsilon": eps, "delta": delta}, bracket,
           f"{args.mechanism} ({c.params_text(params)}; {c.query_text(query)}"
           f"{c.relation_text(relation)})")


def _print(args, out: dict, bracket, title: str) -> None:
    """JSON (with a ``bracket`` field when asked) or a table (with its two ends)."""
    if bracket is not None:
        out["bracket"] = [float(bracket[0]), float(bracket[1])]
    if args.json:
        c.print_json(out)
        return
    head, row = ["epsilon", "delta"], [out["epsilon"], out["delta"]]
    if bracket is not None:
        head, row = head + ["epsilon_lower", "epsilon_upper"], row + list(out["bracket"])
    c.print_table(head, [row], title=title)


def _run_events(args) -> None:
    """Account the events of ``args.events`` with :class:`dpjax.accounting.PLDAccountant`."""
    try:
        with open(args.events, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as err:
        raise ValueError(f"cannot read --events {args.events}: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"--events {args.events} is not valid JSON: {err}") from None
    settings = doc if isinstance(doc, dict) and "events" in doc and "type" not in doc else {}
    event = event_from_json(settings.get("events", doc))
    relation = args.relation or settings.get("relation", "add_remove")
    bin_width = args.bin_width if args.bin_width is not None else settings.get("bin_width", 1e-4)
    acc = PLDAccountant(relation, bin_width).compose(event)
    bracket = acc.bracket(args.delta) if args.bracket else None
    if args.delta is not None:
        eps, delta = (bracket[1] if bracket else acc.get_epsilon(args.delta)), args.delta
    else:
        eps, delta = args.epsilon, acc.get_delta(args.epsilon)
    out = {
        "events": event_to_json(event),
        "relation": relation,
        "bin_width": bin_width,
        "epsilon": eps,
        "delta": delta,
    }
    _print(args, out, bracket,
           f"events {args.events} (relation={relation}, bin_width={c.fmt(bin_width)})")
