"""Paper reproductions behind ``dpjax reproduce PAPER``.

Each reproduction is a module with ``run(out_dir: pathlib.Path, quick: bool = False)
-> pathlib.Path`` that writes PNG figures, a markdown report (the paper's numbers beside
dpjax's, with every discrepancy explained) and optionally ``summary.json`` (the headline
numbers, printed by ``dpjax reproduce --json``), and returns the report's path.  It marks
its stages with :func:`dpjax._progress.mark` (progress on a terminal, and the one-line
summary of where the time went).  Register it in :data:`PAPERS`.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from pathlib import Path
from typing import NamedTuple

from dpjax import _progress
from dpjax.papers import cite


class Reproduction(NamedTuple):
    """One registered reproduction.

    Attributes:
      module: the module with ``run(out_dir, quick=False)``.
      paper: the slug of the paper it reproduces (:data:`dpjax.papers.CITATIONS`).
      expected: its expected wall time on 2 CPU cores (cold compilation cache).
    """

    module: str
    paper: str
    expected: str


PAPERS: dict[str, Reproduction] = {
    "gaussian-baseline": Reproduction(
        "dpjax.reproduce.gaussian_baseline", "inid-noise-laplace-beats-gaussian", "under 30 s"
    ),
    "inid": Reproduction(
        "dpjax.reproduce.inid", "inid-noise-laplace-beats-gaussian", "under 5 min"
    ),
    "spherical": Reproduction(
        "dpjax.reproduce.spherical", "spherical-kl-optimal-mechanisms",
        "6 min before the (m, q, k) map was added; not timed end to end since",
    ),
    "flipped-huber": Reproduction(
        "dpjax.reproduce.flipped_huber", "flipped-huber-mechanism",
        "about 10 min (--quick: under 1 min)",
    ),
    "bcdp": Reproduction(
        "dpjax.reproduce.bcdp", "bayesian-coordinate-dp",
        "about 4 min of CPU (100 trials per q and channel; 11.5 min wall at load 11 on "
        "2 shared cores); --quick: about 1.5 min of CPU",
    ),
    "training": Reproduction(
        "dpjax.reproduce.training", "inid-noise-laplace-beats-gaussian",
        "about 10 min (--quick: about 2 min)",
    ),
    "applications": Reproduction(
        "dpjax.reproduce.applications", "inid-noise-laplace-beats-gaussian",
        "about 65 s of CPU (3.2 min wall at load 18 on 2 shared cores); --quick: about "
        "35 s of CPU (under 2 min wall at load 20)",
    ),
    "flipped-huber-kdim": Reproduction(
        "dpjax.reproduce.flipped_huber_kdim", "flipped-huber-mechanism", "tens of minutes"
    ),
}


def run_paper(name: str, out_dir: Path, quick: bool = False) -> Path:
    """Run the reproduction registered as ``name`` in :data:`PAPERS` into ``out_dir``.

    Prints the paper's full citation and expected time before, and one line of where the
    time went after, on stderr.

    Args:
      name: a key of :data:`PAPERS` (e.g. ``"inid"``).
      out_dir: output directory (created if missing).
      quick: a shorter run (fewer seeds/points) where the reproduction has one.

    Returns:
      The path of the markdown report.

    Raises:
      ValueError: an unknown paper.
    """
    if name not in PAPERS:
        raise ValueError(f"unknown paper {name!r}; known: {', '.join(sorted(PAPERS))}")
    entry = PAPERS[name]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"reproduce {name}: {cite(entry.paper)}; expected {entry.expected}", file=sys.stderr)
    run = importlib.import_module(entry.module).run
    _progress.stages()  # a fresh list of stages
    _progress.mark("start")
    if "quick" in inspect.signature(run).parameters:
        report = run(out_dir, quick=quick)
    else:
        report = run(out_dir)
    print(_progress.summary(f"reproduce {name}"), file=sys.stderr)
    return report


def summary(name: str, out_dir: Path, report: Path) -> dict:
    """The JSON summary of a finished reproduction: its ``summary.json`` if it wrote one,
    with the paper, its citation and the report's path.

    Args:
      name: the key of :data:`PAPERS`.
      out_dir: the output directory the reproduction wrote into.
      report: the report's path.

    Returns:
      A JSON-serialisable dict.
    """
    path = Path(out_dir) / "summary.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    entry = PAPERS[name]
    return {"paper": name, "citation": cite(entry.paper), "report": str(report), **data}
