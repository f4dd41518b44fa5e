"""The registry of mechanisms by their dpjax names.

To add a mechanism: write ``dpjax/mechanisms/<name>.py`` exposing a
``MECHANISM`` (:class:`Mechanism`) and add it to ``_MODULES`` below.
"""

from __future__ import annotations

import importlib

from dpjax.mechanisms._spec import Mechanism, Query

__all__ = ["Mechanism", "Query", "get", "names"]

_MODULES = {
    "gaussian": "dpjax.mechanisms.gaussian",
    "laplace": "dpjax.mechanisms.laplace",
    "flipped-huber": "dpjax.mechanisms.flipped_huber",
    "osgt": "dpjax.mechanisms.osgt",
    "truncated-laplace": "dpjax.mechanisms.truncated_laplace",
    "staircase": "dpjax.mechanisms.staircase",
}


def names() -> tuple[str, ...]:
    """The mechanism names dpjax knows, in display order."""
    return tuple(_MODULES)


def get(name: str) -> Mechanism:
    """The :class:`Mechanism` registered under ``name`` (ValueError if unknown)."""
    if name not in _MODULES:
        raise ValueError(f"unknown mechanism {name!r}; known: {', '.join(_MODULES)}")
    return importlib.import_module(_MODULES[name]).MECHANISM
