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
]


@pytest.mark.parametrize("argv", MISUSES, ids=lambda a: " ".join(a[:3]))
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
