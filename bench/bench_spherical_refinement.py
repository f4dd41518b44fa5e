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
