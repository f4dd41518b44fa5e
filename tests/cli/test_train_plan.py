"""``dpjax train-plan``: the certified DP-SGD plan of a schedule, JSON and errors."""

import json

from dpjax.cli._main import main


def test_train_plan_json(capsys):
    code = main(["train-plan", "--dataset-size", "100", "--sampling-rate", "1", "--steps", "3",
                 "--epsilon", "2", "--delta", "1e-5", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == 3 and out["epsilon_spent"] <= 2.0
    assert out["noise_multiplier"] > 0 and out["noise"] == "gaussian"


def test_train_plan_bad_input_exits_2(capsys):
    code = main(["train-plan", "--dataset-size", "100", "--sampling-rate", "1.5", "--steps",
                 "3", "--epsilon", "2", "--delta", "1e-5"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("dpjax: error:") and "sampling_rate" in err


def test_train_plan_laplace_json(capsys):
    import dpjax

    # the schedule of tests/train/test_laplace.py (n = 200, q = 0.1, T = 12, epsilon 2,
    # delta 1e-5): its subsampled-Laplace calibration and accountant programs (and
    # dpjax.account's below) are compiled there and by tests/reproduce/test_training.py
    code = main(["train-plan", "--dataset-size", "200", "--sampling-rate", "0.1", "--steps",
                 "12", "--epsilon", "2", "--delta", "1e-5", "--noise", "laplace",
                 "--clip-norm", "0.5", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["noise"] == "laplace" and out["clip_norm"] == "l1"
    b_eff = out["noise_multiplier"]
    assert abs(out["groups"]["all"]["laplace_scale"] / (0.5 * b_eff) - 1.0) < 1e-14
    ref = dpjax.account("laplace", {"scale": b_eff}, compositions=12, sampling_rate=0.1,
                        delta=out["noise_delta"], l1=1.0)
    assert out["epsilon_spent"] == float(ref) <= 2.0
