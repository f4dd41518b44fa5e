"""The four papers dpjax implements, by the slug its docstrings cite them with.

Docstrings cite a paper as ``<equation or theorem> of <slug>`` (e.g. "eq. (15) of
flipped-huber-mechanism"); :data:`CITATIONS` gives each slug's full reference, and
``dpjax reproduce`` prints it at the head of each report.  Venues and identifiers are
given only where the paper's own text states them.

Example:
  >>> print(cite("bayesian-coordinate-dp")[:60])
  M. Aliakbarpour, S. Chaudhuri, T. A. Courtade, A. Fallah and
"""

from __future__ import annotations

from typing import NamedTuple


class Paper(NamedTuple):
    """One paper of the specification.

    Attributes:
      slug: the short name docstrings cite.
      title: the paper's title.
      authors: the authors, as printed.
      note: venue or status where the paper states it (empty otherwise).
    """

    slug: str
    title: str
    authors: str
    note: str = ""


CITATIONS: dict[str, Paper] = {
    p.slug: p
    for p in (
        Paper(
            "flipped-huber-mechanism",
            "Grafting Laplace and Gaussian distributions: A new noise mechanism for "
            "differential privacy",
            "G. Muthukrishnan and S. Kalyani",
        ),
        Paper(
            "inid-noise-laplace-beats-gaussian",
            "Differential Privacy with Higher Utility by Exploiting Coordinate-wise "
            "Disparity: Laplace Mechanism Can Beat Gaussian in High Dimensions",
            "G. Muthukrishnan and S. Kalyani",
        ),
        Paper(
            "spherical-kl-optimal-mechanisms",
            "Optimal Multidimensional Differentially Private Mechanisms in the "
            "Large-Composition Regime",
            "W. Alghamdi, S. Asoodeh, F. P. Calmon, J. F. Gomez, O. Kosut and L. Sankar",
        ),
        Paper(
            "bayesian-coordinate-dp",
            "Enhancing Feature-Specific Data Protection via Bayesian Coordinate "
            "Differential Privacy",
            "M. Aliakbarpour, S. Chaudhuri, T. A. Courtade, A. Fallah and M. I. Jordan",
            "preprint, October 2024",
        ),
    )
}


def cite(slug: str) -> str:
    """The full citation of the paper ``slug`` (title, authors, venue where known).

    Args:
      slug: a key of :data:`CITATIONS`.

    Returns:
      One line: ``authors, "title" [, note] (slug)``.

    Raises:
      ValueError: unknown slug.
    """
    if slug not in CITATIONS:
        raise ValueError(f"unknown paper {slug!r}; known: {', '.join(sorted(CITATIONS))}")
    p = CITATIONS[slug]
    note = f", {p.note}" if p.note else ""
    return f'{p.authors}, "{p.title}"{note} ({p.slug})'
