"""Bench: KL of the geometric spherical design against the shell width (refinement study).

For each dimension m (budget C: the paper's 2.5 at m = 10, C = m beyond, i.e. per-coordinate
variance 1), the design of :func:`dpjax.spherical.geometric.design_geometric` is solved at
``n = n_geo * f`` shells per unit radius for the factors ``f`` of ``--factors``
(``n_geo``: the geometric rule, relative excess ``m h^2 / 6 <= 5e-4``), with the band, window
and tail rescaled by the same rule.  Printed per row: ``n``, the band ``b``, the window rows,
the KL, the grid Gaussian's KL, the continuous Gaussian's ``m / (2C)``, the relative excess
of the design over the latter, the predicted grid price ``m h^2 / 6``, and the Richardson
estimate (``h^2``) from this row and the previous one.  The design converges like ``h^2``
and the extrapolated continuum optimum is at or below the Gaussian.

Measured 2026-11-28 (2 CPU cores shared with other jobs, load 8-14, jax 0.10.2, float64;
CPU s of the solve, cells included)::

  m| C| n| b| rows| KL| grid Gauss KL| excess| m h^2/6| Richardson
  10| 2.5| 14| 14| 105| 1.966712807155| 2.020369266318| -1.66e-02| 8.50e-03|
  10| 2.5| 29| 29| 217| 1.952391242632| 2.004754131082| -2.38e-02| 1.98e-03| 1.948039263
  10| 2.5| 58| 58| 432| 1.949118678695| 2.001188928633| -2.54e-02| 4.95e-04| 1.948027824
  1000| 1000| 144| 54| 2308| 0.504003349048| 0.504017573211| +8.01e-03| 8.04e-03|
  1000| 1000| 289| 108| 4628| 0.500984076526| 0.500998053787| +1.97e-03| 2.00e-03| 0.499986901
  1000| 1000| 578| 214| 9249| 0.500235633908| 0.500249550598| +4.71e-04| 4.99e-04| 0.499986153

(CPU s 0.3 / 0.5 / 1.4 and 0.8 / 3.1 / 12.1.)  The excess over the continuous Gaussian
follows the predicted grid price ``m h^2 / 6`` and the two Richardson estimates agree to
1e-5 (m = 10) and 1.5e-6 (m = 1000): the continuum optimum is ~1.94803 at m = 10 and
~0.499986 at m = 1000, below the Gaussian's 2 and 0.5.  m = 10^4, C = 10^4 (the design's
default, ``n = 1826``, band 211, 23 308 window rows; not run by this table): KL 0.5002485
(+4.97e-4 over 0.5; the old default gave 0.581979), grid Gaussian 0.5002499, coarse
(n = 913) 0.5009982, Richardson 0.4999987; ``dpjax spherical design --dim 10000 --cost
10000`` (both solves, cells included) 42.4 CPU s, peak RSS 564 MB (blocked banded Newton,
window-only cells).  m = 10^5, C = 10^5 (``--dim 100000 --cost 100000``: n = 5774, band 211,
86 316 window rows past a core of 1 785 002): KL 0.5002498062 (+5.00e-4), grid Gaussian
0.5002499458, Richardson (coarse n = 2887) 0.4999999107; 211.6 CPU s, peak RSS 1.03 GB
(load ~10 on 2 cores).  Re-measured 2026-11-29 with the error-sized thin-shell rule and the
cells on a thread per core (``bench/results/spherical_large_m_2026-11-29.txt``): m = 10^4 30.5 s
wall / 43.3 CPU s, 550 MB; m = 10^5 89.1 s / 141.3 CPU s, 1.02 GB (KL unchanged to 1e-10);
m = 10^6 (n = 18258, band 211, 232 456 window rows) KL 0.5002499579 (+5.00e-4), grid Gaussian
0.5002503208, continuum estimate 0.5000000362, 710.8 s wall / 805.6 CPU s beside test runs,
peak RSS 2.47 GB.

Usage: python bench/bench_spherical_refinement.py [--dims 10,1000,100000]
       [--factors 0.25,0.5,1] [--budgets 2.5,1000,100000]
"""

from __future__ import annotations

import argparse
import time

import jax

from dpjax.spherical.geometric import plan, shells_per_unit, solve_plan


def main() -> None:
    """Print the refinement table (see the module docstring)."""
    jax.config.update("jax_enable_x64", True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", default="10,1000,100000")
    ap.add_argument("--budgets", default=None, help="one per dim (default 2.5 at m=10, else m)")
    ap.add_argument("--factors", default="0.25,0.5,1")
    args = ap.parse_args()
    dims = [int(v) for v in args.dims.split(",")]
    budgets = ([float(v) for v in args.budgets.split(",")] if args.budgets else
               [2.5 if m == 10 else float(m) for m in dims])
    factors = [float(v) for v in args.factors.split(",")]
    print(f"jax {jax.__version__}; CPU; float64")
    print("m       | C       | n     | b    | rows   | KL             | grid Gauss KL  |"
          " Gauss KL | excess    | m h^2/6   | Richardson KL  | CPU s")
    for m, budget in zip(dims, budgets, strict=True):
        prev = None
        for f in factors:
            n = max(4, round(shells_per_unit(m) * f))
            start = time.process_time()
            res = solve_plan(plan(m, budget, n))
            sec = time.process_time() - start
            gauss = m / (2.0 * budget)
            rich = ""
            if prev is not None:
                h1, h2 = 1.0 / n, 1.0 / prev[0]
                rich = f"{(res['kl'] * h2 * h2 - prev[1] * h1 * h1) / (h2 * h2 - h1 * h1):.12f}"
            print(f"{m:<7d} | {budget:<7g} | {n:<5d} | {res['b']:<4d} | "
                  f"{res['rows'] - res['first']:<6d} | {res['kl']:.12f} | "
                  f"{res['grid_gaussian_kl']:.12f} | {gauss:<8.6g} | "
                  f"{res['kl'] / gauss - 1:+.2e} | {m / (6.0 * n * n):.2e} | {rich:<14} | "
                  f"{sec:.1f}", flush=True)
            prev = (n, res["kl"])


if __name__ == "__main__":
    main()
