"""Entry point of the ``dpjax`` console script."""

from __future__ import annotations

import argparse
import importlib
import re
import sys

from dpjax.errors import CertificationError

#: subcommand modules under dpjax.cli, each with ``add_parser(subparsers)``
COMMANDS = (
    "design", "calibrate", "profile", "account", "mechanisms", "reproduce", "inid", "spherical",
    "bcdp", "train_plan",
)


#: A value that starts like a negative number (``-1e-5``, ``-.5``, ``-1,2``, ``-inf``,
#: ``-nan``): no dpjax option starts so, so it is an option's value, which the validators
#: then judge.  argparse's own pattern (``-1``, ``-0.5`` only) took ``--delta -1e-5`` for an
#: option and said "expected one argument".
_NEGATIVE_NUMBER = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit status 2.

    argparse prints the whole usage block before the message; dpjax prints only
    ``dpjax <command>: error: <message> (see --help)`` (the usage lives in ``--help``).
    Every value that starts like a negative number (:data:`_NEGATIVE_NUMBER`) is parsed as a
    value, so the validators say what is allowed.  Subparsers inherit the class.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str):  # noqa: D102 (argparse's contract)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``dpjax`` argument parser with every subcommand of :data:`COMMANDS`.

    Each subcommand module under :mod:`dpjax.cli` contributes ``add_parser(subparsers)``.

    Returns:
      The parser.
    """
    from dpjax import __version__

    parser = _Parser(
        prog="dpjax",
        description="Certified noise design and accounting for differential privacy (JAX).",
    )
    parser.add_argument("--version", action="version", version=f"dpjax {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"dpjax.cli.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``dpjax`` command: parse ``argv``, call the library, print, return the exit code.

    x64 is enabled for the whole process (the command decides privacy: float64
    throughout); compiled programs are cached between runs by the import of dpjax
    (:mod:`dpjax._compilation_cache`).

    Args:
      argv: the arguments (default ``sys.argv[1:]``).

    Returns:
      ``0`` on success, ``2`` for bad input or no subcommand (one line on stderr), ``3``
      when dpjax could not certify a result.

    Example:
      >>> main(["profile", "laplace", "--param", "scale=1", "--epsilon", "0", "--l1", "1"])
      laplace (scale=1; dim=1, l1=1, compositions=1)
      epsilon  delta
      -------  --------
      0.0      0.393469
      0
    """
    import jax

    jax.config.update("jax_enable_x64", True)  # the CLI decides privacy: float64 throughout
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        names = ", ".join(sorted(name.replace("_", "-") for name in COMMANDS))
        parser.error(f"give a COMMAND, one of {names}")
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
