"""Execute every notebooks/*.ipynb top to bottom, as a user running "Run All" would.

Conventions a notebook follows (see README "Testing"):

* it runs without error from a fresh kernel, with notebooks/ as the working directory; a cell
  meant to show an error carries the tag ``raises-exception``;
* it checks its own key results with ``assert`` statements (at least one);
* it shows at least one picture or widget (SVG, PNG, HTML or a widget view).

Each executed copy is written to test-artifacts/notebooks/ for inspection.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbenv import ARTIFACTS_DIR, KERNEL_NAME, NOTEBOOKS_DIR, jupyter_env, write_kernelspec

CELL_TIMEOUT = int(os.environ.get("TAPEVIZ_NB_CELL_TIMEOUT", "300"))
NOTEBOOK_TIMEOUT = int(os.environ.get("TAPEVIZ_NB_TIMEOUT", "600"))
RICH_MIME = (
    "image/svg+xml",
    "image/png",
    "text/html",
    "application/vnd.jupyter.widget-view+json",
)
ASSERT_LINE = re.compile(r"^\s*assert\b", re.MULTILINE)


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """Point the "python3" kernel at this interpreter for the whole module."""
    root = write_kernelspec(tmp_path_factory.mktemp("jupyter"))
    with pytest.MonkeyPatch.context() as mp:
        for key, value in jupyter_env(root).items():
            mp.setenv(key, value)
        yield root


def execute_notebook(path: Path, cwd: Path, out: Path | None = None):
    """Run ``path`` top to bottom in a fresh "python3" kernel with working directory ``cwd``.

    Args:
        path: the notebook.
        cwd: the kernel's working directory.
        out: where to write the executed copy (also when a cell fails); None: nowhere.

    Returns:
        The executed notebook (a ``nbformat.NotebookNode``).

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised; the message holds the cell's
            source and the traceback.
    """
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(cwd)}},
    )
    try:
        client.execute()
    finally:
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, out)
    return nb


def rich_outputs(nb) -> list[tuple[int, str]]:
    """``(cell index, mime type)`` of every picture, HTML or widget view in ``nb``'s outputs."""
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            for mime in output.get("data", {}):
                if mime in RICH_MIME:
                    found.append((index, mime))
    return found


def assert_count(nb) -> int:
    """How many ``assert`` statements the notebook's code cells hold."""
    return sum(len(ASSERT_LINE.findall(c.source)) for c in nb.cells if c.cell_type == "code")


def notebook_params():
    paths = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
    if not paths:
        return [pytest.param(None, id="no-notebooks")]
    return [pytest.param(p, id=p.name) for p in paths]


@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
@pytest.mark.parametrize("path", notebook_params())
def test_notebook(path, kernel_env):
    assert path is not None, f"no notebooks found: expected notebooks/*.ipynb in {NOTEBOOKS_DIR}"
    asserts = assert_count(nbformat.read(path, as_version=4))
    assert asserts, f"{path.name}: expected at least one `assert` checking its results, found 0"
    started = time.perf_counter()
    try:
        nb = execute_notebook(path, NOTEBOOKS_DIR, ARTIFACTS_DIR / "notebooks" / path.name)
    except CellExecutionError as exc:
        pytest.fail(f"{path.name} failed (executed copy in test-artifacts/notebooks/):\n{exc}")
    print(f"{path.name}: ran in {time.perf_counter() - started:.1f} s, {asserts} asserts")
    assert rich_outputs(nb), (
        f"{path.name}: expected at least one output of {', '.join(RICH_MIME)}, found none"
    )


# -- the runner itself, on notebooks made here -------------------------------------------------


def _write(tmp_path: Path, *sources: str, tags: dict[int, list[str]] | None = None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    for index, cell_tags in (tags or {}).items():
        nb.cells[index].metadata["tags"] = cell_tags
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    return path


def test_runner_uses_this_python_and_cwd(tmp_path, kernel_env):
    import sys

    path = _write(
        tmp_path,
        "import os, sys\nprint(sys.executable)\nprint(os.getcwd())",
        "from IPython.display import SVG\nSVG('<svg xmlns=\"http://www.w3.org/2000/svg\"/>')",
        "import ipywidgets\nipywidgets.IntSlider(3)",
    )
    nb = execute_notebook(path, tmp_path)
    lines = nb.cells[0].outputs[0].text.split()
    assert lines == [sys.executable, str(tmp_path)]
    assert [m for _, m in rich_outputs(nb)] == [
        "image/svg+xml",
        "application/vnd.jupyter.widget-view+json",
    ]
    assert nb.metadata["widgets"]  # widget state is stored, so a saved notebook renders it


def test_runner_fails_on_error_naming_the_cell(tmp_path, kernel_env):
    path = _write(tmp_path, "x = 1", "assert x == 2, 'x is not two'")
    out = tmp_path / "executed.ipynb"
    with pytest.raises(CellExecutionError, match="x is not two") as info:
        execute_notebook(path, tmp_path, out)
    assert "assert x == 2" in str(info.value)
    assert nbformat.read(out, as_version=4).cells[1].outputs[0].output_type == "error"


def test_runner_allows_tagged_error_cells(tmp_path, kernel_env):
    path = _write(tmp_path, "1 / 0", "assert True", tags={0: ["raises-exception"]})
    nb = execute_notebook(path, tmp_path)
    assert nb.cells[0].outputs[0].ename == "ZeroDivisionError"
    assert rich_outputs(nb) == [] and assert_count(nb) == 1
