"""Entry point of the ``dpjax`` console script."""

from __future__ import annotations

import argparse
import importlib
import sys

from dpjax.errors import CertificationError

#: subcommand modules under dpjax.cli, each with ``add_parser(subparsers)``
COMMANDS = ("design", "calibrate", "profile", "account", "reproduce", "inid", "spherical")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpjax",
        description="Certified noise design and accounting for differential privacy (JAX).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"dpjax.cli.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    import jax

    jax.config.update("jax_enable_x64", True)  # the CLI decides privacy: float64 throughout
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        args.func(args)
    except CertificationError as err:
        print(f"dpjax: certification failed: {err}", file=sys.stderr)
        return 3
    except (ValueError, NotImplementedError) as err:
        print(f"dpjax: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
