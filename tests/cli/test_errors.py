"""Every CLI misuse is one line on stderr with exit status 2 (no usage block, no reprs)."""

import subprocess
import sys

import pytest

from dpjax.cli._main import main

MISUSES = [
    ["calibrate", "gausian", "--epsilon", "1", "--delta", "1e-5", "--l2", "1"],
    ["calibrate", "gaussian", "--epsilon", "abc", "--delta", "1e-5", "--l2", "1"],
    ["calibrate", "gaussian", "--epsilon", "-1", "--delta", "1e-5", "--l2", "1"],
    ["account", "gaussian", "--param", "sigma=abc", "--delta", "1e-5"],
    ["account", "gaussian", "--param", "sigma=1", "--epsilon", "1", "--delta", "1e-5"],
    ["reproduce", "foo"],
    ["nosuchcommand"],
    [],
    ["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--dim", "3"],
    ["profile", "gaussian", "--param", "sigma=1", "--param", "sigma=2", "--epsilon", "1"],
    ["profile", "gaussian", "--param", "sigma", "--epsilon", "1"],
    ["account", "gaussian", "--param", "sigma=1", "--delta", "1e-5", "--bin-width", "-1"],
    ["account", "gaussian", "--param", "sigma=1", "--delta", "1e-5", "--relation", "add"],
    ["account", "--events", "/nonexistent/events.json", "--delta", "1e-5"],
    ["design", "--dim", "0", "--l2", "1"],
    ["design", "--epsilon", "abc"],
    ["train-plan", "--epsilon", "abc"],
]


@pytest.mark.parametrize("argv", MISUSES, ids=lambda a: " ".join(a) or "no command")
def test_one_line_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        code = main(argv)
        raise SystemExit(code)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "usage:" not in err and "np.float64" not in err


def test_version_and_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "dpjax", "--version"], capture_output=True,
                         text=True, check=True)
    from dpjax import __version__

    assert out.stdout.strip() == f"dpjax {__version__}"
