"""The tour and debugging notebooks in JupyterLab, in headless Chromium, as a user runs them.

For each notebook in TARGETS: open it (a temp copy of notebooks/), Run > Run All Cells, wait
for the kernel, then check what a person would look at: every cell ran, no output area shows
an error, a graph widget drew its SVG nodes and a click on one fills the details panel, and
dragging a gradient-check slider redraws its plot. Screenshots: test-artifacts/browser/.

Selectors live in TARGETS (and TV_ERRORS); they follow tapeviz/static/graph_widget.js and
tapeviz/widgets/gradcheck_widget.py as they stand.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from lab_harness import (
    drag_slider,
    image_srcs,
    open_notebook,
    run_all_cells,
    screenshot,
    unexecuted_cells,
    widget_errors,
)
from nbenv import NOTEBOOKS_DIR

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

# tapeviz's own in-place error areas (besides role="alert" boxes, which widget_errors finds)
TV_ERRORS = (".tv-graph .tv-error",)


@dataclass(frozen=True)
class Target:
    """What to check in one notebook. A selector left None skips that check.

    graph: a GraphWidget's root (inside an output area); its first match is used.
    node: a clickable node inside ``graph``.
    node_index: which node to click.
    details: the details panel filled after the click (must show text it did not show).
    slider_box: a widget holding a slider and the <img> plot it redraws (GradCheckWidget).
    slider: the slider inside ``slider_box`` to drag.
    """

    notebook: str
    graph: str | None = ".tv-graph"
    node: str = ".tv-canvas svg g.node"
    node_index: int = 0
    details: str | None = ".tv-panel"
    slider_box: str | None = None
    slider: str = ".widget-slider"


GRADCHECK = ".widget-vbox:has(> .widget-image):has(.widget-slider)"
TARGETS = [
    Target("01_tour.ipynb"),
    Target("07_debugging.ipynb", slider_box=GRADCHECK),
]


@pytest.mark.parametrize("target", TARGETS, ids=[t.notebook for t in TARGETS])
def test_notebook_in_lab(target, lab_server, lab_page):
    path = NOTEBOOKS_DIR / target.notebook
    assert path.exists(), f"{path} does not exist: the browser test checks it"
    page, started, stem = lab_page, time.monotonic(), Path(target.notebook).stem
    open_notebook(page, lab_server, target.notebook)
    ran = run_all_cells(page)
    screenshot(page, f"{stem}-1-run-all")
    assert unexecuted_cells(page) == [], f"{target.notebook}: Run All stopped early"
    assert widget_errors(page, TV_ERRORS) == []
    if target.graph:
        check_graph_click(page, target, stem)
    if target.slider_box:
        check_slider_redraws(page, target, stem)
    assert widget_errors(page, TV_ERRORS) == []
    print(f"{target.notebook}: run all {ran:.1f} s, test {time.monotonic() - started:.1f} s")


def check_graph_click(page, target: Target, stem: str) -> None:
    graph = page.locator(f".jp-OutputArea-output {target.graph}").first
    graph.wait_for(timeout=15_000)
    nodes = graph.locator(target.node)
    assert nodes.count() > 0, f"{target.notebook}: the graph widget drew no {target.node!r}"
    node = nodes.nth(target.node_index)
    node.scroll_into_view_if_needed()
    if target.details is None:
        node.click()
        return
    panel = graph.locator(target.details)
    before = panel.inner_text()
    node.click()
    page.wait_for_function(
        "([el, text]) => el.innerText !== text && el.innerText.trim() !== ''",
        arg=[panel.element_handle(), before],
        timeout=15_000,
    )
    screenshot(page, f"{stem}-2-node-clicked")


def check_slider_redraws(page, target: Target, stem: str) -> None:
    box = page.locator(f".jp-OutputArea-output {target.slider_box}").first
    box.wait_for(timeout=15_000)
    before = image_srcs(box)
    assert before, f"{target.notebook}: no plot image in {target.slider_box!r}"
    drag_slider(page, box.locator(target.slider).first, 0.25)
    page.wait_for_function(
        "([el, srcs]) => Array.from(el.querySelectorAll('img')).some((i, k) => i.src !== srcs[k])",
        arg=[box.element_handle(), before],
        timeout=30_000,
    )
    screenshot(page, f"{stem}-3-slider-moved")
