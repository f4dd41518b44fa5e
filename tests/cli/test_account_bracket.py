"""``dpjax account --bracket``: the certified ``[epsilon_lower, epsilon_upper]`` in the table and
in JSON, checked against the mpmath closed form of the T-fold Gaussian."""

import json

import mpmath
from _references import gaussian_delta

from dpjax.cli import main


def test_account_bracket_json_contains_the_closed_form(capsys):
    code = main(["account", "gaussian", "--param", "sigma=2", "--compositions", "4",
                 "--delta", "1e-40", "--bracket", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    lower, upper = data["bracket"]
    assert upper == data["epsilon"] and lower <= upper
    with mpmath.workdps(80):
        assert gaussian_delta(upper, 2.0, 1.0, 4) <= mpmath.mpf(1e-40)
        assert gaussian_delta(lower, 2.0, 1.0, 4) >= mpmath.mpf(1e-40)


def test_account_bracket_table_and_errors(capsys):
    assert main(["account", "gaussian", "--param", "sigma=2", "--delta", "1e-5",
                 "--bracket"]) == 0
    out = capsys.readouterr().out
    assert "epsilon_lower" in out and "epsilon_upper" in out
    # a bracket is of epsilon: --epsilon with --bracket is refused (exit status 2)
    assert main(["account", "gaussian", "--param", "sigma=2", "--epsilon", "1",
                 "--bracket"]) == 2


def test_account_epsilon_error_needs_bracket(capsys):
    """``--epsilon-error`` sets the bracket's width: without ``--bracket`` (or with
    ``--events``) it is refused with exit status 2 and a one-line message."""
    assert main(["account", "gaussian", "--param", "sigma=2", "--delta", "1e-5",
                 "--epsilon-error", "0.01"]) == 2
    assert "--bracket" in capsys.readouterr().err
