"""Optimal spherical mechanisms (spherical-kl-optimal-mechanisms).

No name here shadows a submodule (``dpjax.spherical.coefficients`` stays the module).

* :func:`design_geometric` -- the KL-optimal monotone spherical mechanism at any ``m``,
  shells, band and window chosen from the geometry (banded barrier Newton, on the host or as
  one jitted JAX program: ``solver="jax"``),
  reported beside the continuous and grid Gaussian of the same cost.
* :func:`design_windowed`, :func:`design_mechanism` -- the (n, N, r) programme of Theorem 4
  with explicit shells, solved by the JAX solver or cvxpy.
* :func:`calibrate_spherical` -- the least budget meeting an (epsilon, delta) target.
* :class:`SphericalMechanism` -- density, exact sampler, PLD accounting under composition
  and Poisson subsampling; :func:`save` / :func:`load`.
"""

from dpjax.spherical.calibrate import calibrate_spherical
from dpjax.spherical.coefficients import Coefficients
from dpjax.spherical.design import design_mechanism, epsilon_criterion, kl_criterion, search_r
from dpjax.spherical.geometric import design_geometric
from dpjax.spherical.io import load, save
from dpjax.spherical.mechanism import SphericalMechanism
from dpjax.spherical.windowed import design_windowed

__all__ = [
    "Coefficients",
    "SphericalMechanism",
    "calibrate_spherical",
    "design_geometric",
    "design_mechanism",
    "design_windowed",
    "epsilon_criterion",
    "kl_criterion",
    "load",
    "save",
    "search_r",
]
