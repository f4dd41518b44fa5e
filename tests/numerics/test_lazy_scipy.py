"""SciPy imported on first use (:mod:`dpjax.numerics.lazy_scipy`): the proxies give SciPy's own
functions, and the account paths of the issue's commands never import SciPy (its import
costs a command about 0.3-0.45 CPU s; issue 36, item 3)."""

import os
import subprocess
import sys
from pathlib import Path

import scipy.linalg
import scipy.special

from dpjax.numerics.lazy_scipy import OnFirstUse, linalg, special

ROOT = Path(__file__).resolve().parents[2]


def test_proxies_give_scipys_functions_and_keep_them():
    assert special.ndtri_exp is scipy.special.ndtri_exp
    assert linalg.solveh_banded is scipy.linalg.solveh_banded
    lazy = OnFirstUse("scipy.special")
    assert "gammaln" not in vars(lazy)
    assert lazy.gammaln is scipy.special.gammaln and "gammaln" in vars(lazy)
    assert "imported on first use" in repr(lazy)


def test_account_commands_import_no_scipy():
    """Every package the ``dpjax account`` command imports, a composed Laplace account
    through the engine and a Poisson-subsampled Gaussian one (the engine with its Gaussian
    grid ends, and the RDP bound it is the minimum with: binomials, normal tails), in a
    fresh process: SciPy stays unimported (a module that imports it at module level, or a
    host bound that calls it, would put it back on every command's bill)."""
    probe = (
        "import sys, io, contextlib; from dpjax.cli._main import main\n"
        "import dpjax.api, dpjax.accounting, dpjax.calibration, dpjax.mechanisms, dpjax.noise\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['account', 'laplace', '--param', 'scale=2', '--compositions', '3',"
        " '--delta', '1e-5'])\n"
        "    main(['account', 'gaussian', '--param', 'sigma=2', '--compositions', '3',"
        " '--sampling-rate', '0.1', '--delta', '1e-8'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
