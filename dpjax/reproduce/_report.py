"""Helpers for reproduction reports: markdown tables and PNG figures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    def cell(x):
        if isinstance(x, float):
            return f"{x:.6g}"
        return str(x)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def new_figure(**kw):
    """A matplotlib figure using the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(**kw)


def save_figure(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def matches(printed: float, value: float, decimals: int) -> str:
    """'yes' if ``value`` rounds to the paper's printed ``decimals``."""
    return "yes" if round(value, decimals) == round(printed, decimals) else "NO"
