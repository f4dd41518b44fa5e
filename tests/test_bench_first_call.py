"""``bench/bench_first_call.py``'s peers: each ``dpjax account`` row's dp-accounting job is
the command's job.

The peer of a command is an expression built from its arguments
(``_peer_account``); evaluated here where a closed form answers (a rate of 1 subsamples
nothing; four Gaussian uses are one use at half the sigma; one Laplace use) it must give
dpjax's closed-form epsilon, within dp-accounting's discretisation.
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_first_call  # noqa: E402


def _peer_epsilon(argv):
    import dp_accounting

    task = bench_first_call._peer_account(argv)
    assert task["imports"] == "import dp_accounting"
    return float(eval(task["call"], {"dp_accounting": dp_accounting}))


@pytest.mark.parametrize("argv", [
    *bench_first_call.CLI_ACCOUNT_OTHERS, bench_first_call.CLI_ACCOUNT,
    bench_first_call.CLI_ACCOUNT_DEEP, bench_first_call.CLI_ACCOUNT_LAPLACE,
    bench_first_call.CLI_ACCOUNT_LAPLACE_SAMPLED,
], ids=lambda argv: " ".join(argv[1:]))
def test_each_peer_answers_the_commands_job_in_closed_form(argv):
    import dpjax

    opt = dict(zip(argv[2::2], argv[3::2], strict=True))
    uses = 4 if argv[1] == "gaussian" else 1
    job = [*argv]
    job[job.index("--compositions") + 1] = str(uses)
    if "--sampling-rate" in opt:
        job[job.index("--sampling-rate") + 1] = "1"
    name, value = opt["--param"].split("=")
    one_use = {name: float(value) / uses**0.5}  # K Gaussian uses: sigma / sqrt(K), once
    want = float(dpjax.account(argv[1], one_use, delta=float(opt["--delta"]), l1=1.0, l2=1.0))
    assert _peer_epsilon(job) == pytest.approx(want, rel=2e-3)
