r"""Where the spherical mechanism pays: a map over (m, q, k) against the subsampled Gaussian.

At fixed second moment per coordinate (``E|Z|^2 = m sigma^2``, the regime of Fig. 2 of
spherical-kl-optimal-mechanisms), for each dimension ``m`` the KL-optimal spherical
mechanism is designed (:func:`dpjax.spherical.geometric.design_geometric`: shells, band,
window and tail from the geometry, banded Newton) and its certified epsilon at ``delta``
after ``k`` Poisson-subsampled (rate ``q``) uses is set beside the subsampled Gaussian's
(:func:`dpjax.reproduce.spherical.gaussian_epsilons`).  The ratio
``eps_spherical / eps_Gaussian < 1`` is where the designed mechanism pays; the design's KL
beside the continuous Gaussian's ``m / (2C) = 1 / (2 sigma^2)`` says how much there is to
gain at each ``m``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from dpjax.reproduce._report import markdown_table, new_figure, save_figure
from dpjax.spherical import geometric  # looked up per call (tests replace it)

SIGMA, DELTA = 0.5, 1e-8
FULL = {"dims": (10, 100, 1000, 10000), "qs": (1e-2, 1e-1, 1.0), "ks": (1, 10, 100, 1000)}
QUICK = {"dims": (10, 30), "qs": (1e-2, 1.0), "ks": (1, 100)}


def epsilon_map(dims, qs, ks, sigma: float = SIGMA, delta: float = DELTA) -> list[dict]:
    r"""Certified epsilons of the designed spherical mechanism and the Gaussian over (m, q, k).

    Args:
      dims: dimensions ``m``.
      qs: Poisson sampling rates (``1``: no subsampling).
      ks: numbers of compositions.
      sigma: per-coordinate standard deviation (``E|Z|^2 = m sigma^2``).
      delta: the target delta.

    Returns:
      One dict per ``(m, q, k)``: ``m, q, k, spherical, gaussian, ratio, kl, gaussian_kl,
      n`` (shells per unit radius of the geometric design).
    """
    # cycle: dpjax.reproduce.spherical_map <-> dpjax.reproduce.spherical
    from dpjax.reproduce.spherical import gaussian_epsilons

    rows = []
    for m in dims:
        mech, info = geometric.design_geometric(int(m), m * sigma * sigma, refine=False)
        for q in qs:
            rate = None if q >= 1.0 else float(q)
            sph = mech.epsilons(delta, ks, rate)
            gau = gaussian_epsilons(ks, sigma, delta, 1.0 if rate is None else rate)
            for k, a, g in zip(ks, sph, gau, strict=True):
                rows.append({"m": int(m), "q": float(q), "k": int(k), "spherical": float(a),
                             "gaussian": float(g), "ratio": float(a / g), "kl": info["kl"],
                             "gaussian_kl": info["gaussian_kl"], "n": int(info["n"])})
                print(f"map m={m} q={q} k={k}: {a:.5g} vs {g:.5g}", file=sys.stderr, flush=True)
    return rows


def map_section(out_dir: Path, quick: bool = False,
                rows: list[dict] | None = None) -> tuple[list[str], list[dict]]:
    """Compute the map, plot the ratio, and return the report's lines and the rows.

    Args:
      out_dir: where ``spherical_map.png`` is written.
      quick: the small grid (``QUICK``) instead of ``FULL``.
      rows: rows of :func:`epsilon_map` computed already (e.g. one process per ``m``), or
        ``None`` to compute them.
    """
    grid = QUICK if quick else FULL
    if rows is None:
        rows = epsilon_map(grid["dims"], grid["qs"], grid["ks"])
    fig, axes = new_figure(ncols=len(grid["qs"]), figsize=(4 * len(grid["qs"]), 3.5))
    for ax, q in zip(np.atleast_1d(axes), grid["qs"], strict=True):
        for m in grid["dims"]:
            sel = [r for r in rows if r["m"] == m and r["q"] == q]
            ax.plot([r["k"] for r in sel], [r["ratio"] for r in sel], "o-", label=f"m = {m}")
        ax.axhline(1.0, color="k", lw=0.5)
        ax.set_xscale("log")
        ax.set_title(f"q = {q:g}")
        ax.set_xlabel("compositions k")
        ax.set_ylabel("eps spherical / eps Gaussian")
        ax.legend()
    save_figure(fig, Path(out_dir) / "spherical_map.png")
    pays = [r for r in rows if r["ratio"] < 1.0]
    lines = [
        "## Where the spherical mechanism pays: (m, q, k) map\n",
        f"Fixed second moment E|Z|^2 = m sigma^2 (sigma = {SIGMA}), delta = {DELTA:g}, "
        "designed by the geometric design (shells n ~ sqrt(m), band, window and tail from the "
        "geometry, banded Newton; dpjax.spherical.design_geometric); certified epsilons "
        "(worse adjacency) of the designed mechanism and of the subsampled Gaussian. "
        "Ratio < 1: the designed mechanism pays.\n",
        markdown_table(["m", "n", "q", "k", "eps spherical", "eps Gaussian", "ratio", "KL",
                        "Gaussian KL"],
                       [[r["m"], r.get("n", ""), r["q"], r["k"], r["spherical"], r["gaussian"],
                         r["ratio"], r["kl"], r["gaussian_kl"]] for r in rows]),
        f"\nThe designed mechanism is below the Gaussian in {len(pays)} of {len(rows)} cells.",
        *_kl_lines(rows),
        "![map](spherical_map.png)\n",
    ]
    return lines, rows


def _kl_lines(rows: list[dict]) -> list[str]:
    """Per dimension: the design's KL relative to the continuous Gaussian's, and the verdict
    it implies (:func:`dpjax.spherical.geometric.verdict`)."""
    out = ["\nKL at unit shift against the continuous Gaussian's (m / 2C) of the same cost:\n"]
    for m in sorted({r["m"] for r in rows}):
        r = next(r for r in rows if r["m"] == m)
        out.append(f"* m = {m}: KL {r['kl']:.6g} vs {r['gaussian_kl']:.6g} -- "
                   f"{geometric.verdict(r)}")
    out.append("")
    return out


__all__ = ["FULL", "QUICK", "epsilon_map", "map_section"]
