"""Every ``>>>`` example in ``dpjax`` and ``solvers`` runs: one test per module.

A module is collected when its source holds an example line; the test imports it,
gathers its doctests (module, class, function and method docstrings, as
``python -m doctest`` would, with the module's names in scope), runs them with
``ELLIPSIS | NORMALIZE_WHITESPACE`` and fails on any failing example, and also when
fewer examples ran than the source holds (an example hidden where doctest cannot
find it, e.g. in the docstring of a closure, never runs and must not pass silently).

Examples run as a reader would run them: x64 is on (the test suite enables it;
examples enable it themselves or go through the façade, which scopes it) and dtype
promotion is JAX's default ``"standard"``, not the suite's ``"strict"``.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pathlib
import re

import jax
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("dpjax", "solvers")
# an example line; a ">>>" line holding only a comment is no example (doctest skips it)
_EXAMPLE = re.compile(r"^\s*>>>(?!\s*(?:#|$))", re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules_with_examples() -> dict[str, int]:
    """``{module name: number of example lines in its source}`` for every module that has one."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            count = len(_EXAMPLE.findall(path.read_text(encoding="utf-8")))
            if count:
                found[_module_name(path)] = count
    return found


MODULES = _modules_with_examples()


def test_examples_are_collected():
    # the library's entry points carry examples; an empty collection would pass vacuously
    assert {"dpjax.api", "dpjax.numerics._x64", "solvers"} <= set(MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_doctests(name):
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    ran = sum(len(t.examples) for t in tests)
    assert ran == MODULES[name], (
        f"{name}: doctest finds {ran} examples but the source has {MODULES[name]} '>>>' lines"
    )
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    with jax.numpy_dtype_promotion("standard"):
        for test in sorted(tests, key=lambda t: t.lineno or 0):
            runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()


def test_sources_hold_no_control_characters():
    # a ``\b`` or ``\t`` in a docstring that is not raw becomes a backspace or a tab, and the
    # rendered formula loses ``\begin`` / ``\text`` (three had, found 2026-11-30)
    bad = [f"{path.relative_to(ROOT)}:{n}"
           for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
           for n, line in enumerate(path.read_text().splitlines(), 1)
           if re.search(r"[\x00-\x08\x0b-\x1f]|\t", line)]
    assert not bad, bad
