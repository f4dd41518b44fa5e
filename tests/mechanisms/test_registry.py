"""The mechanism registry: names, parameters, unknown names, the spherical and i.n.i.d. entries."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpjax
from dpjax.calibration.result import Calibration
from dpjax.errors import CertificationError
from dpjax.mechanisms import ELSEWHERE, get, names
from dpjax.mechanisms._spec import Mechanism, Query
from dpjax.sensitivity import Sensitivity

#: The names and parameters of the public surface (papers' notation).
PARAMS = {
    "gaussian": ("sigma",),
    "laplace": ("scale",),
    "flipped-huber": ("alpha", "gamma"),
    "osgt": ("vartheta", "rho"),
    "truncated-laplace": ("scale", "bound"),
    "staircase": ("decay", "width", "gamma"),
    "spherical": ("budget", "n", "N", "r"),
    "discrete-laplace": ("noise_parameter",),
    "discrete-gaussian": ("sigma",),
}


def test_names_and_parameters():
    assert names() == tuple(PARAMS)
    for name, params in PARAMS.items():
        mech = get(name)
        assert mech.name == name and mech.param_names == params and mech.summary


def test_the_registry_metadata_loads_no_spherical_solver():
    """Describing every mechanism (``dpjax mechanisms``, the CLI's ``--param`` help, which
    every ``dpjax account`` / ``calibrate`` / ``profile`` run builds) imports the spherical
    entry without :mod:`dpjax.spherical`: its calibration imports that on first use."""
    probe = ("import sys; from dpjax.mechanisms import describe, parameter_help; "
             "describe(); parameter_help(); "
             "print(sorted(m for m in sys.modules if m.startswith('dpjax.spherical')))")
    paths = [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_one_dimensional_mechanisms_are_the_noise_families():
    for name in dpjax.noise.names():
        mech = get(name)
        assert mech.noise is dpjax.noise.family(name)
        assert dict(mech.constraints) == mech.noise.constraints
    assert get("spherical").noise is None and get("spherical").min_dim == 2


def test_make_noise_validates_through_the_family():
    noise = get("flipped-huber").make_noise({"alpha": 2.0, "gamma": 1.0})
    assert isinstance(noise, dpjax.noise.FlippedHuber)
    with pytest.raises(ValueError, match="gamma must be finite and > 0, got 0.0"):
        get("flipped-huber").make_noise({"alpha": 2.0, "gamma": 0.0})
    with pytest.raises(ValueError, match="spherical noise is not a 1-D family"):
        get("spherical").make_noise({"budget": 1.0, "n": 10, "N": 30, "r": 0.5})


@pytest.mark.parametrize(
    "params,match",
    [
        ({"budget": 1.0, "n": 10, "N": 30}, "missing: r"),
        ({"budget": 1.0, "n": 10.5, "N": 30, "r": 0.5}, "n must be an integer >= 1, got 10.5"),
        ({"budget": 1.0, "n": 10, "N": 1, "r": 0.5}, "N must be an integer >= 2, got 1"),
        ({"budget": 1.0, "n": 10, "N": 30, "r": 1.0}, r"r must lie in \(0, 1\), got 1.0"),
        ({"budget": -1.0, "n": 10, "N": 30, "r": 0.5}, "budget must be finite and > 0"),
    ],
)
def test_spherical_parameters_are_validated(params, match):
    with pytest.raises(ValueError, match=match):
        get("spherical").validate_params(params)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown mechanism 'cactus'; known: gaussian, laplace"):
        get("cactus")
    with pytest.raises(ValueError, match="spherical"):
        dpjax.calibrate("cactus", epsilon=1.0, delta=1e-6, l2=1.0)


@pytest.mark.parametrize(
    "name,call", [("inid-gaussian", "dpjax.inid.gaussian_design"),
                  ("inid-laplace", "dpjax.inid.laplace_design"),
                  ("inid", "dpjax.inid.gaussian_design")],
)
def test_inid_names_say_what_to_call(name, call):
    assert name in ELSEWHERE and name not in names()
    with pytest.raises(ValueError, match=f"not a registry mechanism: .*{call}"):
        dpjax.calibrate(name, epsilon=1.0, delta=1e-6, l2=1.0)


def test_spherical_needs_k_dims_and_a_designed_mechanism_to_profile():
    with pytest.raises(ValueError, match=r"spherical: needs an l2 sensitivity in dim K >= 2"):
        dpjax.calibrate("spherical", epsilon=1.0, delta=1e-6, l2=1.0)
    with pytest.raises(NotImplementedError, match="dpjax.spherical.io.load"):
        dpjax.profile("spherical", {"budget": 1.0, "n": 10, "N": 30, "r": 0.5}, epsilon=1.0,
                      dim=3, l2=1.0)


def test_spherical_calibration_through_the_facade(monkeypatch):
    """The façade reaches :func:`calibrate_spherical` with the query's dimension and its
    (derived) l2 sensitivity, and stacks array targets; a coarse search (one programme
    size: one compile) keeps it fast."""
    import importlib

    sph = importlib.import_module("dpjax.spherical.calibrate")
    full = sph.calibrate_spherical
    calls = []

    def coarse(epsilon, delta, dim, l2, **use):
        calls.append((epsilon, delta, dim, l2, use))
        return full(epsilon, delta, dim, l2, n=4, tol=1.0, **use)

    monkeypatch.setattr(sph, "calibrate_spherical", coarse)
    cal = dpjax.calibrate("spherical", epsilon=[[2.0], [2.0]], delta=1e-5, dim=3, linf=0.5)
    l2 = np.sqrt(3) * 0.5  # derived: l2 <= sqrt(dim) * linf
    one_release = {"compositions": 1, "sampling_rate": None, "relation": "add_remove"}
    assert calls == [(2.0, 1e-5, 3, l2, one_release)] * 2
    assert set(cal.params) == {"budget", "n", "N", "r"}
    assert cal.params["budget"].shape == cal.mse.shape == cal.delta_at_params.shape == (2, 1)
    assert np.all(cal.delta_at_params <= 1e-5) and cal.dim == 3 and cal.sensitivity == {"l2": l2}
    assert any("sqrt(dim) * linf" in n for n in cal.notes)
    one = coarse(2.0, 1e-5, 3, l2)
    assert np.all(cal.params["budget"] == float(one.params["budget"]))
    assert np.all(cal.delta_at_params == float(one.delta_at_params))
    assert np.all(cal.mse == float(one.params["budget"]))  # mse = E|Z|^2 = budget
    # the use reaches the calibration: certified there (T = 2 uses of the budget's mechanism)
    calls.clear()
    two = dpjax.calibrate("spherical", epsilon=2.0, delta=1e-5, dim=3, l2=1.0, compositions=2)
    assert calls == [(2.0, 1e-5, 3, 1.0, {"compositions": 2, "sampling_rate": None,
                                                 "relation": "add_remove"})]
    assert float(two.delta_at_params) <= 1e-5 and float(two.mse) > float(one.mse) / l2**2
    assert any("(T=2)" in n for n in two.notes)


def _stub(params: dict) -> Mechanism:
    def calibrate(epsilon, delta, query):
        return Calibration("gaussian", params, 1.0, 1.0, epsilon, delta, delta)

    return Mechanism(
        name="gaussian", summary="stub", calibrate=calibrate, profile=None,
        epsilon_for_delta=None, noise=dpjax.noise.Gaussian,
    )


def test_calibrated_parameters_must_be_valid_parameters():
    query = Query(Sensitivity(l2=1.0))
    eps, delta = np.asarray(1.0), np.asarray(1e-6)
    ok = _stub({"sigma": np.asarray(2.0)}).calibrate_certified(eps, delta, query)
    assert float(ok.params["sigma"]) == 2.0
    for bad in (0.0, 1e-310, np.inf, np.nan):  # zero or subnormal (an underflow), inf, nan
        with pytest.raises(CertificationError, match="outside what dpjax can represent"):
            _stub({"sigma": np.asarray(bad)}).calibrate_certified(eps, delta, query)


def test_a_mechanism_names_its_own_noise():
    with pytest.raises(ValueError, match="mechanism 'laplace' names noise 'gaussian'"):
        Mechanism(name="laplace", summary="", calibrate=None, profile=None,
                  epsilon_for_delta=None, noise=dpjax.noise.Gaussian)
    with pytest.raises(ValueError, match="declares no parameters"):
        Mechanism(name="x", summary="", calibrate=None, profile=None, epsilon_for_delta=None)
