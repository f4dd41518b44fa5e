"""Warnings that point at the user's line, not at dpjax's internals.

A library warning is useful where it names the call the user wrote: a fixed
``stacklevel`` is right for one call path only (``dpjax.account`` reaches the PLD engine
through more frames than ``engine.epsilon`` does).  :func:`warn_user` attributes the
warning to the first frame outside the dpjax package, whatever the path.
"""

from __future__ import annotations

import os
import sys
import warnings

#: The package's directory: frames of files under it are dpjax's own.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_user(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` attributed to the nearest caller outside dpjax.

    Args:
      message: the warning's text.
      category: its class (e.g. :class:`~dpjax.accounting.pld.plan.EngineNote`).

    Example:
      >>> import warnings
      >>> with warnings.catch_warnings(record=True) as seen:
      ...     warnings.simplefilter("always")
      ...     warn_user("coarser grid", UserWarning)
      >>> seen[0].filename.startswith(_PACKAGE)
      False
    """
    frame, level = sys._getframe(1), 2  # level 2: warn_user's caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
