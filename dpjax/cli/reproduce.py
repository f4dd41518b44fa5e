"""``dpjax reproduce PAPER``: regenerate a paper's figures and tables beside dpjax's values."""

from __future__ import annotations

import json
from pathlib import Path

from dpjax.reproduce import PAPERS, run_paper, summary


def add_parser(sub) -> None:
    """Add ``dpjax reproduce PAPER [--out DIR]``.

    Args:
      sub: ``dpjax``'s subparsers.
    """
    listing = "; ".join(f"{name}: {PAPERS[name].expected}" for name in sorted(PAPERS))
    p = sub.add_parser(
        "reproduce",
        help="reproduce a paper's numbers (PNG figures + markdown)",
        description="Regenerate a paper's figures and tables beside dpjax's values. "
        f"Expected times on 2 CPU cores, cold compilation cache: {listing}.",
    )
    p.add_argument("paper", choices=sorted(PAPERS), help="which paper")
    p.add_argument("--out", type=Path, default=Path("reproduce-out"), help="output directory")
    p.add_argument("--quick", action="store_true",
                   help="a shorter run (fewer seeds and points) where the paper has one")
    p.add_argument("--json", action="store_true",
                   help="print the summary as JSON (the report's headline numbers)")
    p.set_defaults(func=run)


def run(args) -> None:
    """Reproduce the paper's figures and tables into ``--out`` and print the report's path.

    Args:
      args: the parsed arguments (``paper``, ``out``, ``quick``, ``json``).
    """
    report = run_paper(args.paper, args.out, quick=args.quick)
    if args.json:
        print(json.dumps(summary(args.paper, args.out, report), indent=2, default=float))
    else:
        print(f"wrote {report}")
