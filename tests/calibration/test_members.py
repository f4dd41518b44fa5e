"""Naming the member of a shape family a search returned."""

import numpy as np

from dpjax.calibration.members import name_member


def test_name_member_ends_and_interior():
    names = name_member([0.0, 1e-3, 1.0, 9e8, 1e9], 0.0, 1e9, "gaussian", "laplace")
    assert names.tolist() == ["gaussian", "interior", "interior", "laplace", "laplace"]
    names = name_member(np.array([[1e-4, 5.0], [1e4, 2e3]]), 1e-4, 1e4, "g", "l")
    assert names.tolist() == [["g", "interior"], ["l", "interior"]]


def test_name_by_variance_and_closed_form_limits():
    from dpjax.calibration.members import (
        laplace_limit_variance,
        name_by_variance,
        uniform_limit_variance,
    )

    # an end wins within rtol above its variance, not when the interior beats it by more
    names = name_by_variance([1.0, 1.0 + 1e-6, 1.0 - 1e-6, 2.0], {"laplace": 1.0})
    assert names.tolist() == ["laplace", "laplace", "interior", "interior"]
    assert name_by_variance(2.0, {"a": 2.0, "b": 2.0 * (1 + 1e-7)}).tolist() == "a"
    # Laplace: delta(eps) = 1 - exp((eps - 1/b) / 2) at the returned b (exact profile)
    eps, delta = 0.5, 1e-3
    b = np.sqrt(laplace_limit_variance(eps, delta, 1.0) / 2.0)
    assert abs(-np.expm1((eps - 1.0 / b) / 2.0) / delta - 1.0) < 1e-12
    # uniform on [-A, A]: delta = 1 / (2A) at every eps, variance A^2 / 3
    a = np.sqrt(3.0 * uniform_limit_variance(0.1, 1.0))
    assert abs(1.0 / (2.0 * a) - 0.1) < 1e-15
