"""solvers.bench.families: named, seeded, deterministic instances."""

import jax
import numpy as np
import pytest

from solvers.bench import Family, families, get_family, register_family


def _leaves(problem):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(problem)]


@pytest.mark.parametrize("name", ["allocation-lognormal", "allocation-tiny",
                                  "allocation-exponential"])
def test_same_seed_same_instance(name):
    family = get_family(name)
    a, b = family.make(family.sizes[0], 7), family.make(family.sizes[0], 7)
    assert a.name == b.name and a.params == b.params
    for u, v in zip(_leaves(a.problem), _leaves(b.problem), strict=True):
        np.testing.assert_array_equal(u, v)
    assert "seed=7" in a.name and f"K={family.sizes[0]}" in a.name


def test_other_seed_other_instance():
    family = get_family("allocation-loguniform")
    a, b = family.make("10", 0), family.make("10", 1)
    assert a.name != b.name
    assert not np.array_equal(np.asarray(a.problem.coefficients),
                              np.asarray(b.problem.coefficients))


def test_hard_corners_are_at_the_edge():
    expo = get_family("allocation-exponential").make("700", 0).problem
    assert float(np.min(np.asarray(expo.coefficients))) < 1e-300  # normal, near float64's edge
    tiny = np.asarray(get_family("allocation-tiny").make("100", 3).problem.coefficients)
    assert np.sum(tiny == 1e-300) == 90


def test_spherical_kl_family_is_deterministic():
    import dpjax.spherical.benchmark_family as bf

    family = get_family("spherical-kl")
    a, b = family.make("6,18", 0), family.make("6,18", 0)
    assert a.params["budget"] == bf.BUDGET and a.params["m"] == bf.DIMENSION
    for u, v in zip(_leaves(a.problem), _leaves(b.problem), strict=True):
        np.testing.assert_array_equal(u, v)
    c = family.make("6,18", 3)
    assert c.params["budget"] != bf.BUDGET and 0.8 * bf.BUDGET <= c.params["budget"] <= 1.2 * 2.5
    with pytest.raises(ValueError, match="n,N"):
        family.make("6", 0)


def test_registry_and_errors():
    assert "allocation-uniform" in families()
    with pytest.raises(ValueError, match="unknown family"):
        get_family("no-such-family")
    with pytest.raises(ValueError, match="seed"):
        get_family("allocation-uniform").make("10", -1)
    fam = register_family(Family("test-only", lambda size, seed: ({"k": int(size)}, None), ("1",)))
    assert fam.make("1", 2).name == "test-only[k=1;seed=2]"
