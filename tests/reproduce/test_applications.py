"""The applications reproduction: registered, orderings read from the numbers."""

from dpjax.reproduce import PAPERS
from dpjax.reproduce.applications import _orderings


def test_registered():
    assert PAPERS["applications"].module == "dpjax.reproduce.applications"


def test_orderings_follow_the_numbers():
    cell = {"nmse_mean": 1.0, "flipped_huber_shape": 2.0}
    dpcd = {"d": {"gaussian": {"nmse_mean": 0.5}, "flipped_huber": cell}}
    pca = {"s": {"gaussian_iid": {"mean": 0.3}, "gaussian_inid": {"mean": 0.2},
                 "laplace_iid": {"mean": 0.3}, "laplace_inid": {"mean": 0.4}}}
    lines = _orderings(dpcd, pca)
    assert "FH > Gaussian" in lines[0]
    assert "i.n.i.d. < i.i.d. holds" in lines[1] and "does not hold" in lines[2]
