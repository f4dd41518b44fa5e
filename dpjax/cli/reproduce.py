"""``dpjax reproduce PAPER``: regenerate a paper's figures and tables beside dpjax's values."""

from __future__ import annotations

from pathlib import Path

from dpjax.reproduce import PAPERS, run_paper


def add_parser(sub) -> None:
    """Add ``dpjax reproduce PAPER [--out DIR]``.

    Args:
      sub: ``dpjax``'s subparsers.
    """
    p = sub.add_parser("reproduce", help="reproduce a paper's numbers (PNG figures + markdown)")
    p.add_argument("paper", choices=sorted(PAPERS), help="which paper")
    p.add_argument("--out", type=Path, default=Path("reproduce-out"), help="output directory")
    p.set_defaults(func=run)


def run(args) -> None:
    """Reproduce the paper's figures and tables into ``--out`` and print the report's path.

    Args:
      args: the parsed arguments (``paper``, ``out``).
    """
    report = run_paper(args.paper, args.out)
    print(f"wrote {report}")
