"""The ``dpjax`` command (a thin layer over the library; nothing imports it)."""

from dpjax.cli._main import main

__all__ = ["main"]
