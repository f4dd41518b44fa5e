"""python -m solvers.bench: what a new user sees first (--list, the default output folder)."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_list_shows_every_family_in_a_fresh_process():
    # a fresh interpreter: nothing imported dpjax.spherical.benchmark_family beforehand, so
    # the spherical KL families must come from dpjax's entry point
    out = subprocess.run([sys.executable, "-m", "solvers.bench", "--list"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    listed = {ln.split(":")[0] for ln in out.splitlines() if not ln.startswith("backends")}
    assert {"spherical-kl", "spherical-kl-cap", "spherical-kl-r-near-1",
            "spherical-kl-large-m", "allocation-uniform", "allocation-exponential"} <= listed


def test_default_output_folder_is_ignored_by_git():
    from solvers.bench.__main__ import _parser

    default = _parser().parse_args([]).out
    probe = pathlib.Path(default) / "report.md"
    done = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=ROOT, timeout=60)
    assert done.returncode == 0, f"{probe} is not ignored by git"
