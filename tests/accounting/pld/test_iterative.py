"""Algorithm 2 (iterative K-fold integration, certified chords) vs FFT vs closed forms; FH; shards.

Tolerances: both methods are pessimistic discretisations of the same profile
with bin width h; they agree with each other and with closed forms to
O(K h^2) relative (<= 2e-4 here).  Flipped Huber has point masses in its loss
(the flat Laplace part): the certified chords integrate them exactly, so
iterative, FFT and the 1-D exact profile (eq. (13)) agree there too.
"""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np

from dpjax.accounting.gaussian import delta_gaussian
from dpjax.accounting.pld import delta_for_epsilon, from_noise, self_compose, self_compose_size
from dpjax.accounting.pld.iterative import iterative_profile
from dpjax.noise.gaussian import Gaussian

# the profile's queries, jitted: one compiled program each (op-by-op dispatch compiled some
# fifty small ones per query)
_delta_at = jax.jit(lambda it, eps: it.delta_at(eps))
_epsilon_at = jax.jit(lambda it, delta: it.epsilon_at(delta))


def test_iterative_gaussian_closed_form_and_fft():
    k, h = 4, 1e-3
    # the nu grid +-10, not the default +-K l_max = +-27 (each step's two correlations cost
    # nu points times loss bins): the queried epsilons (<= 3.9) read the previous step's
    # profile within the loss range +-6.8 of them; outside the grid its certified bounds
    # stand in (below: the chord from (e^nu = 0, delta = 1); above: the top value, ~1e-28)
    it = iterative_profile(Gaussian(2.0), 1.0, k, h, nu_range=(-10.0, 10.0))
    eps = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    exact = np.asarray(delta_gaussian(eps, 2.0, np.sqrt(k)))
    got = np.asarray(_delta_at(it, eps))
    assert np.all(got >= exact * (1 - 1e-12))
    np.testing.assert_allclose(got, exact, rtol=2e-4)
    # epsilon(delta) inverts with the same certificate
    e = np.asarray(_epsilon_at(it, np.array([1e-2, 1e-4])))
    assert np.all(np.asarray(_delta_at(it, e)) <= np.array([1e-2, 1e-4]) * (1 + 1e-12))


def test_iterative_vs_fft_flipped_huber_point_masses():
    import dpjax.noise.flipped_huber as fh_mod
    from dpjax.accounting.flipped_huber import log_delta_flipped_huber

    fh = fh_mod.FlippedHuber(jnp.float64(3.0), jnp.float64(6.0))
    h, k = 1e-3, 3
    one = from_noise(fh, 1.0, h)
    eps1 = np.array([0.0, 0.02, 0.05, 0.08])  # plateau region of the loss included
    np.testing.assert_allclose(
        np.asarray(delta_for_epsilon(one, eps1)),
        np.exp(np.asarray(jax.jit(log_delta_flipped_huber)(eps1, 3.0, 6.0, 1.0))),
        rtol=1e-6,
    )
    it = iterative_profile(fh, 1.0, k, h)
    fft = self_compose(one, k, self_compose_size(one, k))
    eps = np.array([0.05, 0.1, 0.2, 0.3])
    a, b = np.asarray(_delta_at(it, eps)), np.asarray(delta_for_epsilon(fft, eps))
    np.testing.assert_allclose(a, b, rtol=2e-4)


_SHARD_SCRIPT = textwrap.dedent(
    """
    import json, jax
    jax.config.update("jax_enable_x64", True)
    import numpy as np
    from dpjax.noise.gaussian import Gaussian
    from dpjax.calibration import scale_search
    import pathlib, tempfile
    from dpjax.numerics import export_cache
    folder = pathlib.Path(tempfile.mkdtemp())
    export_cache.export_dir = lambda: folder  # the export cache on, as for users
    out = {"n": jax.device_count()}
    for shard in (True, False):
        r = scale_search.calibrate_scale(Gaussian.from_scale, 0.0, 1.0, np.linspace(0.5, 2.0, 5),
                                         1e-6, 3, None, 1e-3, upper=20.0, lower=1.0, shard=shard)
        out[str(shard)] = [r.scale.tolist(), r.certified.tolist()]
        out["exported", shard] = sorted(p.name.split("-")[0] for p in folder.iterdir())
    print(json.dumps({str(k): v for k, v in out.items()}))
    """
)


def _run(devices):
    env = dict(os.environ)
    # the run's own XLA flags kept (the default tier's fast codegen, tests/conftest.py: the
    # child compiles the calibration's programs twice, sharded and not)
    env["XLA_FLAGS"] = (
        f"{env.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
    )
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run(
        [sys.executable, "-c", _SHARD_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    import json

    return json.loads(out.stdout.strip().splitlines()[-1])


def test_sharded_grid_equals_unsharded():
    """Calibration grid sharded over 8 host devices == the same grid on one device."""
    out = _run(8)
    assert out["n"] == 8
    (sharded, ok_s), (single, ok_1) = out["True"], out["False"]
    assert all(ok_s) and all(ok_1)
    # the per-device programs round differently from the single-device one, and the
    # one-stage search (no warm settle) follows the last ulps of the profile: agreement is
    # far inside the search's contract (tolerance 1e-7 relative), not bit for bit
    np.testing.assert_allclose(sharded, single, rtol=1e-10)
    # the sharded search kernel took the jit path (a cached program is compiled for one
    # device); the single-device run loaded its own through the export cache
    assert "kernel" not in out["('exported', True)"]
    assert "kernel" in out["('exported', False)"]
