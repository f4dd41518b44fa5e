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
