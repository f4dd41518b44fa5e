"""Import hygiene of the package (issue 37, item 1), read from the source with ``ast`` only.

* A function-local import is there to break an import cycle or to defer a heavy or optional
  dependency, and says which: ``# cycle: <this module> <-> <other module>`` or
  ``# deferred: <dependency> (<why>)`` on its own line(s) or on the line above it (one
  comment may head a group of consecutive imports).
* Few private names cross module boundaries: a ``_name`` is private to its module and a
  ``_module`` to its package; importing or reading one from outside counts.
* dpjax/cli/ and the other modules ``dpjax --version`` and ``--help`` load import no JAX
  at module level (a command imports it when it runs).
* The module-level imports of the package form no cycle.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpjax"
TAGS = ("# cycle:", "# deferred:")
MAX_PRIVATE = 10  # issue 37; 2 today (a public name read from a private module)
#: the modules of the CLI start (``dpjax --version`` / ``--help``) besides dpjax/cli/
LIGHT = ("__init__.py", "__main__.py", "_compilation_cache.py", "errors.py")
HEAVY = ("jax", "jaxlib", "optax")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


PATHS = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
#: module name -> source: the package's, or a made-up one in test_the_checks_can_fail
SOURCES = {name: path.read_text() for name, path in PATHS.items()}
_parse = functools.lru_cache(maxsize=None)(ast.parse)  # each source parsed once


def _is_package(name: str) -> bool:
    return name in PATHS and PATHS[name].name == "__init__.py"


def _resolve(current: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".") if _is_package(current) else current.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _function_local_imports(tree: ast.AST) -> list[ast.stmt]:
    found = []

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    walk(tree, False)
    return found


def _module_level_imports(body: list[ast.stmt]) -> list[ast.stmt]:
    """Imports run at import time: the module body, its ``if`` (not ``TYPE_CHECKING``),
    ``try`` and ``with`` blocks."""
    found = []
    for st in body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            found.append(st)
        elif isinstance(st, ast.If) and "TYPE_CHECKING" not in ast.unparse(st.test):
            found += _module_level_imports(st.body) + _module_level_imports(st.orelse)
        elif isinstance(st, ast.Try):
            blocks = [st.body, st.orelse, st.finalbody] + [h.body for h in st.handlers]
            found += [imp for block in blocks for imp in _module_level_imports(block)]
        elif isinstance(st, ast.With):
            found += _module_level_imports(st.body)
    return found


def uncommented_local_imports(sources=SOURCES) -> list[str]:
    """``module:line`` of every function-local import without a ``cycle``/``deferred`` note."""
    bad = []
    for name, source in sources.items():
        lines = source.splitlines()
        imports = _function_local_imports(_parse(source))
        import_lines = {i for n in imports for i in range(n.lineno, n.end_lineno + 1)}
        for node in imports:
            own = lines[node.lineno - 1 : node.end_lineno]
            above = node.lineno - 1  # 1-based number of the line above
            while above in import_lines:  # a group of consecutive imports shares one note
                above -= 1
            head = lines[above - 1].strip() if above >= 1 else ""
            if not (any(tag in line for line in own for tag in TAGS) or head.startswith(TAGS)):
                bad.append(f"{name}:{node.lineno}")
    return bad


def _outside(current: str, dotted: str) -> bool:
    """Whether ``current`` may not use ``dotted``: a private component ``_x`` of it is
    private to the module or package that holds it."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = ".".join(parts[:i])
            if current != owner and not current.startswith(owner + "."):
                return True
    return False


def private_cross_module_uses(sources=SOURCES) -> list[str]:
    """Imports of another module's private name (``from dpjax.x import _f``, ``from
    dpjax.pkg._mod import f`` outside ``pkg``) and reads ``mod._f`` of an imported module."""
    found = []
    for current, source in sources.items():
        tree, where = _parse(source), current
        alias = {}  # local name -> the dpjax module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "dpjax":
                        alias[a.asname or "dpjax"] = a.name if a.asname else "dpjax"
                        if _outside(current, a.name):
                            found.append(f"{where}:{node.lineno} import {a.name}")
            elif isinstance(node, ast.ImportFrom):
                module = _resolve(current, node)
                if module.split(".")[0] != "dpjax":
                    continue
                for a in node.names:
                    dotted = f"{module}.{a.name}"
                    if dotted in sources:
                        alias[a.asname or a.name] = dotted
                    if _outside(current, dotted):
                        found.append(f"{where}:{node.lineno} from {module} import {a.name}")
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
                continue
            chain, base = [], node.value
            while isinstance(base, ast.Attribute):
                chain.insert(0, base.attr)
                base = base.value
            if not (isinstance(base, ast.Name) and base.id in alias):
                continue
            module = ".".join([alias[base.id], *chain])
            if module in sources and _outside(current, f"{module}.{node.attr}"):
                text = ".".join([base.id, *chain, node.attr])
                found.append(f"{where}:{node.lineno} {text}")
    return found


def import_cycle(sources=SOURCES) -> list[str] | None:
    """A cycle of module-level imports among dpjax modules (each entry imports the next),
    or ``None``.  Importing ``a.b.c`` runs ``a``, ``a.b`` and ``a.b.c``; a module's own
    enclosing packages are already running, so they are not edges."""
    graph = {}
    for current, source in sources.items():
        tree, edges = _parse(source), set()

        def add(dotted, current=current, edges=edges):
            parts = dotted.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target in sources and not (current + ".").startswith(target + "."):
                    edges.add(target)

        for node in _module_level_imports(tree.body):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "dpjax":
                        add(a.name)
            else:
                module = _resolve(current, node)
                if module.split(".")[0] != "dpjax":
                    continue
                add(module)
                for a in node.names:
                    if f"{module}.{a.name}" in sources:
                        add(f"{module}.{a.name}")
                    elif (current + ".").startswith(module + ".") and module != current:
                        edges.add(module)  # a name from an enclosing package's body
        graph[current] = edges
    state, stack = {}, []

    def visit(name):
        state[name] = "open"
        stack.append(name)
        for nxt in sorted(graph.get(name, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[name] = "done"
        stack.pop()
        return None

    for name in sorted(graph):
        if name not in state and (cycle := visit(name)):
            return cycle
    return None


def test_function_local_imports_say_why():
    bad = uncommented_local_imports()
    assert not bad, (
        "function-local imports without '# cycle: a <-> b' or '# deferred: dep (why)' (hoist "
        "them to the module top unless they break a cycle or defer a heavy/optional "
        f"dependency): {bad}"
    )


def test_few_private_names_cross_modules():
    found = private_cross_module_uses()
    assert len(found) <= MAX_PRIVATE, (
        f"{len(found)} uses of another module's private name (at most {MAX_PRIVATE}; make the "
        "helper public in its module): " + "; ".join(found)
    )


def cli_start_heavy_imports(sources=SOURCES) -> list[str]:
    """Module-level imports of JAX in dpjax/cli/ and the other modules of the CLI start."""
    paths = sorted((PACKAGE / "cli").glob("*.py")) + [PACKAGE / name for name in LIGHT]
    bad = []
    for name in map(_module_name, paths):
        for node in _module_level_imports(_parse(sources[name]).body):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""]
            bad += [f"{name}:{node.lineno} {n}" for n in names if n.split(".")[0] in HEAVY]
    return bad


def test_cli_start_imports_no_jax_at_module_level():
    bad = cli_start_heavy_imports()
    assert not bad, f"the CLI start would import JAX (import it in the command): {bad}"


def module_level_scipy_imports(sources=SOURCES) -> list[str]:
    """Module-level imports of SciPy anywhere in dpjax: SciPy is named through
    :mod:`dpjax.numerics.lazy_scipy` (imported on first use, not on import)."""
    bad = []
    for name, source in sources.items():
        for node in _module_level_imports(_parse(source).body):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""]
            bad += [f"{name}:{node.lineno} {n}" for n in names if n.split(".")[0] == "scipy"]
    return bad


def test_no_module_level_scipy_import():
    bad = module_level_scipy_imports()
    assert not bad, f"import SciPy through dpjax.numerics.lazy_scipy (0.3 s a process): {bad}"


def test_no_module_level_import_cycle():
    cycle = import_cycle()
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_checks_can_fail():
    """Each check flags made-up modules that break it."""
    bare = "def f():\n    import jax\n"
    noted = "def f():\n    # deferred: jax (why)\n    import jax\n    import numpy\n"
    assert uncommented_local_imports({"dpjax.m": bare}) == ["dpjax.m:2"]
    assert uncommented_local_imports({"dpjax.m": noted}) == []
    private = ("from dpjax.noise._base import sample_dtype\nimport dpjax.numerics._exact\n"
               "from dpjax.numerics import roots\nroots._x\n")
    found = private_cross_module_uses({**SOURCES, "dpjax.inid.m": private})
    assert len(found) == len(private_cross_module_uses()) + 3
    inside = "from dpjax.noise._base import sample_dtype\n"  # _base is dpjax.noise's own
    assert private_cross_module_uses({"dpjax.noise.m": inside}) == []
    fold = "dpjax.accounting.pld.tilted.fold"
    cyclic = {**SOURCES, fold: SOURCES[fold] + "from dpjax.accounting.pld import engine\n"}
    assert import_cycle(cyclic) is not None
    light = {**SOURCES, "dpjax.cli._main": SOURCES["dpjax.cli._main"] + "import jax\n"}
    assert cli_start_heavy_imports(light)
    eager = {"dpjax.m": "from scipy import special\nimport scipy.linalg\n"}
    assert module_level_scipy_imports(eager) == ["dpjax.m:1 scipy", "dpjax.m:2 scipy.linalg"]
