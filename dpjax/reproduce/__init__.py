"""Paper reproductions behind ``dpjax reproduce PAPER``.

Each reproduction is a module with ``run(out_dir: pathlib.Path) -> pathlib.Path``
that writes PNG figures and a markdown report (the paper's numbers beside
dpjax's, with every discrepancy explained) and returns the report's path.
Register it in ``PAPERS``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

PAPERS: dict[str, str] = {
    "gaussian-baseline": "dpjax.reproduce.gaussian_baseline",
    "inid": "dpjax.reproduce.inid",
    "spherical": "dpjax.reproduce.spherical",
    "flipped-huber": "dpjax.reproduce.flipped_huber",
    "flipped-huber-kdim": "dpjax.reproduce.flipped_huber_kdim",
    "applications": "dpjax.reproduce.applications",
}


def run_paper(name: str, out_dir: Path) -> Path:
    """Run the reproduction registered as ``name`` in :data:`PAPERS` into ``out_dir``.

    Args:
      name: a key of :data:`PAPERS` (e.g. ``"inid"``).
      out_dir: output directory (created if missing).

    Returns:
      The path of the markdown report.

    Raises:
      ValueError: an unknown paper.
    """
    if name not in PAPERS:
        raise ValueError(f"unknown paper {name!r}; known: {', '.join(sorted(PAPERS))}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return importlib.import_module(PAPERS[name]).run(out_dir)
