"""Naming the member of a shape family a search returned."""

import numpy as np

from dpjax.calibration.members import name_member


def test_name_member_ends_and_interior():
    names = name_member([0.0, 1e-3, 1.0, 9e8, 1e9], 0.0, 1e9, "gaussian", "laplace")
    assert names.tolist() == ["gaussian", "interior", "interior", "laplace", "laplace"]
    names = name_member(np.array([[1e-4, 5.0], [1e4, 2e3]]), 1e-4, 1e4, "g", "l")
    assert names.tolist() == [["g", "interior"], ["l", "interior"]]
