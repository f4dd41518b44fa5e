"""Helpers for reproduction reports: markdown tables and PNG figures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A markdown table (floats with 6 significant digits).

    Args:
      headers: the column names.
      rows: the rows, each a sequence of cells.

    Returns:
      The table as text, ending with a newline.

    Example:
      >>> print(markdown_table(["epsilon", "variance"], [[0.3, 168.80186]]), end="")
      | epsilon | variance |
      |---|---|
      | 0.3 | 168.802 |
    """
    def cell(x):
        if isinstance(x, float):
            return f"{x:.6g}"
        return str(x)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def new_figure(**kw):
    """A matplotlib figure using the non-interactive Agg backend.

    Args:
      **kw: passed to ``matplotlib.pyplot.subplots`` (e.g. ``figsize``).

    Returns:
      ``(figure, axes)``.
    """
    import matplotlib  # deferred: matplotlib (heavy; loaded by the reproductions that plot)

    matplotlib.use("Agg")
    # deferred: matplotlib (heavy; loaded by the reproductions that plot)
    import matplotlib.pyplot as plt

    return plt.subplots(**kw)


def save_figure(fig, path: Path) -> Path:
    """Save ``fig`` as a PNG at ``path`` (120 dpi, tight layout) and close it.

    Args:
      fig: the figure.
      path: where to write it.

    Returns:
      ``path``.
    """
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    # deferred: matplotlib (heavy; loaded by the reproductions that plot)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def matches(printed: float, value: float, decimals: int) -> str:
    """``"yes"`` if ``value`` rounds to the paper's printed number at ``decimals``, else ``"NO"``.

    Args:
      printed: the number the paper prints.
      value: dpjax's value.
      decimals: the decimals the paper prints.

    Returns:
      ``"yes"`` or ``"NO"``.

    Example:
      >>> matches(168.80, 168.80186, 2), matches(2.39, 2.3849, 2)
      ('yes', 'NO')
    """
    return "yes" if round(value, decimals) == round(printed, decimals) else "NO"
