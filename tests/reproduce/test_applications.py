"""The applications reproduction: registered, orderings read from the numbers."""

from dpjax.reproduce import PAPERS
from dpjax.reproduce.applications import _orderings


def test_registered():
    assert PAPERS["applications"].module == "dpjax.reproduce.applications"


def _cell(nmse, std=0.01, rel=(0.2, 0.1)):
    return {"nmse_mean": nmse, "nmse_std": std,
            "curve": {"passes": [5, 50], "rel_obj_mean": list(rel)}}


def test_orderings_follow_the_numbers():
    dpcd = {"d": {"gaussian": _cell(0.5), "flipped_huber": {**_cell(1.0),
                                                             "flipped_huber_shape": 2.0},
                  "dpcd_private": _cell(0.30), "improved_private": _cell(0.20)},
            "e": {"gaussian": _cell(0.5), "flipped_huber": {**_cell(0.5),
                                                             "flipped_huber_shape": 0.0},
                  "dpcd_private": _cell(0.30, 0.2), "improved_private": _cell(0.35, 0.2)}}
    pca = {"s": {"gaussian_iid": {"mean": 0.3, "std": 0.01},
                 "gaussian_inid": {"mean": 0.2, "std": 0.01},
                 "laplace_iid": {"mean": 0.3, "std": 0.01},
                 "laplace_inid": {"mean": 0.4, "std": 0.01}}}
    lines = _orderings(dpcd, pca)
    assert "FH <= Gaussian fails" in lines[0]
    assert "improved < DP-CD holds (beyond the seed spread)" in lines[1]
    assert "FH <= Gaussian holds only as an equality" in lines[2]
    assert "does not hold on the mean (within spread)" in lines[3]
    assert "i.n.i.d. < i.i.d. holds (beyond" in lines[4]
    assert lines[5].endswith("i.n.i.d. < i.i.d. does not hold.")
