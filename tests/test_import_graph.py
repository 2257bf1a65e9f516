"""The import graph of the engine (``core/``) and the widgets (``tapeviz/``): no cycle,
hidden or not, and no private name imported across modules.

Every import counts, including one placed inside a function: such an import only hides a
cycle from Python (it runs later), not from a reader, who still has to know both modules to
follow either. ``core`` is layered instead: ``tracing``, ``recording`` -> ``tensor`` ->
``grad_validation``, ``primitive`` -> ``registry`` -> ``engine`` -> ``ops`` -> ``backward``,
``tape`` -> ``gradients``, ``custom``, ``check``, ``nn``, ``jit``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "tapeviz")  # tapeviz.core is core/ (installed under tapeviz)


def _modules() -> dict[str, Path]:
    mods = {}
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*.py"):
            parts = [top, *path.relative_to(ROOT / top).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = path
    return mods


def _imports(mod: str, path: Path, mods: dict):
    """(imported core module, imported name or None, line) for each import in ``mod``,
    except those under ``if TYPE_CHECKING:`` (never run)."""
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in mods:
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.startswith("tapeviz.core"):
                base = base.removeprefix("tapeviz.")
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in mods else base
                if target in mods:
                    yield target, None if full in mods else alias.name, node.lineno


def _graph(mods=None):
    mods = mods or _modules()
    edges = {m: set() for m in mods}
    private = []
    for mod, path in mods.items():
        for target, name, line in _imports(mod, path, mods):
            if target != mod:
                edges[mod].add(target)
            if name and name.startswith("_") and not name.startswith("__") and target != mod:
                private.append(f"{mod}:{line} imports {name} from {target}")
    return edges, private


def _cycles(edges) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_even_through_imports_inside_functions():
    edges, _ = _graph()
    assert _cycles(edges) == []


def test_no_private_name_is_imported_across_modules():
    _, private = _graph()
    assert private == []


def test_the_checks_can_fail(tmp_path):
    """A module planted beside the real ones, importing inside a function the engine (which
    imports it back) and a private name, is caught by both checks."""
    planted = tmp_path / "planted.py"
    planted.write_text("from .tensor import _secret\n\ndef f():\n    from . import engine\n")
    mods = _modules() | {"core.planted": planted}
    edges, private = _graph(mods)
    edges["core.engine"].add("core.planted")  # as if the engine imported it
    assert ["core.engine", "core.planted"] in _cycles(edges)
    assert "core.planted:1 imports _secret from core.tensor" in private
