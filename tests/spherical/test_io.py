"""Saving and loading a designed spherical mechanism (:mod:`dpjax.spherical.io`)."""

import numpy as np
import pytest

from dpjax.spherical import io
from dpjax.spherical.mechanism import SphericalMechanism


def _mechanism() -> SphericalMechanism:
    rng = np.random.default_rng(3)
    log_p = -np.cumsum(rng.uniform(0.1, 0.5, 13))  # monotone
    return SphericalMechanism(4, 3, 12, 0.625, log_p, rng.normal(size=(20, 7)),
                              rng.normal(size=20), 2.5, 0.123456789)


def test_round_trip_is_exact(tmp_path):
    mech = _mechanism()
    path = io.save(mech, tmp_path / "mech.npz")
    back = io.load(path)
    assert isinstance(back, SphericalMechanism) and back._fields == mech._fields
    for name in ("m", "n", "N", "r", "budget", "kl"):
        assert getattr(back, name) == getattr(mech, name)
        assert type(getattr(back, name)) is type(getattr(mech, name))
    for name in ("log_p", "log_w", "log_v"):
        np.testing.assert_array_equal(getattr(back, name), getattr(mech, name))
    # the law is the same: shell masses and the cells of the PLD
    np.testing.assert_array_equal(back.shell_log_masses(30), mech.shell_log_masses(30))


def test_suffix_is_added_as_numpy_does(tmp_path):
    path = io.save(_mechanism(), tmp_path / "mech")
    assert path == tmp_path / "mech.npz" and path.is_file()
    assert io.load(path).N == 12


def test_missing_file_or_arrays_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        io.load(tmp_path / "nothing.npz")
    np.savez(tmp_path / "other.npz", m=3, n=2)
    with pytest.raises(ValueError, match="lacks N, r, log_p"):
        io.load(tmp_path / "other.npz")
