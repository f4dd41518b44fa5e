"""Exact K-dim flipped Huber calibration at K = 10^4 through the user path (``dpjax calibrate
flipped-huber --dim 10000 --condition exact``), against independent ends: the Gaussian
calibration with Delta_2 = sqrt(K) (closed form), Theorem 8's sufficient calibration, the
certified delta re-derived by the exact accounting, and the optimistic PLD's certified lower
end of epsilon (near-tightness)."""

import json

import numpy as np
import pytest

import dpjax
from dpjax.accounting.flipped_huber_kdim import delta_flipped_huber_exact
from dpjax.accounting.pld.lower import epsilon_lower
from dpjax.calibration.gaussian import sigma_gaussian
from dpjax.cli import main
from dpjax.noise.flipped_huber import FlippedHuber

K, EPS, DELTA = 10_000, 1.0, 1e-6


@pytest.fixture(scope="module")
def cli_1e4():
    """One exact calibration at K = 10^4 through the CLI (JSON), shared by the tests."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["calibrate", "flipped-huber", "--dim", str(K), "--linf", "1",
                     "--epsilon", str(EPS), "--delta", str(DELTA), "--condition", "exact",
                     "--json"])
    assert code == 0
    return json.loads(buf.getvalue())


def _params(data):
    return float(data["params"]["alpha"]), float(data["params"]["gamma"])


def test_below_the_gaussian_and_theorem_8(cli_1e4):
    var = float(cli_1e4["variance"])
    sg = float(np.asarray(sigma_gaussian(EPS, DELTA, np.sqrt(K))).reshape(-1)[0])
    suff = dpjax.calibrate("flipped-huber", epsilon=EPS, delta=DELTA, dim=K, linf=1.0,
                           condition="sufficient")
    # the Gaussian (b = 0) is a member: the exact optimum can be above its closed form only
    # by the engine's pessimistic discretisation (here ~4e-4 relative at K = 10^4)
    assert var <= sg**2 * (1 + 1e-3)
    assert var <= float(suff.variance)
    # the K-fold Laplace end (b = 1e4) costs ~2x the Gaussian at this K: never the winner
    assert var < 1.5 * sg**2


def test_certified_delta_rederived_by_the_exact_accounting(cli_1e4):
    alpha, gamma = _params(cli_1e4)
    d = float(np.asarray(delta_flipped_huber_exact(np.array([EPS]), alpha, gamma, K, 1.0))[0])
    assert d <= DELTA
    assert cli_1e4["delta_at_params"] <= DELTA


def test_near_tight_by_the_optimistic_lower_end(cli_1e4):
    alpha, gamma = _params(cli_1e4)
    b = alpha / gamma
    # 0.2% below the returned gamma (same shape) the certified LOWER end of epsilon(delta)
    # already exceeds the target: no smaller scale of this shape is private
    low = epsilon_lower(FlippedHuber.from_scale, gamma * (1 - 2e-3), b, 1.0, DELTA,
                        compositions=K)
    assert float(low) > EPS


def test_member_at_k_1e4_is_the_gaussian_end(cli_1e4):
    # for large K the flipped Huber optimum tends to the Gaussian end (b = 0)
    assert cli_1e4["member"] == "gaussian"
    alpha, gamma = _params(cli_1e4)
    assert alpha / gamma <= 0.05


def test_cli_table_at_small_k_prints_the_member(capsys):
    code = main(["calibrate", "flipped-huber", "--dim", "3", "--linf", "1", "--epsilon", "1",
                 "--delta", "1e-6", "--condition", "exact"])
    out = capsys.readouterr().out
    assert code == 0 and "member" in out and "exact" in out
    cal = dpjax.calibrate("flipped-huber", epsilon=1.0, delta=1e-6, dim=3, linf=1.0,
                          condition="exact")
    assert str(np.asarray(cal.member)) in out
