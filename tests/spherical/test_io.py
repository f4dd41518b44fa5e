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


def test_window_only_cells_round_trip_and_account_as_the_padded_ones(tmp_path):
    # a mechanism storing the cells of rows first.. only (the flat core's rows have none) is
    # saved with `first` and accounts exactly as the same cells padded with -inf rows
    mech = _mechanism()
    first = 5
    window = mech._replace(log_w=mech.log_w[first:], first=first)
    padded = mech._replace(log_w=np.concatenate([np.full((first, 7), -np.inf),
                                                 mech.log_w[first:]]))
    back = io.load(io.save(window, tmp_path / "window.npz"))
    assert back.first == first and back.log_w.shape == (15, 7)
    for a, b in zip(back.atoms(), padded.atoms(), strict=True):
        np.testing.assert_array_equal(a, b)
    # a file written before `first` existed loads with first = 0
    np.savez(tmp_path / "old.npz", **{k: getattr(mech, k) for k in io.FIELDS if k != "first"})
    assert io.load(tmp_path / "old.npz").first == 0
