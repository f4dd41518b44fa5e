"""The first call of the common closed-form entry points compiles nothing (issue 12).

A fresh process imports dpjax and calibrates the one-use Gaussian and 1-D Laplace
mechanisms with JAX's compile log on (``JAX_LOG_COMPILES=1``): the host paths must answer
without a single XLA compilation, and ``import dpjax`` must not load the heavy optional
dependencies.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import json, sys
import dpjax
heavy = [m for m in ("cvxpy", "scipy.stats", "matplotlib", "sklearn", "optax")
         if m in sys.modules]
g = dpjax.calibrate("gaussian", epsilon=0.3, delta=1e-6, l2=1.0)
lap = dpjax.calibrate("laplace", epsilon=0.3, delta=1e-6, l1=1.0)
print(json.dumps({"heavy": heavy, "sigma": float(g.params["sigma"]),
                  "g_delta": float(g.delta_at_params), "scale": float(lap.params["scale"]),
                  "l_delta": float(lap.delta_at_params)}))
"""


def test_gaussian_and_laplace_first_calls_compile_nothing(tmp_path):
    env = {**os.environ, "JAX_LOG_COMPILES": "1", "DPJAX_NO_COMPILATION_CACHE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    compiles = [ln for ln in done.stderr.splitlines() if "Finished XLA compilation" in ln]
    assert compiles == [], compiles
    assert got["heavy"] == []
    # the answers: sigma as the compiled search gave it on main (556fa5c), the Laplace closed
    # form b = 1 / (eps - 2 log(1 - delta)); both certified
    assert abs(got["sigma"] / 12.992382894921809 - 1) < 1e-12 and got["g_delta"] <= 1e-6
    assert abs(got["scale"] * (0.3 - 2 * math.log1p(-1e-6)) - 1) < 1e-9
    assert got["l_delta"] <= 1e-6


def test_staircase_pure_dp_certificate_matches_the_exact_profile():
    # the 1-D calibration certifies delta = 0 by eps_0 = decay ceil(linf / width) <= epsilon
    # (no compiled profile); the exact profile at the returned parameters agrees
    import numpy as np

    import dpjax

    eps = np.array([1e-3, 0.3, 1.0, 7.5, 40.0])
    cal = dpjax.calibrate("staircase", epsilon=eps, delta=1e-9, linf=2.5)
    assert np.all(cal.delta_at_params == 0)
    for i, e in enumerate(eps):
        p = {k: float(v[i]) for k, v in cal.params.items()}
        assert float(dpjax.profile("staircase", p, e, linf=2.5)) == 0.0
        assert float(dpjax.profile("staircase", p, e * (1 - 1e-6), linf=2.5)) > 0.0
