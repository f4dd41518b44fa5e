"""A registry of named objects (solver backends, benchmark families): one dict, one error.

Example:
  >>> from types import SimpleNamespace
  >>> reg = NameRegistry("widget")
  >>> _ = reg.register(SimpleNamespace(name="b")); _ = reg.register(SimpleNamespace(name="a"))
  >>> reg.names()
  ('a', 'b')
  >>> reg.get("c")
  Traceback (most recent call last):
  ...
  ValueError: unknown widget 'c'; known: a, b
"""

from __future__ import annotations

from typing import Any


class NameRegistry:
    """Objects registered under their ``name`` attribute.

    Args:
      kind: what is registered, for the error message (``"solver backend"``).
      hint: appended to the unknown-name error (where more entries come from).
    """

    def __init__(self, kind: str, hint: str = ""):
        self.kind, self.hint = kind, hint
        self._items: dict[str, Any] = {}

    def register(self, obj: Any) -> Any:
        """Register ``obj`` under ``obj.name`` (replaces an existing one); returns ``obj``.

        Args:
          obj: an object with a ``name`` attribute.
        """
        self._items[obj.name] = obj
        return obj

    def get(self, name: str) -> Any:
        """The object registered under ``name``.

        Args:
          name: a registered name (:meth:`names`).

        Raises:
          ValueError: no object is registered under ``name``.
        """
        if name not in self._items:
            known = ", ".join(self.names()) or "none"
            raise ValueError(f"unknown {self.kind} {name!r}; known: {known}{self.hint}")
        return self._items[name]

    def names(self) -> tuple[str, ...]:
        """The registered names, sorted."""
        return tuple(sorted(self._items))
