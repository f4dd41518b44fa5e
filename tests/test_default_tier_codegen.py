"""The default tier's XLA codegen (``conftest.DEFAULT_TIER_XLA_FLAGS``) answers what users get.

The default tier compiles as the ``dpjax`` command does
(``dpjax.cli._main.ONE_SHOT_XLA_FLAGS``: XLA CPU's element-wise emitters, LLVM at level 1
with its loop and SLP vectorizers off; they compile faster), and each program in one LLVM
module (no split over threads); the library in a user's process, and the slow tier, compile
with XLA's defaults.  Representative answers of the engine (an epsilon of subsampled Gaussian
uses, a flipped Huber profile, a flipped Huber calibration) and a sampler's draws are
computed in this worker (its backend started under the tier's flags; a fresh process under
them in any other selection) and in a fresh process under XLA's default flags: they agree to
round-off (the draws bit for bit), so a default-tier test that passes would pass under the
codegen users run.  (LLVM's level 0 fails this: it drops the fused multiply-adds of levels 1
and 2, and the epsilon moved by 1.5e-11 relative.)
"""

import json
import os
import subprocess
import sys

import numpy as np
from conftest import DEFAULT_TIER_XLA_FLAGS

_ANSWERS = r'''
import json, sys
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
import dpjax

eps = dpjax.account("gaussian", {"sigma": 1.1}, compositions=50, sampling_rate=0.05,
                    delta=1e-6)
prof = dpjax.profile("flipped-huber", {"alpha": 0.6, "gamma": 1.3}, epsilon=[0.5, 2.0],
                     l1=1.0, l2=1.0, linf=1.0, compositions=4)
cal = dpjax.calibrate("flipped-huber", epsilon=1.0, delta=1e-6, l1=1.0, l2=1.0, linf=1.0)
draws = dpjax.noise.make("flipped-huber", alpha=0.6, gamma=1.3).sample(
    jax.random.key(3), (64,), dtype=jnp.float32)
answers = {
    "epsilon": float(eps),
    "profile": [float(v) for v in jnp.ravel(jnp.asarray(prof))],
    "calibration": [float(v) for v in cal.params.values()] + [float(cal.delta_at_params)],
    "draws": [float(v) for v in draws],
}
'''


def _answers_here() -> dict:
    """The answers in this process (its backend started under the tier's flags)."""
    namespace = {}
    exec(_ANSWERS, namespace)
    return namespace["answers"]


def _answers_fresh(xla_flags: str, cwd) -> dict:
    """The answers in a fresh process under ``xla_flags``."""
    env = dict(os.environ, XLA_FLAGS=xla_flags)
    script = _ANSWERS + "json.dump(answers, sys.stdout)\n"
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=cwd,
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout)


def test_default_tier_codegen_answers_as_xla_defaults(tmp_path):
    flags = os.environ.get("XLA_FLAGS", "").split()
    base = " ".join(f for f in flags if f not in DEFAULT_TIER_XLA_FLAGS.split())
    if all(f in flags for f in DEFAULT_TIER_XLA_FLAGS.split()):
        tier = _answers_here()  # this worker compiles with the tier's codegen
    else:  # another selection: a fresh process under the tier's flags
        tier = _answers_fresh(f"{base} {DEFAULT_TIER_XLA_FLAGS}".strip(), tmp_path)
    users = _answers_fresh(base, tmp_path)  # as a user's process runs: XLA's default flags
    for name in ("epsilon", "profile", "calibration"):
        np.testing.assert_allclose(tier[name], users[name], rtol=1e-12, atol=0, err_msg=name)
    assert tier["draws"] == users["draws"]
