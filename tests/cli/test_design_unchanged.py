"""``dpjax design --json`` (defaults) gives the numbers it gave before the host paths.

``data/design_default_main.json`` is the output of ``dpjax design --json`` on main at
556fa5c (before the Gaussian and 1-D Laplace calibrations moved to host closed forms).
Every field must be identical, except the Gaussian entry: its sigma now comes from the host
search (SciPy closed form, a different rounding of the same profile), so its numbers may move
by at most 1e-12 relative, and its certificate must still hold.  OSGT's shape search takes
the Lemma 11 steer's mass by the midpoint rule where ``G(t1) - G(t2)`` cancels (583fb83), which
moves its minimiser along a flat valley: ``vartheta`` by 4e-6 relative, the variance by 1e-15;
its variance must not grow by more than 1e-12 relative and its certificate must hold.
Each result has since gained one field, ``objective`` (what the row optimised, issue 35): it
is checked to be :func:`dpjax.comparison.objective` of the row and left out of the
comparison with the reference.  The query has since gained ``relation`` (``dpjax design
--relation``): checked to be the default, ``add_remove``, and left out likewise.
"""

import json
from pathlib import Path

import numpy as np

from dpjax.cli._main import main
from dpjax.comparison import objective

REFERENCE = Path(__file__).parent / "data" / "design_default_main.json"


def _compare(got, ref, path, rtol):
    if isinstance(ref, dict):
        assert set(got) == set(ref), path
        for k in ref:
            _compare(got[k], ref[k], f"{path}/{k}", rtol)
    elif isinstance(ref, list):
        assert len(got) == len(ref), path
        for i, (g, r) in enumerate(zip(got, ref, strict=True)):
            _compare(g, r, f"{path}[{i}]", rtol)
    elif isinstance(ref, float) and rtol:
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=0, err_msg=path)
    else:
        assert got == ref, (path, got, ref)


def test_design_json_unchanged_vs_main(capsys):
    assert main(["design", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = json.loads(REFERENCE.read_text())
    for res in got["results"]:
        assert res.pop("objective") == objective(res["mechanism"])
    assert got["query"].pop("relation") == "add_remove"
    gaussian = [i for i, r in enumerate(ref["results"]) if r["mechanism"] == "gaussian"]
    assert len(gaussian) == 1
    g_got, g_ref = got["results"].pop(gaussian[0]), ref["results"].pop(gaussian[0])
    osgt = [i for i, r in enumerate(ref["results"]) if r["mechanism"] == "osgt"]
    assert len(osgt) == 1
    o_got, o_ref = got["results"].pop(osgt[0]), ref["results"].pop(osgt[0])
    _compare(got, ref, "", rtol=0)
    _compare(g_got, g_ref, "/gaussian", rtol=1e-12)
    assert g_got["delta_at_params"] <= g_got["delta"]
    _compare(o_got, o_ref, "/osgt", rtol=1e-5)
    assert o_got["variance"] <= o_ref["variance"] * (1 + 1e-12)
    assert o_got["delta_at_params"] <= o_got["delta"]
