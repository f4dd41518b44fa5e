"""A terminal progress bar for long searches: stderr, only on a terminal.

``with progress(total, "label") as step: ... step()`` draws
``label [#####.....] 3/10 12 s`` on one line of stderr when stderr is a TTY and
draws nothing otherwise (pipes, CI, tests), so output that programs read is never
touched.  ``DPJAX_PROGRESS=0`` turns it off, ``=1`` forces it on.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator

_WIDTH = 24


def enabled() -> bool:
    """Whether progress is drawn: stderr is a terminal, or ``DPJAX_PROGRESS`` says so."""
    flag = os.environ.get("DPJAX_PROGRESS")
    if flag is not None:
        return flag not in ("0", "", "false", "no")
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


@contextlib.contextmanager
def progress(total: int, label: str) -> Iterator:
    """Context manager yielding ``step(n=1)``; the bar is cleared at exit.

    Draws ``label [#####.....] 3/10 12 s`` on one line of stderr when stderr is a terminal
    (or ``DPJAX_PROGRESS=1``); nothing otherwise, and nothing for ``total <= 1``.

    Args:
      total: number of steps.
      label: text before the bar.

    Yields:
      ``step(n=1)``: advance the bar by ``n`` steps (capped at ``total``).

    Example:
      >>> with progress(3, "calibrating") as step:  # silent: stderr is not a terminal here
      ...     for _ in range(3):
      ...         step()
    """
    on = enabled() and total > 1
    start = time.perf_counter()
    done = 0

    def draw() -> None:
        filled = _WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (_WIDTH - filled)
        secs = time.perf_counter() - start
        sys.stderr.write(f"\r{label} [{bar}] {done}/{total} {secs:.0f} s")
        sys.stderr.flush()

    def step(n: int = 1) -> None:
        nonlocal done
        done = min(done + n, total)
        if on:
            draw()

    if on:
        draw()
    try:
        yield step
    finally:
        if on:
            sys.stderr.write("\r" + " " * (len(label) + _WIDTH + 24) + "\r")
            sys.stderr.flush()


#: the stages of the running task: ``[label, start time]`` pairs (see :func:`mark`)
_stages: list[list] = []
#: at most this many stages are kept (the oldest go first): a library loop that never asks
#: for a summary holds a bounded list
_MAX_STAGES = 1000


def mark(label: str) -> None:
    """Start the stage ``label`` of a long task (ending the previous one).

    On a terminal (the rule of :func:`progress`) the label is shown on stderr while the
    stage runs; :func:`stages` reports where the time went.  Used by ``dpjax reproduce``
    (a reproduction calls ``mark("Table II")`` before each figure or table) and by
    :func:`dpjax.comparison.compare` (one stage per mechanism).

    Args:
      label: what the task is doing now.

    Example:
      >>> _ = stages()  # a fresh list
      >>> mark("fig. 1"); mark("table II")
      >>> [label for label, _ in stages()]
      ['fig. 1', 'table II']
    """
    if len(_stages) >= _MAX_STAGES:
        del _stages[0]
    _stages.append([label, time.perf_counter()])
    if enabled():
        sys.stderr.write(f"\r{label} ...".ljust(60) + "\n")
        sys.stderr.flush()


def stages(reset: bool = True) -> list[tuple[str, float]]:
    """The stages marked since the last reset, with their durations in seconds.

    Args:
      reset: forget them afterwards (the next task starts a fresh list).

    Returns:
      ``[(label, seconds), ...]`` in order; the last stage ends now.
    """
    if not _stages:
        return []
    ends = [start for _, start in _stages[1:]] + [time.perf_counter()]
    out = [(label, end - start) for (label, start), end in zip(_stages, ends, strict=True)]
    if reset:
        _stages.clear()
    return out


def summary(task: str) -> str:
    """One line saying where the time of the stages marked since the last reset went.

    ``task: 31 s (spherical 17 s, laplace 7 s)``: the total, then each stage of at least
    half a second; the stages are reset.

    Args:
      task: what ran (``reproduce flipped-huber``, ``design``).

    Example:
      >>> _ = stages(); mark("a")
      >>> summary("task").startswith("task: 0 s")
      True
    """
    spent = stages()
    total = sum(secs for _, secs in spent)
    where = ", ".join(f"{label} {secs:.0f} s" for label, secs in spent if secs >= 0.5)
    return f"{task}: {total:.0f} s ({where})"
