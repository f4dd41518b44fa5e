r"""The spherical KL programme as benchmark families of :mod:`solvers.bench`.

Importing this module registers the families (the shell geometry lives in
:mod:`dpjax.spherical`, so :mod:`solvers` cannot build them itself):

* ``spherical-kl``: the monotone programme of Theorem 4 of
  spherical-kl-optimal-mechanisms (eqs. 28-30) at ``m = 10``, cost
  ``|x|^2``, ``r = 0.9``, size label ``"n,N"``; seed 0 is the paper's
  budget ``C = 2.5``, other seeds draw ``C`` log-uniformly in
  ``[0.8 C, 1.2 C]`` (same shapes: a batch of seeds can be stacked and vmapped);
* hard corners: ``spherical-kl-r-near-1`` (``r = 0.99``: a slowly decaying
  tail, many rows), ``spherical-kl-cap`` (the single-step loss cap
  ``L_max = 8``, binding: the uncapped optimum violates it at these sizes),
  ``spherical-kl-large-m`` (``m = 1000``, ``C = m / 4``, the junction-slope
  ``r``: shell masses down to ``e^-80`` relative, tiny masses in the inner
  shells).

Example:
  >>> import dpjax.spherical.benchmark_family  # registers the families
  >>> from solvers.bench import get_family
  >>> get_family("spherical-kl").make("10,30").name
  'spherical-kl[m=10,n=10,N=30,r=0.9,budget=2.5,loss_cap=None;seed=0]'
"""

from __future__ import annotations

import math

import numpy as np

from dpjax.spherical import design as de
from solvers.bench.families import Family, register_family

#: the paper's configuration (Section 6 of spherical-kl-optimal-mechanisms)
DIMENSION, BUDGET, RATIO = 10, 2.5, 0.9
#: sizes (n, N) of the headline table
SIZES = ("50,150", "100,300", "200,600", "400,1200")


def _parse(size: str) -> tuple[int, int]:
    try:
        n, N = (int(v) for v in size.split(","))
    except ValueError as err:
        raise ValueError(f"spherical-kl size must be 'n,N' (e.g. '50,150'), got {size!r}") from err
    if n < 1 or N < 1:
        raise ValueError(f"need n, N >= 1, got {size!r}")
    return n, N


def _budget(seed: int, default: float) -> float:
    """``default`` at seed 0, else ``default`` times a log-uniform factor in ``[0.8, 1.2]``."""
    if seed == 0:
        return default
    factor = np.random.default_rng(seed).uniform(math.log(0.8), math.log(1.2))
    return float(default * math.exp(factor))


def _kl_builder(m: int, r: float, loss_cap: float | None):
    def build(size: str, seed: int):
        n, N = _parse(size)
        budget = _budget(seed, BUDGET)
        coeffs = de.coefficients_for(m, n, N, r)
        prob = de.programme(coeffs, N, r, budget, loss_cap)
        return {"m": m, "n": n, "N": N, "r": r, "budget": budget, "loss_cap": loss_cap}, prob

    return build


def _large_m_build(size: str, seed: int):
    n, N = _parse(size)
    m = 1000
    budget = _budget(seed, 0.25 * m)
    prob, info = de.scale_programme(m, n, N, budget)
    return {"m": m, "n": n, "N": N, "r": info["r"], "budget": budget,
            "first": info["first"]}, prob


# quick_size: the size of `python -m solvers.bench --quick` (minutes on 2 cores, all backends)
register_family(Family("spherical-kl", _kl_builder(DIMENSION, RATIO, None), SIZES,
                       "Theorem 4 programme, m = 10, C = 2.5 (seed 0), r = 0.9",
                       quick_size="20,60"))
register_family(Family("spherical-kl-r-near-1", _kl_builder(DIMENSION, 0.99, None),
                       ("20,60", "50,150", "100,300"), "hard corner: r = 0.99 (long tail)"))
# n <= 75: the tail's own single-step loss n log(1/r) stays below the cap (n = 100 is infeasible)
register_family(Family("spherical-kl-cap", _kl_builder(DIMENSION, RATIO, 8.0),
                       ("20,60", "50,150", "70,210"), "hard corner: active loss cap L_max = 8"))
register_family(Family("spherical-kl-large-m", _large_m_build, ("50,932", "100,1864"),
                       "hard corner: m = 1000, C = m / 4, inner masses down to e^-80",
                       quick_size="20,373"))

__all__ = ["BUDGET", "DIMENSION", "RATIO", "SIZES"]
