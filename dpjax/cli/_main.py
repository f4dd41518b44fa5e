"""Entry point of the ``dpjax`` console script."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from dpjax.errors import CertificationError

#: subcommand modules under dpjax.cli, each with ``add_parser(subparsers)``
COMMANDS = (
    "design", "calibrate", "profile", "account", "reproduce", "inid", "spherical", "train_plan"
)


def build_parser() -> argparse.ArgumentParser:
    """The ``dpjax`` argument parser with every subcommand of :data:`COMMANDS`.

    Each subcommand module under :mod:`dpjax.cli` contributes ``add_parser(subparsers)``.

    Returns:
      The parser.
    """
    parser = argparse.ArgumentParser(
        prog="dpjax",
        description="Certified noise design and accounting for differential privacy (JAX).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"dpjax.cli.{name}").add_parser(sub)
    return parser


def _use_compilation_cache(jax) -> None:
    """Keep compiled XLA programs between runs (JAX's persistent cache): a second
    ``dpjax design`` starts in seconds instead of recompiling.  Only the command line
    does this (the library never changes global JAX settings).  The cache lives in
    ``$XDG_CACHE_HOME/dpjax/xla`` (default ``~/.cache/dpjax/xla``); JAX's own
    ``JAX_COMPILATION_CACHE_DIR`` wins; ``DPJAX_NO_COMPILATION_CACHE=1`` turns it off.
    Entries are keyed by the program, the jax/jaxlib version and the device, so a stale
    entry is never used for another program."""
    if os.environ.get("DPJAX_NO_COMPILATION_CACHE") or os.environ.get(
        "JAX_COMPILATION_CACHE_DIR"
    ):
        return
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    try:
        path = base / "dpjax" / "xla"
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only home: run without the cache
        return
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


def main(argv: list[str] | None = None) -> int:
    """Run the ``dpjax`` command: parse ``argv``, call the library, print, return the exit code.

    x64 is enabled for the whole process (the command decides privacy: float64
    throughout), and compiled programs are cached between runs.

    Args:
      argv: the arguments (default ``sys.argv[1:]``).

    Returns:
      ``0`` on success, ``2`` for bad input (one line on stderr) or no subcommand, ``3``
      when dpjax could not certify a result.

    Example:
      >>> main(["profile", "laplace", "--param", "scale=1", "--epsilon", "0", "--l1", "1"])
      laplace {'scale': 1.0}
      epsilon  delta
      -------  --------
      0.0      0.393469
      0
    """
    import jax

    jax.config.update("jax_enable_x64", True)  # the CLI decides privacy: float64 throughout
    _use_compilation_cache(jax)
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
