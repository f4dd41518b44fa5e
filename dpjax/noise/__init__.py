"""One module per 1-D noise family; :func:`make` builds one by its dpjax name.

Sampling policy (beside the float64 policy of :mod:`dpjax`): noise may be
sampled in the caller's dtype (float32, bfloat16, float16, float64) without
x64.  Every sampler inverts the tail from a uniform whose logarithm is
resolved from several 32-bit words (:mod:`dpjax.noise._tail`), so the sampled
law reproduces every tail probability ``P(|T| > x) >= tail_floor(dtype)``
(``2^-128 ~ 2.9e-39`` for float32/bfloat16/float16 output, ``2^-256 ~ 8.6e-78``
for float64); a float32 uniform stops at ``2^-24`` (5.4 sigma for a Gaussian),
below the deltas dpjax accounts for.  Values beyond the output dtype's range
(e.g. ``|x| > 65504`` in float16) become ``+-inf``.
"""

from __future__ import annotations

from dpjax.noise._base import NoiseFamily
from dpjax.noise._tail import TailWords, deep_capacity, random_words, tail_floor
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
    "TailWords",
    "TruncatedLaplace",
    "deep_capacity",
    "make",
    "random_words",
    "tail_floor",
]


def make(mechanism: str, **params) -> NoiseFamily:
    """Noise of a named mechanism, e.g. ``make("gaussian", sigma=2.0)``.

    Parameters are validated (names and values) by the mechanism's spec in
    :mod:`dpjax.mechanisms`.
    """
    from dpjax.mechanisms import get

    return get(mechanism).make_noise(params)
