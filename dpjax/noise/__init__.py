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

What a family provides (and may provide to plug into the PLD engine) is in
:mod:`dpjax.noise._base`; names and parameter validation in
:mod:`dpjax.noise.registry`; the loss inverse and tail point the engine asks for
in :mod:`dpjax.noise.privacy_loss`.
"""

from __future__ import annotations

from dpjax.noise._base import InvertibleLoss, KnownTail, NoiseFamily, ScaleFamily
from dpjax.noise._tail import TailWords, deep_capacity, random_words, tail_floor
from dpjax.noise.flipped_huber import FlippedHuber
from dpjax.noise.gaussian import Gaussian
from dpjax.noise.laplace import Laplace
from dpjax.noise.osgt import OSGT
from dpjax.noise.registry import family, make, names
from dpjax.noise.staircase import Staircase
from dpjax.noise.truncated_laplace import TruncatedLaplace

__all__ = [
    "FlippedHuber",
    "Gaussian",
    "InvertibleLoss",
    "KnownTail",
    "Laplace",
    "NoiseFamily",
    "OSGT",
    "ScaleFamily",
    "Staircase",
    "TailWords",
    "TruncatedLaplace",
    "deep_capacity",
    "family",
    "make",
    "names",
    "random_words",
    "tail_floor",
]
