"""python -m solvers.bench: what a new user sees first (--list, the default output folder)."""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_list_shows_every_family_in_a_fresh_process():
    # a fresh interpreter: nothing imported dpjax.spherical.benchmark_family beforehand, so
    # the spherical KL families must come from dpjax's entry point
    out = subprocess.run([sys.executable, "-m", "solvers.bench", "--list"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    listed = {ln.split(":")[0] for ln in out.splitlines() if not ln.startswith("backends")}
    assert {"spherical-kl", "spherical-kl-cap", "spherical-kl-r-near-1",
            "spherical-kl-large-m", "allocation-uniform", "allocation-exponential"} <= listed


def test_default_output_folders_are_ignored_by_git():
    from solvers.bench.__main__ import DEFAULT_OUT, QUICK_OUT

    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an exported tree): nothing to ask git")
    for default in (DEFAULT_OUT, QUICK_OUT):
        probe = pathlib.Path(default) / "report.md"
        done = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=ROOT, timeout=60)
        assert done.returncode == 0, f"{probe} is not ignored by git"


def test_quick_mode_report(tmp_path, capsys):
    from solvers.bench import get_family
    from solvers.bench.__main__ import QUICK_TIME_LIMIT, main

    out = tmp_path / "quick"
    names = ["allocation-uniform", "allocation-exponential"]
    assert main(["--quick", "--family", ",".join(names), "--backends", "jax-f64", "--out",
                 str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    prov = doc["provenance"]
    assert prov["quick"] and prov["seeds"] == [0, 1, 2] and prov["families"] == names
    assert prov["time_limit_s"] == QUICK_TIME_LIMIT
    rows = doc["rows"]
    assert [(r["family"], r["size"], r["seed"]) for r in rows] == [
        (n, get_family(n).quick, s) for n in names for s in (0, 1, 2)]
    assert all(r["solved_1e-08"] and r["end_to_end_s"] >= r["time_s"] for r in rows)
    assert [r["warm_up"] for r in rows] == [True, False, False] * 2
    line = doc["summary"][0]
    assert {"ratio_10", "ratio_e2e_10", "ratio_e2e_0.001"} <= set(line)
    assert "end-to-end" in (out / "report.md").read_text()
