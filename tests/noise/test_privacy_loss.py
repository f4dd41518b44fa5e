"""The noise families plug into the PLD engine through a small protocol (issue 11 item 5).

A family provides its monotone ``privacy_loss`` and ``log_sf``; optionally a closed-form
``privacy_loss_inverse`` and ``tail_point``; :mod:`dpjax.noise.privacy_loss` falls back
on bisection.  Checked here: the fallback agrees with every closed form, a family
written in this file (logistic noise, unknown to dpjax) gets a certified PLD against
direct numerical integration, and ``noise`` imports nothing above it.
"""

import ast
import math
import pathlib
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, optimize

import dpjax
from dpjax.accounting import pld
from dpjax.accounting.pld import engine
from dpjax.noise import OSGT, FlippedHuber, Gaussian, Laplace
from dpjax.noise.privacy_loss import privacy_loss_inverse, tail_point


@jax.tree_util.register_pytree_node_class
class _Hidden:
    """A family with its closed forms hidden: only ``privacy_loss``, ``log_sf``, ``variance``
    (a pytree, so it passes through the engine's jitted discretisation like a family)."""

    def __init__(self, noise):
        self._noise = noise

    def privacy_loss(self, t, d):
        return self._noise.privacy_loss(t, d)

    def log_sf(self, x):
        return self._noise.log_sf(x)

    @property
    def variance(self):
        return self._noise.variance

    def tree_flatten(self):
        return (self._noise,), None

    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)


@pytest.mark.parametrize(
    "noise",
    [Gaussian(1.7), Laplace(0.8), FlippedHuber(1.5, 2.0), FlippedHuber(0.2, 0.5),
     OSGT(0.0, 1.3), OSGT(2.5, 0.7), OSGT(300.0, 0.03)],
)
def test_bisection_fallback_agrees_with_the_closed_form_inverse(noise):
    d = jnp.asarray(1.0)
    t_hi = tail_point(_Hidden(noise), 1e-40)
    t_lo = -t_hi - d
    lo, hi = float(noise.privacy_loss(t_lo, d)), float(noise.privacy_loss(t_hi, d))
    # levels strictly inside the loss range, off the plateaus of flipped Huber / Laplace
    eps = jnp.asarray(np.linspace(lo, hi, 37)[1:-1] + 1e-3)
    closed = np.asarray(noise.privacy_loss_inverse(eps, d))
    bisected = np.asarray(privacy_loss_inverse(_Hidden(noise), eps, d, t_lo, t_hi))
    np.testing.assert_allclose(bisected, closed, rtol=1e-12, atol=1e-12 * float(t_hi))
    # the inverse is right-continuous: the loss is <= eps at t(eps), > eps just above
    assert np.all(np.asarray(noise.privacy_loss(bisected, d)) <= np.asarray(eps) + 1e-12)


def test_bisection_fallback_agrees_with_the_closed_form_tail_point():
    # OSGT with vartheta = 0 is the Gaussian N(0, rho^2), without the Gaussian's closed forms
    for sigma in (0.05, 1.0, 30.0):
        for tail in (1e-40, 1e-12):
            closed = float(Gaussian(sigma).tail_point(tail))
            bisected = float(tail_point(OSGT(0.0, sigma), tail))
            assert float(Gaussian(sigma).log_sf(closed)) == pytest.approx(math.log(tail), rel=1e-12)
            assert float(OSGT(0.0, sigma).log_sf(bisected)) <= math.log(tail)
            assert bisected == pytest.approx(closed, rel=1e-12)


def test_gaussian_pld_through_the_fallback_matches_the_closed_forms():
    closed = pld.from_noise(Gaussian(1.3), 1.0, 1e-3)
    fallback = pld.from_noise(_Hidden(OSGT(0.0, 1.3)), 1.0, 1e-3)
    eps = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
    np.testing.assert_allclose(
        np.asarray(pld.delta_for_epsilon(fallback, eps)),
        np.asarray(pld.delta_for_epsilon(closed, eps)),
        rtol=1e-9,
    )


class Logistic(NamedTuple):
    """Logistic noise, written here: density ``e^{-t/s} / (s (1 + e^{-t/s})^2)``."""

    scale: float

    name = "logistic"
    constraints = {"scale": "> 0"}

    @classmethod
    def from_scale(cls, scale, shape):
        del shape
        return cls(scale)

    @property
    def variance(self):
        return (jnp.pi * jnp.asarray(self.scale)) ** 2 / 3.0

    def logpdf(self, x):
        z = jnp.asarray(x) / self.scale
        return -z - 2.0 * jnp.logaddexp(0.0, -z) - jnp.log(self.scale)

    def log_sf(self, x):
        return -jnp.logaddexp(0.0, jnp.asarray(x) / self.scale)

    def privacy_loss(self, t, sensitivity):
        return self.logpdf(t) - self.logpdf(jnp.asarray(t) + sensitivity)


def _logistic_delta(eps: float, s: float, d: float) -> float:
    """``int max(0, g(t) - e^eps g(t + d)) dt`` by quadrature (an independent reference)."""

    def g(t):
        return math.exp(-abs(t) / s) / (s * (1.0 + math.exp(-abs(t) / s)) ** 2)

    def loss(t):
        return math.log(g(t)) - math.log(g(t + d))

    t_star = optimize.brentq(lambda t: loss(t) - eps, -60.0 * s, 60.0 * s, xtol=1e-14)
    val, _ = integrate.quad(
        lambda t: g(t) - math.exp(eps) * g(t + d), t_star, t_star + 80.0 * s,
        epsabs=1e-15, epsrel=1e-12, limit=200,
    )
    return val


def test_a_new_family_plugs_into_the_engine_untouched():
    s, d = 1.0, 1.0
    eps = np.array([0.05, 0.3, 0.6, 0.9])  # the loss lies in (-d/s, d/s)
    exact = np.array([_logistic_delta(e, s, d) for e in eps])
    got = np.asarray(pld.delta_for_epsilon(pld.from_noise(Logistic(s), d, 1e-4), eps))
    assert np.all(got >= exact * (1 - 1e-9))  # pessimistic
    np.testing.assert_allclose(got, exact, rtol=1e-6)
    # and the engine (one use) through the family's own noise_fn
    via_engine = np.asarray(engine.profile(Logistic.from_scale, s, 0.0, d, eps, 1, None, 1e-4))
    assert np.all(via_engine >= exact * (1 - 1e-9))
    np.testing.assert_allclose(via_engine, exact, rtol=1e-6)


def test_make_resolves_names_and_validates_parameters():
    assert dpjax.noise.names() == (
        "gaussian", "laplace", "flipped-huber", "osgt", "truncated-laplace", "staircase"
    )
    for name in dpjax.noise.names():
        assert dpjax.noise.family(name).name == name
    assert dpjax.noise.make("osgt", vartheta=0.0, rho=2.0) == OSGT(0.0, 2.0)
    with pytest.raises(ValueError, match="unknown noise family 'spherical'; known: gaussian"):
        dpjax.noise.make("spherical", budget=1.0)
    with pytest.raises(ValueError, match=r"staircase takes parameters decay \(> 0\)"):
        dpjax.noise.make("staircase", decay=1.0, width=1.0)
    with pytest.raises(ValueError, match=r"gamma must lie in \[0, 1\], got 1.5"):
        dpjax.noise.make("staircase", decay=1.0, width=1.0, gamma=1.5)


def _imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_noise_imports_nothing_above_it():
    root = pathlib.Path(dpjax.noise.__file__).parent
    above = ("dpjax.accounting", "dpjax.calibration", "dpjax.mechanisms", "dpjax.comparison",
             "dpjax.api", "dpjax.cli")
    for path in root.rglob("*.py"):
        bad = {m for m in _imports(path) if m.startswith(above)}
        assert not bad, f"{path.relative_to(root.parent)} imports {sorted(bad)}"
