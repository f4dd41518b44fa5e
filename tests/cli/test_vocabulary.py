"""One output vocabulary (issue 12): the same JSON keys across subcommands, tables without
Python reprs, notes that name their mechanism, `dpjax mechanisms` listing every parameter."""

import json

from dpjax.cli._main import main
from dpjax.mechanisms import describe, names


def _json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


# the account query of both tests below (one compiled accounting path for the file)
ACCOUNT = ["account", "laplace", "--param", "scale=1", "--delta", "1e-5", "--compositions", "3"]


def test_profile_and_account_json_carry_the_query(capsys):
    for argv in (["profile", "laplace", "--param", "scale=1", "--epsilon", "0.5"], ACCOUNT):
        out = _json(capsys, *argv, "--json")
        for key in ("mechanism", "params", "epsilon", "delta", "dim", "l1", "l2", "linf",
                    "compositions", "sampling_rate"):
            assert key in out, (argv[0], key)


def test_tables_have_no_python_reprs_and_notes_name_their_mechanism(capsys):
    assert main(ACCOUNT) == 0
    out = capsys.readouterr().out
    assert "{" not in out and "None" not in out and "np." not in out
    assert main(["calibrate", "laplace", "--epsilon", "1", "--delta", "1e-6", "--dim", "2",
                 "--linf", "1"]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note")]
    assert notes and all(line.startswith("note (laplace): ") for line in notes)
    assert "delta_at_params" in out and "mse" in out


def test_mechanisms_lists_every_parameter_and_paper(capsys):
    rows = _json(capsys, "mechanisms", "--json")
    assert [r["name"] for r in rows] == list(names())
    for r in rows:
        assert r["parameters"] and r["sensitivities"] and r["supports"], r["name"]
        assert r["paper"].endswith(")") and '"' in r["paper"], r["name"]  # a full citation
    assert describe("osgt")[0]["parameters"] == {"vartheta": ">= 0", "rho": "> 0"}
    assert main(["mechanisms", "staircase"]) == 0
    text = capsys.readouterr().out
    assert "decay" in text and "width" in text and "gamma" in text
