"""``dpjax --version`` / ``--help`` import no JAX (issue 36, item 3): ``import dpjax`` is
lazy (PEP 562) and the CLI imports only the subcommand it runs."""

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import contextlib, io, sys
import dpjax.cli
from dpjax.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main({argv!r})
    except SystemExit as stop:
        code = stop.code
heavy = sorted(m for m in sys.modules if m == "jax" or m.startswith(("jax.", "jaxlib", "numpy")))
loaded = sorted(m for m in sys.modules if m.startswith("dpjax.") and m != "dpjax.cli._main")
print(repr((code, out.getvalue(), heavy, loaded)))
"""


def _child(argv):
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _CHILD.format(argv=argv)], env=env,
                          capture_output=True, text=True, timeout=120)
    return done, eval(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_import_no_jax(argv):
    done, got = _child(argv)
    assert got is not None, done.stderr[-2000:]
    code, out, heavy, loaded = got
    assert heavy == [], heavy
    assert loaded == ["dpjax._compilation_cache", "dpjax.cli", "dpjax.errors"], loaded
    if argv == ["--version"]:
        assert code == 0 and out.strip() == "dpjax 0.1.0"
    elif argv == ["--help"]:
        assert code == 0 and "train-plan" in out and "account" in out
    else:
        assert code == 2 and "give a COMMAND" in done.stderr


def test_light_listing_is_the_modules_own():
    """The summaries --help shows without importing a subcommand are those the modules
    register, and the light parser offers the same choices."""
    from dpjax.cli._main import build_parser

    def listing(parser):
        sub = next(a for a in parser._actions if a.dest == "command")
        return [(a.dest, a.help) for a in sub._choices_actions], sorted(sub.choices)

    assert listing(build_parser(only=None)) == listing(build_parser())
    assert listing(build_parser(only="account")) == listing(build_parser())


def test_lazy_package_keeps_its_public_names():
    """``import dpjax`` loads names on first use; every name of __all__ resolves to the
    object of its home module, and subpackages still resolve as attributes."""
    import dpjax
    from dpjax import api, comparison, train
    from dpjax.calibration.result import Calibration

    assert dpjax.account is api.account and dpjax.calibrate is api.calibrate
    assert dpjax.design is comparison.design and dpjax.Calibration is Calibration
    assert dpjax.train is train
    for name in dpjax.__all__:
        assert getattr(dpjax, name) is not None
    assert set(dpjax.__all__) <= set(dir(dpjax))
    with pytest.raises(AttributeError, match="no_such_name"):
        dpjax.no_such_name  # noqa: B018


def test_compilation_cache_set_when_jax_is_imported_after_dpjax(tmp_path):
    """``import dpjax`` before JAX: the hook configures the cache once JAX is imported."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DPJAX_NO_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    env.update(XDG_CACHE_HOME=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    probe = ("import sys, dpjax; assert 'jax' not in sys.modules; import jax; "
             "print(jax.config.jax_compilation_cache_dir, "
             "jax.config.jax_persistent_cache_min_compile_time_secs)")
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.split() == [str(tmp_path / "dpjax" / "xla"), "0.0"]


def test_a_fresh_command_compiles_with_the_one_shot_codegen():
    """A ``dpjax`` process sets the one-shot XLA flags before JAX starts, unless the user's
    ``XLA_FLAGS`` name any of them (the emitters, the LLVM level, the module split); a
    process that imported JAX keeps its own flags."""
    from dpjax.cli._main import one_shot_codegen, one_shot_flags

    probe = ("import os; from dpjax.cli._main import main; main(['mechanisms']); "
             "import jax; jax.numpy.zeros(1).block_until_ready(); "
             "print(repr(os.environ.get('XLA_FLAGS')))")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    mine, level = "--xla_cpu_use_fusion_emitters=true", "--xla_backend_optimization_level=2"
    other = "--xla_cpu_enable_fast_math=false"
    pieces = "--xla_cpu_parallel_codegen_split_count=3"
    flags = one_shot_flags()
    for given, expected in ((None, flags), (mine, mine), (level, level), (pieces, pieces),
                            (other, f"{other} {flags}")):
        child = dict(env) if given is None else {**env, "XLA_FLAGS": given}
        done = subprocess.run([sys.executable, "-c", probe], env=child, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1] == repr(expected)
    env = {}
    assert one_shot_codegen(env) is False and env == {}  # this process imported JAX


def test_a_fresh_command_runs_openblas_on_one_thread_unless_the_user_chose():
    """A ``dpjax`` process sets ``OPENBLAS_NUM_THREADS=1`` before NumPy loads, so the
    OpenBLAS of NumPy and of SciPy each run one thread (as ``threadpoolctl`` reads them);
    a thread count the user set (any of ``BLAS_THREAD_VARS``) wins."""
    pytest.importorskip("threadpoolctl")
    from dpjax.cli._main import BLAS_THREAD_VARS, single_threaded_blas

    threads = ("import numpy, scipy.special, threadpoolctl; "
               "print(sorted({i['num_threads'] for i in threadpoolctl.threadpool_info() "
               "if i['internal_api'] == 'openblas'}))")
    command = "from dpjax.cli._main import main; main(['mechanisms']); " + threads
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))

    def openblas_threads(code, child):
        done = subprocess.run([sys.executable, "-c", code], env=child, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip().splitlines()[-1]

    assert openblas_threads(command, env) == "[1]"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):  # as a process without dpjax
        child = {**env, name: "2"}
        assert openblas_threads(command, child) == openblas_threads(threads, child)
    for name in BLAS_THREAD_VARS:
        env = {name: "3"}
        assert single_threaded_blas(env) is False and env == {name: "3"}
    env = {}
    assert single_threaded_blas(env) is True and env == {"OPENBLAS_NUM_THREADS": "1"}


def test_a_fresh_command_imports_without_the_collector_and_freezes_them():
    """A fresh ``dpjax`` process imports JAX and its subcommand with the garbage collector
    paused, moves those objects to the permanent generation and turns the collector back
    on; a process that imported JAX first (a caller of ``main``) keeps its collector."""
    import gc

    from dpjax.cli._main import imports_uncollected, main

    probe = ("import gc; from dpjax.cli._main import main; main(['mechanisms']); "
             "print(gc.isenabled(), gc.get_freeze_count() > 100000)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True True"
    frozen = gc.get_freeze_count()
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["mechanisms"]) == 0  # this process imported JAX: nothing frozen
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    gc.disable()
    try:  # a collector the process turned off stays off
        with imports_uncollected(fresh=True):
            pass
        assert not gc.isenabled() and gc.get_freeze_count() == frozen
    finally:
        gc.enable()


def test_the_command_splits_each_module_into_at_most_one_piece_per_core():
    """``one_shot_flags`` asks XLA for ``min(cores, 32)`` pieces per LLVM module (32 is
    XLA's own split), by default for the cores this process may run on."""
    from dpjax.cli._main import ONE_SHOT_XLA_FLAGS, one_shot_flags

    flag = "--xla_cpu_parallel_codegen_split_count"
    for cores, pieces in ((1, 1), (2, 2), (16, 16), (32, 32), (96, 32)):
        assert one_shot_flags(cores) == f"{ONE_SHOT_XLA_FLAGS} {flag}={pieces}"
    assert one_shot_flags() == one_shot_flags(len(os.sched_getaffinity(0)))
