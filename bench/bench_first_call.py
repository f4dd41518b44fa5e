"""First-call wall time of dpjax's public entry points: cold and warm compilation cache.

Every measurement is a fresh Python process (``subprocess``), so nothing compiled in
one run helps the next except JAX's persistent compilation cache:

* **cold**: an empty ``JAX_COMPILATION_CACHE_DIR`` (a new temporary folder per entry
  point): the call compiles everything it needs;
* **warm**: a new process on the folder the cold run filled: compiled programs are
  read back from disk.

For each entry point the table shows the time of the call itself (after ``import
dpjax``; what a user waits for at the first call), the whole process (interpreter start,
imports, the call), and the same task by the peer a user would pick instead
(dp-accounting, fresh process, same run) where there is one, as the ratio
``dpjax call / peer call``.  The cache threshold is lowered to 0 s
(``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0``) so every compiled program is cached.

    python bench/bench_first_call.py [--only NAME ...] [--skip-peers] [--root CHECKOUT]

``--root`` times another checkout of dpjax (e.g. main, for a before/after table in the
same run).  Beside the wall times the table gives the child's CPU time (user + system):
on a shared machine it is the steadier number.

Entry points: ``gaussian`` (closed form, the target of issue 12:
``dpjax.calibrate("gaussian", epsilon=0.3, delta=1e-6, l2=1)``), ``dpsgd`` (calibrate
the DP-SGD sigma: ``q = 256/60000``, ``T = 7032``, ``epsilon = 1``, ``delta = 1e-5``),
``account`` (epsilon of sigma = 1, ``q = 0.01``, ``T = 1000``, ``delta = 1e-5``),
``design`` (``dpjax design`` with its defaults, through the command's ``main``: the
process time is the number to read), ``design-dim20`` (``dpjax design --dim 20 --linf
1``, likewise: the spherical, K-dim Laplace and Theorem 8 searches), ``ledger`` (the
``account`` task through the event ledger, dp-accounting's vocabulary:
``PLDAccountant().compose(PoissonSampled(0.01, Gaussian(1.0)), 1000).get_epsilon(1e-5)``;
its peer is dp-accounting's PLD accountant on the same events), ``profile`` (delta at
epsilon 1 and 2 of the ``account`` composition; peer: dp-accounting's ``get_delta`` at
both), ``inid`` (``dpjax.inid.design``: optimal per-coordinate Gaussian scales for a
linear sensitivity profile of 100 coordinates at ``(1, 1e-5)``), ``train-plan``
(``dpjax.train.make_plan`` of the README's DP-SGD example: 60 000 examples, batch 256,
30 epochs, ``(3, 1e-5)``), ``spherical`` (``dpjax spherical design --dim 10 --cost 100``,
through the command's ``main``).

Results (2 CPU cores, and one H100 with its 16 host cores beside it):
``bench/results/first_call_2026-11-27.txt``; the same sandbox in a faster state, before and
after the PLD engine's bin width became traced, then every entry point there and on one H200
with its 16 host cores: ``bench/results/first_call_2026-11-27_s9.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Python run in the child: prints ``{"call": seconds}`` on its last line.
_TIMED = """
import json, time
t0 = time.perf_counter()
import jax
jax.config.update("jax_enable_x64", True)
{imports}
t = time.perf_counter()
out = {call}
seconds = time.perf_counter() - t
print(json.dumps({{"call": seconds, "import": t - t0, "value": {value}}}))
"""

ENTRY_POINTS = {
    "gaussian": dict(
        imports="import dpjax",
        call='dpjax.calibrate("gaussian", epsilon=0.3, delta=1e-6, l2=1.0)',
        value='float(out.params["sigma"])',
    ),
    "dpsgd": dict(
        imports="import dpjax",
        call=(
            'dpjax.calibrate("gaussian", epsilon=1.0, delta=1e-5, l2=1.0, '
            "sampling_rate=256 / 60000, compositions=7032)"
        ),
        value='float(out.params["sigma"])',
    ),
    "account": dict(
        imports="import dpjax",
        call=(
            'dpjax.account("gaussian", {"sigma": 1.0}, compositions=1000, '
            "sampling_rate=0.01, delta=1e-5)"
        ),
        value="float(out)",
    ),
    "ledger": dict(
        imports="import dpjax; from dpjax.accounting import PLDAccountant, events as ev",
        call=(
            "PLDAccountant().compose(ev.PoissonSampled(0.01, ev.Gaussian(1.0)), 1000)"
            ".get_epsilon(1e-5)"
        ),
        value="float(out)",
    ),
    "profile": dict(
        imports="import dpjax",
        call=(
            'dpjax.profile("gaussian", {"sigma": 1.0}, epsilon=[1.0, 2.0], compositions=1000, '
            "sampling_rate=0.01)"
        ),
        value="float(out[0])",
    ),
    "inid": dict(
        imports="import dpjax, dpjax.inid",
        call=(
            'dpjax.inid.design("gaussian", dpjax.inid.make_profile("linear", 100), '
            "epsilon=1.0, delta=1e-5)"
        ),
        value="float(out.mse)",
    ),
    "train-plan": dict(
        imports="import numpy as np; from dpjax.train import make_plan",
        call=(
            'make_plan({"w": np.zeros((10, 10))}, dataset_size=60_000, batch_size=256, '
            "epochs=30, epsilon=3.0, delta=1e-5, clip_norms=1.0)"
        ),
        value="float(np.max(out.noise_std))",
    ),
}

#: The same tasks by dp-accounting (PLD accountant at the same bin width, 1e-4).
PEERS = {
    "gaussian": dict(
        imports="from dp_accounting.gaussian_mechanism import get_sigma_gaussian",
        call="get_sigma_gaussian(0.3, 1e-6)",
        value="float(out)",
    ),
    "dpsgd": dict(
        imports="import dp_accounting",
        call=(
            "dp_accounting.calibrate_dp_mechanism("
            "lambda: dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4), "
            "lambda s: dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent("
            "256 / 60000, dp_accounting.GaussianDpEvent(s)), 7032), 1.0, 1e-5, "
            "dp_accounting.ExplicitBracketInterval(0.3, 3.0), tol=1e-6)"
        ),
        value="float(out)",
    ),
    "account": dict(
        imports="import dp_accounting",
        call=(
            "dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4).compose("
            "dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), "
            "1000).get_epsilon(1e-5)"
        ),
        value="float(out)",
    ),
}

PEERS["profile"] = dict(
    imports="import dp_accounting",
    call=(
        "(lambda a: [a.get_delta(e) for e in (1.0, 2.0)])("
        "dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4).compose("
        "dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000))"
    ),
    value="float(out[0])",
)

#: the ledger entry is the account task in the event vocabulary: the same peer
PEERS["ledger"] = PEERS["account"]


def _env(cache: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_COMPILATION_CACHE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
    if cache is None:
        env["DPJAX_NO_COMPILATION_CACHE"] = "1"
    else:  # dpjax's default folders ($XDG_CACHE_HOME/dpjax: XLA binaries and exported programs)
        env.pop("DPJAX_NO_COMPILATION_CACHE", None)
        env["XDG_CACHE_HOME"] = cache
    return env


def _run(argv: list[str], cache: str | None) -> tuple[float, dict]:
    """``(process seconds, last JSON line or {})`` of ``argv`` in a fresh process; the JSON
    gains ``cpu``, the child's user + system seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(argv, env=_env(cache), cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    try:
        got = json.loads(last)
    except json.JSONDecodeError:
        got = {}
    return wall, {**(got if isinstance(got, dict) else {}), "cpu": cpu}


def _python(spec: dict, cache: str | None) -> tuple[float, dict]:
    return _run([sys.executable, "-c", _TIMED.format(**spec)], cache)


#: ``dpjax design`` runs, through the command's ``main`` (argv after ``dpjax``).
DESIGNS = {
    "design": ["design", "--json"],
    "design-dim20": ["design", "--dim", "20", "--linf", "1", "--json"],
    "spherical": ["spherical", "design", "--dim", "10", "--cost", "100", "--json"],
}


def _design(cache: str | None, argv: list[str]) -> tuple[float, dict]:
    code = f"import sys; from dpjax.cli._main import main; sys.exit(main({argv!r}))"
    return _run([sys.executable, "-c", code], cache)


def _cold_warm(run) -> dict:
    with tempfile.TemporaryDirectory(prefix="dpjax-bench-cache-") as cache:
        cold_wall, cold = run(cache)
        warm_wall, warm = run(cache)
    return dict(
        cold_call=cold.get("call"), cold_wall=cold_wall, cold_cpu=cold.get("cpu"),
        warm_call=warm.get("call"), warm_wall=warm_wall, warm_cpu=warm.get("cpu"),
        value=cold.get("value"), imports=warm.get("import"),
    )


def _fmt(x) -> str:
    return "-" if x is None else f"{x:8.2f}"


def main() -> None:
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [*ENTRY_POINTS, *DESIGNS]
    ap.add_argument("--only", nargs="*", choices=names, default=names)
    ap.add_argument("--skip-peers", action="store_true", help="do not time dp-accounting")
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout of dpjax to time")
    args = ap.parse_args()
    ROOT = args.root.resolve()

    import jax

    print(
        f"# first-call bench: python {platform.python_version()}, jax {jax.__version__}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; dpjax at {ROOT}"
    )
    head = (
        f"{'entry point':<12} {'cold call':>9} {'cold proc':>9} {'cold cpu':>9} "
        f"{'warm call':>9} {'warm proc':>9} {'warm cpu':>9} {'import':>9} "
        f"{'peer call':>9} {'cold/peer':>9}  value"
    )
    print(head)
    print("-" * len(head))
    for name in args.only:
        if name in DESIGNS:
            row = _cold_warm(lambda cache, n=name: _design(cache, DESIGNS[n]))
        else:
            row = _cold_warm(lambda cache, n=name: _python(ENTRY_POINTS[n], cache))
        peer = None
        if name in PEERS and not args.skip_peers:
            _, got = _python(PEERS[name], None)
            peer = got.get("call")
        ratio = None if peer is None or row["cold_call"] is None else row["cold_call"] / peer
        value = "" if row["value"] is None else f"{row['value']:.6g}"
        print(
            f"{name:<12} {_fmt(row['cold_call']):>9} {_fmt(row['cold_wall']):>9} "
            f"{_fmt(row['cold_cpu']):>9} {_fmt(row['warm_call']):>9} "
            f"{_fmt(row['warm_wall']):>9} {_fmt(row['warm_cpu']):>9} "
            f"{_fmt(row['imports']):>9} {_fmt(peer):>9} {_fmt(ratio):>9}  {value}",
            flush=True,
        )
    print(
        "\nseconds; call = the call after `import dpjax`, proc = the whole fresh process "
        "(for design* and spherical: the `dpjax` command with `--json`), "
        "cpu = its user + system time, import = `import jax; import dpjax` (warm run); "
        "peer = dp-accounting, fresh process"
    )


if __name__ == "__main__":
    main()
