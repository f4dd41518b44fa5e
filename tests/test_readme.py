"""Every ```python block of README.md runs as written (README is a user's guide whose examples run).

Each block is executed in a fresh namespace, in a fresh interpreter state only as far as
the test process goes: the blocks are independent, as a reader would paste them.  The
float64 policy is the user's, not the suite's: x64 is switched off around each block
(tests/conftest.py turns it on for the rest of the suite), so an example that forgets
``jax.enable_x64`` where dpjax needs it fails here instead of passing by accident.
"""

from __future__ import annotations

import pathlib
import re

import jax
import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str) -> list[str]:
    """The bodies of the fenced ```python blocks of ``text``, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_has_examples():
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 4
    assert python_blocks("```python\nx = 1\n```\n```bash\nls\n```\n") == ["x = 1\n"]


@pytest.mark.parametrize("index", range(len(python_blocks(README.read_text()))))
def test_readme_block_runs(index, monkeypatch):
    block = python_blocks(README.read_text())[index]
    monkeypatch.setattr("builtins.print", lambda *a, **k: None)
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        with jax.numpy_dtype_promotion("standard"):
            exec(compile(block, f"README.md[python block {index}]", "exec"), {"__name__": "readme"})
    finally:
        jax.config.update("jax_enable_x64", previous)
