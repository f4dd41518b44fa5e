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
    python bench/bench_first_call.py --targets [--skip-peers] [--repeats N] [--root CHECKOUT]
    python bench/bench_first_call.py --others [--skip-peers] [--repeats N] [--root CHECKOUT]

``--targets`` measures issue 36's fresh-process targets instead, each beside its peer:
``dpjax --version`` / ``--help`` (no JAX import), the ``dpjax account`` command against
dp-accounting's fresh process (CPU seconds, empty and warm compile cache; issue 36's command,
a deeper delta that runs the tilted composition, and 100 uses of Laplace noise, without and
with Poisson subsampling, and a small event ledger, ``--events``), ``dpjax.account``
against its engine call in a warm process, the train accountant's ``epsilon`` / ``report``
at step counts not seen before (seconds and XLA compiles, warm cache), and 1e7 float32
draws of the Gaussian, Laplace and flipped Huber samplers against ``jax.random``.  The
``dpjax account`` rows run ``--repeats`` rounds (default 3), each a cold run, a warm run and
the peer one after the other, and give the median and range of each and the ratios of the
medians: on a shared 2-core host the peer's own process varied from 1.8 to 2.6 CPU s within
one run of four single rounds (2026-12-06).  ``--others`` runs the same ``dpjax account``
rows on :data:`CLI_ACCOUNT_OTHERS`, settings beyond the targets' (many uses at a small rate,
one use at a small delta, many Laplace uses, a subsampled Gaussian at delta 1e-12).

``--root`` times another checkout of dpjax (e.g. main, for a before/after table in the
same run); the checkout's bytecode is written first (``compileall``), as an installed
package has it.  Beside the wall times the table gives the child's CPU time (user + system):
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
import statistics
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
{prelude}{imports}
t = time.perf_counter()
out = {call}
seconds = time.perf_counter() - t
print(json.dumps({{"call": seconds, "import": t - t0, "value": {value}}}))
"""

#: What a dpjax task's process runs before its imports.  A peer's process does not: it
#: imports only what the peer needs (dp-accounting does not import JAX; with this prelude
#: its fresh process carried JAX's import, 2-4 CPU s on this host, and every ratio against
#: it read low).
_JAX_PRELUDE = 'import jax\njax.config.update("jax_enable_x64", True)\n'


def _task(call: str, value: str = "float(out)", imports: str = "import dpjax") -> dict:
    """One timed task of :data:`_TIMED`: its imports (after :data:`_JAX_PRELUDE` where they
    import dpjax), the call and the value it prints."""
    prelude = _JAX_PRELUDE if "dpjax" in imports else ""
    return dict(prelude=prelude, imports=imports, call=call, value=value)


_SIGMA = 'float(out.params["sigma"])'
_DP_ACCOUNTING = "import dp_accounting"
#: dp-accounting's PLD accountant at dpjax's bin width, after 1000 uses of a
#: Poisson-subsampled N(0, 1) at rate 0.01
def _peer_composed(event: str, compositions) -> str:
    """dp-accounting's PLD accountant (bin width 1e-4) after ``compositions`` uses of the
    dp-accounting ``event`` (an expression): the expression."""
    return ("dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4).compose("
            f"{event}, {compositions})")


def _peer_ledger(sigma, sampling_rate, compositions) -> str:
    """dp-accounting's PLD accountant (bin width 1e-4) after ``compositions`` Poisson-subsampled
    Gaussian uses: the expression, the peer of the Gaussian ``account`` jobs here."""
    return _peer_composed(f"dp_accounting.PoissonSampledDpEvent({sampling_rate}, "
                          f"dp_accounting.GaussianDpEvent({sigma}))", compositions)


_PEER_LEDGER = _peer_ledger(1.0, 0.01, 1000)

ENTRY_POINTS = {
    "gaussian": _task('dpjax.calibrate("gaussian", epsilon=0.3, delta=1e-6, l2=1.0)', _SIGMA),
    "dpsgd": _task(
        'dpjax.calibrate("gaussian", epsilon=1.0, delta=1e-5, l2=1.0, '
        "sampling_rate=256 / 60000, compositions=7032)",
        _SIGMA,
    ),
    "account": _task(
        'dpjax.account("gaussian", {"sigma": 1.0}, compositions=1000, '
        "sampling_rate=0.01, delta=1e-5)"
    ),
    "ledger": _task(
        "PLDAccountant().compose(ev.PoissonSampled(0.01, ev.Gaussian(1.0)), 1000)"
        ".get_epsilon(1e-5)",
        imports="import dpjax; from dpjax.accounting import PLDAccountant, events as ev",
    ),
    "profile": _task(
        'dpjax.profile("gaussian", {"sigma": 1.0}, epsilon=[1.0, 2.0], compositions=1000, '
        "sampling_rate=0.01)",
        "float(out[0])",
    ),
    "inid": _task(
        'dpjax.inid.design("gaussian", dpjax.inid.make_profile("linear", 100), '
        "epsilon=1.0, delta=1e-5)",
        "float(out.mse)",
        imports="import dpjax, dpjax.inid",
    ),
    "train-plan": _task(
        'make_plan({"w": np.zeros((10, 10))}, dataset_size=60_000, batch_size=256, '
        "epochs=30, epsilon=3.0, delta=1e-5, clip_norms=1.0)",
        "float(np.max(out.noise_std))",
        imports="import numpy as np; from dpjax.train import make_plan",
    ),
}

#: The same tasks by dp-accounting (PLD accountant at the same bin width, 1e-4); the ledger
#: entry is the account task in the event vocabulary: the same peer.
PEERS = {
    "gaussian": _task(
        "get_sigma_gaussian(0.3, 1e-6)",
        imports="from dp_accounting.gaussian_mechanism import get_sigma_gaussian",
    ),
    "dpsgd": _task(
        "dp_accounting.calibrate_dp_mechanism("
        "lambda: dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4), "
        "lambda s: dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent("
        "256 / 60000, dp_accounting.GaussianDpEvent(s)), 7032), 1.0, 1e-5, "
        "dp_accounting.ExplicitBracketInterval(0.3, 3.0), tol=1e-6)",
        imports=_DP_ACCOUNTING,
    ),
    "account": _task(f"{_PEER_LEDGER}.get_epsilon(1e-5)", imports=_DP_ACCOUNTING),
    "profile": _task(
        f"(lambda a: [a.get_delta(e) for e in (1.0, 2.0)])({_PEER_LEDGER})",
        "float(out[0])",
        imports=_DP_ACCOUNTING,
    ),
}
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


# ---------------------------------------------------------------- issue 36's targets (--targets)

#: ``dpjax account`` (the command) and dp-accounting's same job, each a fresh process.
CLI_ACCOUNT = ["account", "gaussian", "--param", "sigma=1", "--compositions", "1000",
               "--sampling-rate", "0.01", "--delta", "1e-5"]
#: The command at a delta below the engine's ``TILT_BELOW`` (1e-7): the tilted composition
#: runs too (its epsilon, then its certificate's re-check: two more compiled programs).
CLI_ACCOUNT_DEEP = ["account", "gaussian", "--param", "sigma=2", "--compositions", "100",
                    "--sampling-rate", "0.1", "--delta", "1e-8"]
#: Another family: 100 uses of Laplace noise (scale 1, sensitivity 1), no subsampling.
CLI_ACCOUNT_LAPLACE = ["account", "laplace", "--param", "scale=1", "--compositions", "100",
                       "--delta", "1e-5"]
#: Laplace noise under Poisson subsampling: 100 uses at rate 0.1 (scale 1, sensitivity 1).
CLI_ACCOUNT_LAPLACE_SAMPLED = ["account", "laplace", "--param", "scale=1", "--compositions",
                               "100", "--sampling-rate", "0.1", "--delta", "1e-6"]
#: A small event ledger (``dpjax account --events``, bench/events_small.json): one Laplace
#: release (noise multiplier 2), then 100 Poisson-subsampled (rate 0.1) Laplace uses
#: (multiplier 1); :data:`_PEER_EVENTS` composes the same events in dp-accounting.
CLI_ACCOUNT_EVENTS = ["account", "--events", str(ROOT / "bench" / "events_small.json"),
                      "--delta", "1e-6"]
_PEER_EVENTS = (
    "dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)"
    ".compose(dp_accounting.LaplaceDpEvent(2.0))"
    ".compose(dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.LaplaceDpEvent(1.0)), 100)"
)
#: Settings beyond the targets' (``--others``; issue 36's hidden checks repeat its
#: measurements "on other settings"): many uses at a small rate, one use at a small delta,
#: many Laplace uses, and a subsampled Gaussian far below ``TILT_BELOW``.
CLI_ACCOUNT_OTHERS = [
    ["account", "gaussian", "--param", "sigma=0.8", "--compositions", "10000",
     "--sampling-rate", "0.001", "--delta", "1e-6"],
    ["account", "gaussian", "--param", "sigma=1", "--compositions", "1", "--delta", "1e-10"],
    ["account", "laplace", "--param", "scale=2", "--compositions", "1000", "--delta", "1e-6"],
    ["account", "gaussian", "--param", "sigma=5", "--compositions", "300",
     "--sampling-rate", "0.05", "--delta", "1e-12"],
]


def _peer_account(argv: list[str]) -> dict:
    """dp-accounting's PLD accountant (bin width 1e-4) on the job of an ``account`` command
    ``argv``: the event ledger of :data:`CLI_ACCOUNT_EVENTS`, or Gaussian (``sigma``) or
    Laplace (``scale``) noise with ``compositions`` and ``delta``, and ``sampling-rate`` if
    given: Poisson subsampling."""
    if argv[1] == "--events":  # the ledger of CLI_ACCOUNT_EVENTS
        return _task(f"{_PEER_EVENTS}.get_epsilon({argv[-1]})", imports=_DP_ACCOUNTING)
    opt = dict(zip(argv[2::2], argv[3::2], strict=True))
    value = opt["--param"].split("=")[1]
    event = f"dp_accounting.{'Laplace' if argv[1] == 'laplace' else 'Gaussian'}DpEvent({value})"
    if "--sampling-rate" in opt:
        event = f"dp_accounting.PoissonSampledDpEvent({opt['--sampling-rate']}, {event})"
    ledger = _peer_composed(event, opt["--compositions"])
    return _task(f"{ledger}.get_epsilon({opt['--delta']})", imports=_DP_ACCOUNTING)

#: Child: ``dpjax.account`` against its engine call (the mechanism's uncertified
#: ``epsilon_for_delta``, the same arguments) in one warm process, the two calls
#: interleaved, best of 15 each (on a shared 2-core machine best of 7 taken one after the
#: other gave ratios from 1.03 to 1.40 for the same code), the engine's memo of answers
#: emptied before each call (each composes; with the memo kept, both only looked their
#: answers up and the ratio measured the RDP cross-check).
_FACADE = """
import json, time
import jax
import dpjax
from dpjax import _validate
from dpjax.api import _use
from dpjax.mechanisms import get
from dpjax.mechanisms._spec import make_query
def best(fs, n=15):
    out = {f: [] for f in fs}
    for f in fs:
        f()
    for _ in range(n):
        for f in fs:
            t = time.perf_counter(); f(); out[f].append(time.perf_counter() - t)
    return [min(out[f]) for f in fs]
mech = get("gaussian")
params = mech.validate_params({"sigma": 1.0})
query = make_query(mech, _use(1, None, None, None, 1000, 0.01), "exact", True)
answers = dpjax.accounting.pld.engine._ANSWERS  # each call composes: the memo emptied
def engine():
    answers.clear()
    with jax.enable_x64(True):
        return mech.epsilon_for_delta(params, _validate.delta(1e-5), query)
def account():
    answers.clear()
    return dpjax.account("gaussian", {"sigma": 1.0}, compositions=1000, sampling_rate=0.01,
                         delta=1e-5)
a, e = best([account, engine])
print(json.dumps({"account": a, "engine": e}))
"""

#: Child: the train accountant of README's DP-SGD plan; epsilon and report at step counts
#: not seen before (after one warm-up count), with the XLA compiles each triggers.
_TRAIN = """
import json, time
import jax
import numpy as np
from dpjax.train import make_plan
compiles = [0]
jax.monitoring.register_event_duration_secs_listener(
    lambda ev, d, **k: compiles.__setitem__(0, compiles[0] + 1)
    if ev == "/jax/core/compile/backend_compile_duration" else None)
plan = make_plan({"w": np.zeros((10, 10))}, dataset_size=60_000, batch_size=256, epochs=30,
                 epsilon=3.0, delta=1e-5, clip_norms=1.0)
acc = plan.accountant
acc = acc() if callable(acc) else acc
acc.epsilon(1000)
rows = {}
# report(1000): report's first call in the process (its programs load); report(2468): a step
# count new to a process that has reported before (issue 36's "new step count, warm")
for what, steps in (("epsilon", 1777), ("epsilon", 4321), ("report", 1000), ("report", 2468)):
    compiles[0] = 0
    t = time.perf_counter()
    acc.epsilon(steps) if what == "epsilon" else acc.report(steps)
    rows[f"{what}({steps})"] = [time.perf_counter() - t, compiles[0]]
print(json.dumps(rows))
"""

#: Child: 1e7 float32 draws, dpjax's samplers against jax.random (jitted, warm, best of 5).
_SAMPLERS = """
import json, time
import jax, jax.numpy as jnp
import dpjax
n, key = 10**7, jax.random.key(0)
def best(f, reps=5):
    jax.block_until_ready(f())
    out = []
    for _ in range(reps):
        t = time.perf_counter(); jax.block_until_ready(f()); out.append(time.perf_counter() - t)
    return min(out)
normal = jax.jit(lambda k: jax.random.normal(k, (n,), jnp.float32))
laplace = jax.jit(lambda k: jax.random.laplace(k, (n,), jnp.float32))
rows = {}
for name, noise, peer in (
    ("gaussian", dpjax.noise.make("gaussian", sigma=1.0), normal),
    ("laplace", dpjax.noise.make("laplace", scale=1.0), laplace),
    ("flipped-huber", dpjax.noise.make("flipped-huber", alpha=2.0, gamma=1.0), normal),
):
    ours = best(lambda: noise.sample(key, (n,), jnp.float32))
    theirs = best(lambda: peer(key))
    rows[name] = [ours, theirs]
print(json.dumps(rows))
"""


def _cli(argv: list[str], cache: str | None) -> tuple[float, dict]:
    return _run([sys.executable, "-m", "dpjax", *argv], cache)


def _child(code: str, cache: str | None) -> tuple[float, dict]:
    return _run([sys.executable, "-c", code], cache)


def _spread(xs: list[float]) -> str:
    """``median [min-max]`` of ``xs`` (the median alone for one value)."""
    mid = statistics.median(xs)
    return f"{mid:.2f}" if len(xs) == 1 else f"{mid:.2f} [{min(xs):.2f}-{max(xs):.2f}]"


def account_rows(argvs, skip_peers: bool, repeats: int) -> None:
    """One line per ``dpjax account`` command of ``argvs``: ``repeats`` rounds, each a cold
    run (a new cache), a warm run and the peer (:func:`_peer_account`), interleaved so that
    a change in the host's state reaches all three; the median and range of each (CPU
    seconds: user + system) and the ratios of the medians."""
    for argv in argvs:
        kinds = ("cold", "cold_cpu", "warm", "warm_cpu", "peer", "peer_cpu")
        runs: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="dpjax-bench-cache-") as cache:
                for kind in ("cold", "warm"):
                    wall, got = _cli(argv, cache)
                    runs[kind].append(wall)
                    runs[f"{kind}_cpu"].append(got["cpu"])
            if not skip_peers:
                wall, got = _python(_peer_account(argv), None)
                runs["peer"].append(wall)
                runs["peer_cpu"].append(got["cpu"])
        line = (f"dpjax {' '.join(argv)} ({repeats} rounds; median [range]): cold proc "
                f"{_spread(runs['cold'])} s cpu {_spread(runs['cold_cpu'])} s; warm proc "
                f"{_spread(runs['warm'])} s cpu {_spread(runs['warm_cpu'])} s")
        if not skip_peers:
            peer = statistics.median(runs["peer_cpu"])
            line += (f"; dp-accounting proc {_spread(runs['peer'])} s cpu "
                     f"{_spread(runs['peer_cpu'])} s; cpu ratio of medians cold "
                     f"{statistics.median(runs['cold_cpu']) / peer:.2f}x (target <= 3), warm "
                     f"{statistics.median(runs['warm_cpu']) / peer:.2f}x (target <= 1.5)")
        print(line, flush=True)


def targets(skip_peers: bool, repeats: int = 1) -> None:
    """Issue 36's fresh-process targets, each beside its peer (CPU seconds: user + system);
    the ``dpjax account`` rows as :func:`account_rows`."""
    print("\n## issue 36 targets (fresh processes; cpu = the child's user + system seconds)")
    for argv in (["--version"], ["--help"]):
        wall, got = _cli(argv, None)
        print(f"dpjax {argv[0]:<9}  proc {wall:6.2f} s  cpu {got['cpu']:6.2f} s  (target <= 0.3 s)")
    account_rows((CLI_ACCOUNT, CLI_ACCOUNT_DEEP, CLI_ACCOUNT_LAPLACE,
                  CLI_ACCOUNT_LAPLACE_SAMPLED, CLI_ACCOUNT_EVENTS), skip_peers, repeats)
    with tempfile.TemporaryDirectory(prefix="dpjax-bench-cache-") as cache:
        _child(_FACADE, cache)  # fills the cache
        _, got = _child(_FACADE, cache)
    print(f"dpjax.account (warm process): {got['account']:.4f} s, its engine call "
          f"{got['engine']:.4f} s: {got['account'] / got['engine']:.2f}x (target <= 1.2)",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="dpjax-bench-cache-") as cache:
        _child(_TRAIN, cache)  # the cold run fills the cache
        _, got = _child(_TRAIN, cache)
    cells = ", ".join(f"{k} {v[0]:.2f} s ({v[1]} compiles)" for k, v in got.items()
                      if k != "cpu")
    print(f"train accountant, warm cache: {cells} (report(1000) is report's first call in the "
          "process; target <= 1 s at a new step count)", flush=True)
    _, got = _child(_SAMPLERS, None)
    for name, (ours, theirs) in ((k, v) for k, v in got.items() if k != "cpu"):
        print(f"sampler {name:<14} 1e7 float32: dpjax {ours:.3f} s, jax.random {theirs:.3f} s: "
              f"{theirs / ours:.2f}x of jax.random's speed (target >= 0.7)", flush=True)


def _compile_bytecode(root: Path) -> None:
    """Write the bytecode of the checkout's packages, as ``pip install`` does for an installed
    package: the peers' packages were installed with theirs, and a checkout run with
    ``PYTHONDONTWRITEBYTECODE`` set (or never imported) would otherwise compile dpjax's
    sources in every timed process (0.2-0.3 CPU s of each on 2 cores)."""
    import compileall

    for package in ("dpjax", "solvers"):
        if (root / package).is_dir():
            compileall.compile_dir(root / package, quiet=1)


def _fmt(x) -> str:
    return "-" if x is None else f"{x:8.2f}"


def main() -> None:
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [*ENTRY_POINTS, *DESIGNS]
    ap.add_argument("--only", nargs="*", choices=names, default=names)
    ap.add_argument("--skip-peers", action="store_true", help="do not time dp-accounting")
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout of dpjax to time")
    ap.add_argument("--targets", action="store_true",
                    help="only issue 36's targets (command, facade, train accountant, samplers)")
    ap.add_argument("--others", action="store_true",
                    help="only the `dpjax account` rows of CLI_ACCOUNT_OTHERS (other settings)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="rounds of the `dpjax account` targets (cold, warm, peer each round)")
    args = ap.parse_args()
    ROOT = args.root.resolve()

    import jax
    import ml_dtypes  # its version moves every process's import time (docs/benchmarks.md)

    _compile_bytecode(ROOT)

    print(
        f"# first-call bench: python {platform.python_version()}, jax {jax.__version__}, "
        f"ml_dtypes {ml_dtypes.__version__}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; dpjax at {ROOT}"
    )
    head = (
        f"{'entry point':<12} {'cold call':>9} {'cold proc':>9} {'cold cpu':>9} "
        f"{'warm call':>9} {'warm proc':>9} {'warm cpu':>9} {'import':>9} "
        f"{'peer call':>9} {'cold/peer':>9}  value"
    )
    if args.targets:
        targets(args.skip_peers, max(1, args.repeats))
        return
    if args.others:
        print("\n## `dpjax account` on other settings (fresh processes; cpu = user + system s)")
        account_rows(CLI_ACCOUNT_OTHERS, args.skip_peers, max(1, args.repeats))
        return
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
