"""SciPy's special functions and banded solver for host code, imported on first use.

dpjax's host paths call a few SciPy functions (``ndtri_exp``, ``log_ndtr``, ``gammaln``,
``betainc``, ``solveh_banded``, ...), most of them only in some paths (a calibration, the
RDP bounds, the spherical design).  Importing :mod:`scipy.special` is costly (its
array-API layer; measured in docs/benchmarks.md), and a ``dpjax account`` command that never
calls it paid that at import (issue 36, item 3).  Modules name SciPy through :data:`special` and
:data:`linalg` instead: attribute access imports the module the first time and keeps the
attribute, so a path that calls nothing from SciPy never imports it, and one that does pays
the import once, as before.

Example:
  >>> from dpjax.numerics.lazy_scipy import special
  >>> round(float(special.gammaln(5.0)), 12)  # log 4! (imports scipy.special here)
  3.178053830348
"""

from __future__ import annotations

import importlib


class OnFirstUse:
    """A module imported when one of its attributes is first read.

    Args:
      name: the module's import name (e.g. ``"scipy.special"``).
    """

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        # only for attributes not yet kept: import (a dict lookup once loaded), keep, return
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


#: :mod:`scipy.special`, imported on first use.
special = OnFirstUse("scipy.special")
#: :mod:`scipy.linalg`, imported on first use.
linalg = OnFirstUse("scipy.linalg")

__all__ = ["OnFirstUse", "linalg", "special"]
