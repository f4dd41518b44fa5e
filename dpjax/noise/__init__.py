"""One module per 1-D noise family; :func:`make` builds one by its dpjax name."""

from __future__ import annotations

from dpjax.noise._base import NoiseFamily
from dpjax.noise.flipped_huber import FlippedHuber
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.laplace import Laplace
from dpjax.noise.osgt import OSGT
from dpjax.noise.staircase import Staircase
from dpjax.noise.truncated_laplace import TruncatedLaplace

__all__ = [
    "FlippedHuber",
    "Gaussian",
    "Laplace",
    "NoiseFamily",
    "OSGT",
    "Staircase",
    "TruncatedLaplace",
    "make",
]


def make(mechanism: str, **params) -> NoiseFamily:
    """Noise of a named mechanism, e.g. ``make("gaussian", sigma=2.0)``.

    Parameters are validated (names and values) by the mechanism's spec in
    :mod:`dpjax.mechanisms`.
    """
    from dpjax.mechanisms import get

    return get(mechanism).make_noise(params)
