"""The widgets where people open notebooks (issue 23): Jupyter Notebook 7 as JupyterLab.

One notebook written here holds a GraphWidget, a BackpropStepper, a GradCheckWidget and a
MemoryInspector on one tape. In Notebook 7 (``notebook`` on PyPI) and in JupyterLab, headless
Chromium at 1400x1000: Run All, every widget draws (no error, no empty area), then one
control of each is used as a person would and the view must change: a click on a graph node
fills the details panel (a round trip to the kernel), the stepper's "next step" marks the
next op, the gradient check's x slider (arrow key) redraws the plots, a click on a row of the
memory inspector shows that row. Screenshots: test-artifacts/browser/nb7-*.png, lab-*.png.
"""

from __future__ import annotations

import pytest
from browser_measure import latencies
from lab_harness import (
    NOTEBOOK7_OWN_ERRORS,
    SMALL_TAPE_CELL,
    code_cell,
    code_cells_notebook,
    open_kernel,
    run_all_cells,
    screenshot,
    unexecuted_cells,
    widget_errors,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

NOTEBOOK = "four_widgets.ipynb"
CELLS = [
    "import numpy as np\nimport tapeviz as tv\n" + SMALL_TAPE_CELL,
    "graph = tv.GraphWidget(tape)\ngraph",
    "stepper = tv.BackpropStepper(tape)\nstepper",
    "check = tv.GradCheckWidget(lambda x: tv.tanh(x) * x, np.array([0.5]))\ncheck",
    "memory = tv.MemoryInspector(tape)\nmemory",
]
GRAPH, STEPPER, GRADCHECK, MEMORY = range(1, 5)

# what changes when each control is used: a JS expression of the widget's output area
PANEL_SNAP = "root.querySelector('.tv-panel').textContent"
CURRENT_SNAP = (
    "(Array.from(root.querySelectorAll('.tv-canvas g.node'))"
    ".find((g) => g.textContent.includes('current')) || {}).id"
    " + '|' + (root.querySelector('.tv-stepper') || root).textContent"
)
GC_SNAP = "root.querySelector('.tv-gc-grid').innerHTML"
MEM_SNAP = (
    "Array.from(root.querySelectorAll('.tv-mem-detail, .widget-html-content'))"
    ".map((e) => e.textContent).join('|')"
)


@pytest.fixture(scope="module")
def lab_notebooks_dir(tmp_path_factory):
    return code_cells_notebook(tmp_path_factory, "nb7", NOTEBOOK, CELLS)


def _output(page, i):
    return code_cell(page, i).locator(".jp-OutputArea-output").first


def _memory_rows(mem) -> list:
    if mem.locator(".tv-mem-table").count():
        return [("click", ".tv-mem-table tbody tr@@1"), ("click", ".tv-mem-table tbody tr@@2")]
    return [("select:1", "select"), ("select:2", "select")]


def _use_each_widget(page, server, front: str) -> dict:
    open_kernel(page, server, NOTEBOOK)
    run_all_cells(page)
    assert unexecuted_cells(page) == [], f"{front}: Run All stopped early"
    for i, part in ((GRAPH, ".tv-graph svg g.node"), (STEPPER, ".tv-canvas svg g.node"),
                    (GRADCHECK, ".tv-gc-grid svg"), (MEMORY, ".tv-mem")):  # fmt: skip
        _output(page, i).locator(part).first.wait_for(timeout=60_000)
    ignore = NOTEBOOK7_OWN_ERRORS if server.app == "notebook" else ()
    assert widget_errors(page, (".tv-graph .tv-error",), ignore) == [], front
    screenshot(page, f"{front}-four-widgets")
    graph, stepper = _output(page, GRAPH), _output(page, STEPPER)
    gc, mem = _output(page, GRADCHECK), _output(page, MEMORY)
    ms = {
        "graph: click a node -> details": latencies(
            page,
            graph,
            [("click", ".tv-canvas g.node@@1"), ("click", ".tv-canvas g.node@@2")],
            PANEL_SNAP,
            2,
            gap=500,
        ),  # fmt: skip
        "stepper: next step": latencies(
            page, stepper, [("click", "button[title='next step']")], CURRENT_SNAP, 2, gap=500
        ),
        "gradcheck: x slider step": latencies(
            page,
            gc,
            [("ArrowRight", ".noUi-handle@@0"), ("ArrowLeft", ".noUi-handle@@0")],
            GC_SNAP,
            2,
            gap=500,
        ),  # fmt: skip
        "memory: select a row": latencies(page, mem, _memory_rows(mem), MEM_SNAP, 2, gap=1000),
    }
    panel = graph.locator(".tv-panel").inner_text()
    assert "kernel" in panel or "role" in panel, f"{front}: the details panel says {panel!r}"
    screenshot(page, f"{front}-four-widgets-used")
    assert widget_errors(page, (".tv-graph .tv-error",), ignore) == [], front
    return ms


def test_four_widgets_respond_in_notebook7(notebook7_server, lab_page):
    ms = _use_each_widget(lab_page, notebook7_server, "nb7")
    print("Notebook 7, ms to a changed view:", ms)


def test_four_widgets_respond_in_jupyterlab(lab_server, lab_page):
    ms = _use_each_widget(lab_page, lab_server, "lab")
    print("JupyterLab, ms to a changed view:", ms)
