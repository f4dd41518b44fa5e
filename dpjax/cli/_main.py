"""Entry point of the ``dpjax`` console script."""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import re
import sys

from dpjax import __version__
from dpjax.errors import CertificationError

#: subcommand modules under dpjax.cli, each with ``add_parser(subparsers)``, and the one-line
#: summary ``dpjax --help`` lists for it.  The summaries live here so that ``--help`` and
#: ``--version`` import no subcommand (and so not JAX); each module registers the same text
#: (tests/cli/test_light_entry.py compares them).
SUMMARIES = {
    "design": "compare all mechanisms for a target and name the best "
              "(default: epsilon=0.3, delta=1e-06, dim=1, linf=1)",
    "calibrate": "least-error certified parameters for a target",
    "profile": "privacy profile delta(epsilon) of given parameters",
    "account": "epsilon (or delta) after T uses of given parameters",
    "mechanisms": "list the mechanisms: parameters, sensitivities, what each supports, its paper",
    "reproduce": "reproduce a paper's numbers (PNG figures + markdown)",
    "inid": "optimal per-coordinate Gaussian/Laplace noise for a sensitivity profile "
            "(inid-noise-laplace-beats-gaussian)",
    "spherical": "optimal spherical noise in R^m for l2 sensitivity 1 "
                 "(spherical-kl-optimal-mechanisms)",
    "bcdp": "Bayesian coordinate DP: per-coordinate privacy levels (bayesian-coordinate-dp)",
    "train_plan": "certified DP-SGD noise (Poisson sampling) for a training schedule",
}
COMMANDS = tuple(SUMMARIES)


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


#: XLA flags of the ``dpjax`` command: XLA CPU's element-wise emitters instead of its
#: fusion emitters, LLVM's optimisation level 1 instead of 2 and its loop and SLP
#: vectorizers off.  A command is one process that compiles its programs and runs each a
#: few times, so compiling is most of its cost; this codegen compiles the engine's programs
#: in markedly less time and gives the same numbers (tests/test_default_tier_codegen.py:
#: vectorizing never reorders float64 arithmetic, and level 1 keeps the fused multiply-adds
#: of level 2, which level 0 drops).  It runs large grids somewhat slower, which is why the
#: library, used in long-lived processes that call a compiled program many times, keeps
#: XLA's defaults (docs/development.md).
ONE_SHOT_XLA_FLAGS = (
    "--xla_cpu_use_fusion_emitters=false --xla_backend_optimization_level=1 "
    "--xla_backend_extra_options=-vectorize-loops=false,-vectorize-slp=false"
)


def add_xla_flags(flags: str, environ=os.environ) -> bool:
    """Append ``flags`` to ``environ["XLA_FLAGS"]`` unless it sets any of them already.

    The flags are a set: a user's ``XLA_FLAGS`` that names one of them (e.g. the fusion
    emitters) keeps its whole codegen, none of the others is added.

    Args:
      flags: space-separated ``--name=value`` XLA flags.
      environ: the environment to update (default ``os.environ``).

    Returns:
      Whether the flags were added.

    Example:
      >>> env = {"XLA_FLAGS": "--xla_cpu_use_fusion_emitters=true"}
      >>> add_xla_flags("--xla_cpu_use_fusion_emitters=false --xla_foo=1", env), env
      (False, {'XLA_FLAGS': '--xla_cpu_use_fusion_emitters=true'})
      >>> add_xla_flags("--xla_foo=1", env), env["XLA_FLAGS"]
      (True, '--xla_cpu_use_fusion_emitters=true --xla_foo=1')
    """
    current = environ.get("XLA_FLAGS", "")
    if any(flag.split("=")[0] in current for flag in flags.split()):
        return False
    environ["XLA_FLAGS"] = f"{current} {flags}".strip()
    return True


def one_shot_codegen(environ=os.environ) -> bool:
    """Set :func:`one_shot_flags` in ``environ`` for a fresh ``dpjax`` process.

    Only where JAX is not imported yet (XLA reads ``XLA_FLAGS`` once, when its backend
    starts: a process that imported JAX, e.g. a caller of :func:`main`, keeps its own) and
    ``XLA_FLAGS`` sets none of them (the user's choice wins; :func:`add_xla_flags`).

    Args:
      environ: the environment to update (default ``os.environ``).

    Returns:
      Whether the flags were added.

    Example:
      >>> env = {"XLA_FLAGS": "--xla_cpu_use_fusion_emitters=true"}
      >>> one_shot_codegen(env), env["XLA_FLAGS"]
      (False, '--xla_cpu_use_fusion_emitters=true')
    """
    return "jax" not in sys.modules and add_xla_flags(one_shot_flags(), environ)


#: Environment variables by which a user chooses OpenBLAS's thread count (in the order it
#: reads them); :func:`single_threaded_blas` leaves a process where any is set alone.
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def single_threaded_blas(environ=os.environ) -> bool:
    """Run the OpenBLAS of NumPy and SciPy on one thread in the processes that start with
    ``environ``: ``OPENBLAS_NUM_THREADS=1`` unless the user set any of
    :data:`BLAS_THREAD_VARS`.  OpenBLAS reads it when it loads, so a process that imported
    NumPy already keeps its threads (:func:`main` calls this only before NumPy loads).

    OpenBLAS starts one worker thread per core when it loads (NumPy and SciPy each bundle
    one) and after each call its workers spin before they sleep; that spinning is CPU time
    no answer needs where the arithmetic runs in XLA (whose CPU client has its own thread
    pool) and the host's NumPy arrays are small, as in a ``dpjax`` command, and where every
    core already runs a process of its own, as in the tests' xdist workers.  The commands'
    printed answers are the same with one thread or two (docs/development.md has the
    measurements).

    Args:
      environ: the environment to update (default ``os.environ``).

    Returns:
      Whether ``OPENBLAS_NUM_THREADS`` was set.

    Example:
      >>> env = {"OMP_NUM_THREADS": "4"}
      >>> single_threaded_blas(env), env
      (False, {'OMP_NUM_THREADS': '4'})
    """
    if any(name in environ for name in BLAS_THREAD_VARS):
        return False
    environ["OPENBLAS_NUM_THREADS"] = "1"
    return True


def one_shot_flags(cores: int | None = None) -> str:
    """The ``dpjax`` command's XLA flags: :data:`ONE_SHOT_XLA_FLAGS` and each program's LLVM
    module split into at most one piece per core.

    XLA CPU splits a module into pieces (32 by default) that it compiles on one thread per
    core; pieces beyond the cores cannot compile at the same time and each adds its own
    setup, so the command asks for ``min(cores, 32)`` pieces (docs/development.md).

    Args:
      cores: CPU cores this process may run on (default: its affinity mask).

    Returns:
      Space-separated ``--name=value`` XLA flags.

    Example:
      >>> one_shot_flags(cores=2).split()[-1]
      '--xla_cpu_parallel_codegen_split_count=2'
    """
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    pieces = max(1, min(int(cores), 32))
    return f"{ONE_SHOT_XLA_FLAGS} --xla_cpu_parallel_codegen_split_count={pieces}"


@contextlib.contextmanager
def imports_uncollected(fresh: bool):
    """Import without Python's cyclic garbage collector, then freeze what was imported.

    In a fresh ``dpjax`` process the imports (JAX and the subcommand's modules: hundreds of
    thousands of objects, none of them garbage) trigger the collector's full passes, and
    every later full pass walks those objects again.  With ``fresh``, the collector is
    paused for the block and the objects it allocated are moved to the permanent generation
    (:func:`gc.freeze`) before it resumes: the command's own garbage is collected as usual,
    the imported modules are not walked again.  Nothing computed changes.  A caller's
    process (``fresh=False``, e.g. one that imported JAX before calling :func:`main`) keeps
    its collector as it is; so does a process whose collector was off.

    Args:
      fresh: whether this is a fresh command process (JAX not imported yet).

    Example:
      >>> with imports_uncollected(fresh=False):
      ...     gc.isenabled()
      True
    """
    if not (fresh and gc.isenabled()):
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _cli_name(name: str) -> str:
    return name.replace("_", "-")


def build_parser(only=...) -> argparse.ArgumentParser:
    """The ``dpjax`` argument parser: every subcommand of :data:`COMMANDS`.

    Each subcommand module under :mod:`dpjax.cli` contributes ``add_parser(subparsers)``; a
    subcommand not loaded is listed with its summary (:data:`SUMMARIES`) only, so the
    choices and the ``--help`` listing are the same either way.

    Args:
      only: load every subcommand module (default), ``None`` (none: the light parser of
        ``--help`` and ``--version``, which imports no JAX) or one name of
        :data:`COMMANDS` (that module only).

    Returns:
      The parser.
    """
    parser = _Parser(
        prog="dpjax",
        description="Certified noise design and accounting for differential privacy (JAX).",
    )
    parser.add_argument("--version", action="version", version=f"dpjax {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is ... or only == name:
            importlib.import_module(f"dpjax.cli.{name}").add_parser(sub)
        else:
            sub.add_parser(_cli_name(name), help=SUMMARIES[name], add_help=False)
    return parser


def _command(argv: list[str]) -> str | None:
    """The subcommand module ``argv`` names (its first non-option word), if it is one."""
    word = next((arg for arg in argv if not arg.startswith("-")), None)
    by_cli_name = {_cli_name(name): name for name in COMMANDS}
    return by_cli_name.get(word)


def main(argv: list[str] | None = None) -> int:
    """Run the ``dpjax`` command: parse ``argv``, call the library, print, return the exit code.

    x64 is enabled for the whole process (the command decides privacy: float64
    throughout) before the subcommand's module is imported; compiled programs are cached
    between runs (:mod:`dpjax._compilation_cache`); a fresh process compiles with
    :func:`one_shot_flags` (:func:`one_shot_codegen`), runs OpenBLAS on one thread
    (:func:`single_threaded_blas`) and imports without the garbage collector
    (:func:`imports_uncollected`).  Only the named subcommand's module is
    imported; ``--version``, ``--help`` and usage errors without a subcommand import none
    (and no JAX).

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
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command(argv)
    if command is None:
        parser = build_parser(only=None)
        parser.parse_args(argv)  # --help, --version and usage errors exit here
        names = ", ".join(sorted(_cli_name(name) for name in COMMANDS))
        parser.error(f"give a COMMAND, one of {names}")
    fresh = "jax" not in sys.modules
    one_shot_codegen()  # before JAX starts its backend
    if "numpy" not in sys.modules:  # a caller that imported NumPy keeps its threads
        single_threaded_blas()
    with imports_uncollected(fresh):
        import jax  # deferred: jax (`--version`, `--help` and usage errors import no JAX)

        jax.config.update("jax_enable_x64", True)  # the CLI decides privacy: float64 throughout
        parser = build_parser(only=command)
    args = parser.parse_args(argv)
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
