"""``dpjax inid`` and ``dpjax design --profile``."""

import json
import math

import numpy as np
import pytest

from dpjax.cli._main import main


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_inid_json_keys_and_values(capsys, tmp_path):
    out = _json(capsys, ["inid", "--mechanism", "laplace", "--epsilon", "0.5",
                         "--profile", "0.85,0.15", "--error-power", "1", "--json"])
    for key in ("scales", "error", "error_iid", "error_spr", "reduction_db", "delta_at_params"):
        assert key in out
    assert round(out["error"], 4) == 3.4283 and out["error_iid"] == pytest.approx(4.0)
    f = tmp_path / "lam.txt"
    f.write_text("0.85\n0.15\n")
    again = _json(capsys, ["inid", "--mechanism", "laplace", "--epsilon", "0.5",
                           "--profile-file", str(f), "--error-power", "1", "--json"])
    assert again["scales"] == out["scales"]
    g = _json(capsys, ["inid", "--mechanism", "gaussian", "--epsilon", "0.5", "--delta", "1e-6",
                       "--profile-kind", "linear", "--dim", "20", "--json"])
    assert round(g["reduction_db"], 3) == 1.145 and len(g["scales"]) == 20
    assert np.linalg.norm(g["profile"]) == pytest.approx(1.0)
    w = _json(capsys, ["inid", "--mechanism", "gaussian", "--epsilon", "0.5", "--delta", "1e-6",
                       "--profile", "1,2", "--weights", "1,4", "--json"])
    assert w["weights"] == [1.0, 4.0] and w["delta_at_params"] <= 1e-6


def test_inid_table_output(capsys):
    assert main(["inid", "--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5",
                 "--profile", "1,2,3"]) == 0
    text = capsys.readouterr().out
    assert "sigma_i" in text and "certified delta" in text and "SPR" in text


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["--profile", "1,-2"], ">= 0"),
        (["--profile", "0,0"], "entry > 0"),
        (["--profile", "1,nan"], "finite"),
        (["--profile", "1,2", "--weights", "1"], "entries but the profile has"),
        (["--profile-kind", "linear"], "--dim"),
        (["--profile-kind", "power", "--dim", "5"], "--exponent goes with"),
        (["--profile-kind", "linear", "--dim", "5", "--exponent", "2"], "--exponent goes with"),
        (["--profile", "1,2", "--exponent", "2"], "--exponent goes with"),
        (["--profile-kind", "power", "--dim", "5", "--exponent", "nan"], "finite real number"),
    ],
)
def test_inid_bad_input_exits_2(capsys, argv, msg):
    base = ["inid", "--mechanism", "laplace", "--epsilon", "0.5"]
    assert main(base + argv) == 2
    assert msg in capsys.readouterr().err


def test_inid_exponential_profile_beyond_underflow(capsys):
    """K = 800: e^{i-K} underflowed; the command printed a divide-by-zero warning and exited
    3 ("certification failed").  Now every coordinate is noised and the loss is certified."""
    out = _json(capsys, ["inid", "--mechanism", "laplace", "--epsilon", "1", "--profile-kind",
                         "exponential", "--dim", "800", "--json"])
    lam, b = np.array(out["profile"]), np.array(out["scales"])
    assert lam.size == 800 and np.all(lam > 0) and np.all(b > 0)
    assert math.fsum(lam / b) <= 1.0  # Theorem 5 (pure DP), evaluated here independently
    assert "least normal float64" in " ".join(out["notes"])


def test_inid_scales_beyond_float64_exit_2(capsys):
    assert main(["inid", "--mechanism", "laplace", "--epsilon", "1", "--profile",
                 "1e308,1e308,1e308"]) == 2
    err = capsys.readouterr().err
    assert "leave the float64 range" in err and len(err.strip().splitlines()) == 1


def test_inid_table_when_errors_underflow(capsys):
    """--epsilon 1e300: the table's dB column divided 0 by 0 (a ZeroDivisionError traceback)."""
    assert main(["inid", "--mechanism", "laplace", "--epsilon", "1e300", "--profile", "1,2"]) == 0
    out, err = capsys.readouterr()
    assert "i.i.d." in out and err == ""


def test_inid_gaussian_needs_delta(capsys):
    assert main(["inid", "--mechanism", "gaussian", "--epsilon", "0.5", "--profile", "1"]) == 2
    assert "--delta" in capsys.readouterr().err


def test_design_with_profile_shows_inid_options(capsys, monkeypatch):
    """The i.i.d. mechanisms get Delta_p = ||lambda||_p; the i.n.i.d. designs are added.

    ``compare`` (every registered mechanism, tested elsewhere and slow at dim 20) is
    replaced by a stub that records the query it receives.
    """
    import dpjax.comparison as design_lib

    seen = {}

    def stub(epsilon, delta, **query):
        seen.update(query)
        return [], []

    monkeypatch.setattr(design_lib, "compare", stub)
    out = _json(capsys, ["design", "--epsilon", "0.5", "--delta", "1e-6",
                         "--profile-kind", "exponential", "--dim", "20", "--json"])
    assert seen["dim"] == 20 and seen["l2"] == pytest.approx(1.0)
    assert seen["l1"] == pytest.approx(np.sum(out["profile"]))
    mechs = {(d["mechanism"], d["delta"]) for d in out["inid"]}
    assert mechs == {("gaussian", 1e-6), ("laplace", 0.0), ("laplace", 1e-6)}
    inid_gauss = next(d for d in out["inid"] if d["mechanism"] == "gaussian")
    # i.n.i.d. Gaussian beats the i.i.d. Gaussian by the Fig. 1a reduction (9.658 dB)
    assert round(10 * np.log10(inid_gauss["error_iid"] / inid_gauss["mse"]), 3) == 9.658
    assert main(["design", "--epsilon", "0.5", "--delta", "1e-6", "--profile", "3,4"]) == 0
    assert "gaussian (i.n.i.d.)" in capsys.readouterr().out


def test_inid_power_profile_of_many_coordinates(capsys):
    """``--profile-kind power --exponent a``: ``lambda_i = i^a``, here a decaying power law at
    ``K = 10^5`` (``i^-1.5``: the first entry is ~3e7 times the last), normalised to unit l1
    for Laplace; the pure-DP condition (Theorem 5) is met, checked here independently."""
    k = 100_000
    out = _json(capsys, ["inid", "--mechanism", "laplace", "--epsilon", "1", "--profile-kind",
                         "power", "--exponent", "-1.5", "--dim", str(k), "--json"])
    lam, b = np.array(out["profile"]), np.array(out["scales"])
    assert lam.size == k and np.all(lam > 0) and np.all(b > 0)
    i = np.arange(1.0, k + 1.0)
    np.testing.assert_allclose(lam, i**-1.5 / math.fsum(i**-1.5), rtol=1e-12)
    assert math.fsum(lam / b) <= 1.0
    assert out["error"] < out["error_iid"]
