"""``dpjax mechanisms``: every mechanism with its parameters, sensitivities, support and paper."""

from __future__ import annotations

import json

from dpjax.mechanisms import describe, names


def add_parser(sub) -> None:
    """Add ``dpjax mechanisms [NAME] [--json]``.

    Args:
      sub: ``dpjax``'s subparsers.
    """
    p = sub.add_parser(
        "mechanisms",
        help="list the mechanisms: parameters, sensitivities, what each supports, its paper",
    )
    p.add_argument("name", nargs="?", choices=names(), help="one mechanism (default: all)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args) -> None:
    """Print :func:`dpjax.mechanisms.describe` as text or JSON.

    Args:
      args: the parsed arguments (``name``, ``json``).
    """
    rows = describe(args.name)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for d in rows:
        params = ", ".join(f"{p} {c}" for p, c in d["parameters"].items())
        print(f"{d['name']}: {d['summary']}")
        print(f"  parameters:    {params}")
        print(f"  sensitivities: {', '.join(d['sensitivities'])}"
              + (f" (dim >= {d['min_dim']})" if d["min_dim"] > 1 else ""))
        print(f"  conditions:    {', '.join(d['conditions'])}")
        print(f"  supports:      {d['supports']}")
        print(f"  paper:         {d['paper']}")
