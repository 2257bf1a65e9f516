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
            hidden = [p for p in target.split(".") if p.startswith("_") and not p.startswith("__")]
            if hidden and target != mod:
                private.append(f"{mod}:{line} imports the private module {target}")
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
    imports it back), a private name and a private module, is caught by both checks."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from .memory import _secret\n\ndef f():\n    from . import engine\n"
        "    from .backends.numba import _hidden\n"
    )
    hidden = tmp_path / "_hidden.py"
    hidden.write_text("")
    mods = _modules() | {"core.planted": planted, "core.backends.numba._hidden": hidden}
    edges, private = _graph(mods)
    edges["core.engine"].add("core.planted")  # as if the engine imported it
    assert ["core.engine", "core.planted"] in _cycles(edges)
    assert "core.planted:1 imports _secret from core.memory" in private
    assert "core.planted:5 imports the private module core.backends.numba._hidden" in private


# --- the house rules of issue 36: measured from the files --------------------------------


def _module_names(path: Path, mod: str, mods: dict) -> set[str]:
    """The local names ``mod`` binds to modules of core or tapeviz (``from . import ops as
    o``, ``import tapeviz.core.x as x``)."""
    bound = set()
    for target, name, _line in _imports(mod, path, mods):
        if name is None:
            bound.add(target.rsplit(".", 1)[-1])
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        for alias in (
            getattr(node, "names", ()) if isinstance(node, ast.ImportFrom | ast.Import) else ()
        ):
            if alias.asname:
                full = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                if any(full.endswith(m.rsplit(".", 1)[-1]) for m in mods):
                    bound.add(alias.asname)
    bound.add("sys")  # sys.modules[...].x = ... reaches any module
    return bound


def _into_module(t, names) -> bool:
    """``module.x = ``, ``module.x[i] = `` or ``sys.modules[name].x = `` (not an attribute
    of an object a module holds, such as ``engine.settings.record_source``)."""
    if isinstance(t, ast.Subscript):
        t = t.value
    if not isinstance(t, ast.Attribute):
        return False
    v = t.value
    if isinstance(v, ast.Name):
        return v.id in names
    return isinstance(v, ast.Subscript) and ast.unparse(v.value) == "sys.modules"


def _assignments_into_modules(mods=None) -> list[str]:
    """Each statement that assigns to an attribute (or item of an attribute) of another
    module, or calls ``setattr`` on one: a layer wired from below at import time."""
    mods = mods or _modules()
    found = []
    for mod, path in mods.items():
        names = _module_names(path, mod, mods)
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in names
            ):
                found.append(f"{mod}:{node.lineno} setattr on module {node.args[0].id}")
            for t in targets:
                if _into_module(t, names):
                    found.append(f"{mod}:{node.lineno} assigns {ast.unparse(t)}")
    return found


def test_no_layer_is_wired_by_assigning_into_another_module():
    """core/__init__.py plugs the value layer's two upward calls in (core.tensors.upward.plug);
    no module reaches into another's globals."""
    assert _assignments_into_modules() == []


def test_the_assignment_check_can_fail(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import sys\nfrom .tensors import operators as _operators\n"
        "_operators._ops = sys.modules[__name__]\nsys.modules['x'].y = 1\n"
        "setattr(_operators, 'z', 2)\n"
    )
    found = _assignments_into_modules(_modules() | {"core.planted": planted})
    assert found == [
        "core.planted:3 assigns _operators._ops",
        "core.planted:4 assigns sys.modules['x'].y",
        "core.planted:5 setattr on module _operators",
    ]


def test_core_top_level_holds_few_modules():
    """The folders are the layers (docs/architecture.md); core/ itself holds the public API
    (``__init__.py``) and the few modules every layer above the value layer shares."""
    top = sorted(p.name for p in (ROOT / "core").glob("*.py"))
    assert len(top) <= 12, top


# the modules outside the value layer (core/tensors) that read a tensor's array by its slot,
# each for a reason: the kernel door and what a tape records (engine), the backward loop,
# elementwise fast paths, and tv.jit's tracer and compiled call. Everything else uses
# ``Tensor.peek()`` (display, no read) or ``numpy()`` (a read).
DATA_READERS = {
    "core.engine.dispatch",
    "core.engine.node",
    "core.autodiff.backward",
    "core.ops.elementwise",
    "core.jit.tracer",
    "core.jit.traced_array",
    "core.jit.compiled",
    "core.jit.function",
}


def _data_readers(mods=None) -> set[str]:
    mods = mods or _modules()
    out = set()
    for mod, path in mods.items():
        if mod.startswith("core.") and not mod.startswith("core.tensors"):
            tree = ast.parse(path.read_text())
            if any(isinstance(n, ast.Attribute) and n.attr == "_data" for n in ast.walk(tree)):
                out.add(mod)
    return out


def test_few_modules_read_a_tensors_data_slot():
    assert _data_readers() == DATA_READERS
    assert len(DATA_READERS) <= 8


def test_the_data_reader_check_can_fail(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f(t):\n    return t._data\n")
    assert "core.planted" in _data_readers(_modules() | {"core.planted": planted})
