"""Every notebook in JupyterLab, in headless Chromium, as a user runs them.

For each notebook in TARGETS: open it (a temp copy of notebooks/), Run > Run All Cells, wait
for the kernel, then check what a person would look at: every cell ran, no output area shows
an error, a graph widget drew its SVG nodes and a click on one fills the details panel, and
dragging a gradient-check slider redraws its plots. Then, as a student keeps reading: 20 s
idle, a node clicked, the stepper stepped, and the same kernel process still runs a new cell
(issue 28: notebook 02 used to lose its kernel 15 s after Run All). Screenshots:
test-artifacts/browser/.

Selectors live in TARGETS (and TV_ERRORS); they follow tapeviz/static/graph/ (the graph view) and
tapeviz/widgets/gradcheck/widget.py as they stand.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from lab_harness import (
    SCREENSHOTS,
    drag_slider,
    idle_click_step_alive,
    open_kernel,
    run_all_cells,
    screenshot,
    traceback_cells,
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
    slider_box: a widget holding a slider and the SVG plots it redraws (GradCheckWidget).
    slider: the slider inside ``slider_box`` to drag.
    stepper: the notebook shows a BackpropStepper (its graph must keep the current node in view).
    """

    notebook: str
    graph: str | None = ".tv-graph"
    node: str = ".tv-canvas svg g.node"
    node_index: int = 0
    details: str | None = ".tv-panel"
    slider_box: str | None = None
    slider: str = ".widget-slider"
    stepper: bool = False


GRADCHECK = ".widget-vbox:has(.tv-gc-plots):has(.widget-slider)"
TARGETS = [
    Target("00_backprop_from_scratch.ipynb", graph=None),  # lesson widgets: test_browser_lesson
    Target("01_tour.ipynb", stepper=True),
    Target("07_debugging.ipynb", slider_box=GRADCHECK),
] + [
    Target(path.name, graph=None)  # the others: they run, show no error, keep their kernel
    for path in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    if path.name not in ("00_backprop_from_scratch.ipynb", "01_tour.ipynb", "07_debugging.ipynb")
]


@pytest.mark.parametrize("target", TARGETS, ids=[t.notebook for t in TARGETS])
def test_notebook_in_lab(target, lab_server, lab_page):
    path = NOTEBOOKS_DIR / target.notebook
    assert path.exists(), f"{path} does not exist: the browser test checks it"
    page, started, stem = lab_page, time.monotonic(), Path(target.notebook).stem
    restarts = lab_server.kernel_restarts()
    pid = open_kernel(page, lab_server, target.notebook)
    ran = run_all_cells(page)
    raising = _raising_cells(path)
    assert set(raising) <= set(traceback_cells(page)), f"{target.notebook}: a refusal did not show"
    screenshot(page, f"{stem}-1-run-all")
    assert unexecuted_cells(page) == [], f"{target.notebook}: Run All stopped early"
    assert widget_errors(page, TV_ERRORS, raising=raising) == []
    if target.graph:
        check_graph_readable(page, target)
        check_graph_click(page, target, stem)
    if target.stepper:
        check_stepper_follows_current(page, stem)
    if target.slider_box:
        check_slider_redraws(page, target, stem)
    assert widget_errors(page, TV_ERRORS, raising=raising) == []
    idle_click_step_alive(page, lab_server, pid, restarts)
    print(f"{target.notebook}: run all {ran:.1f} s, test {time.monotonic() - started:.1f} s")


def _raising_cells(path: Path) -> tuple[int, ...]:
    """Cells that show an error on purpose (tagged ``raises-exception``, as 09's refusals);
    each must show one, and no other cell may."""
    nb = nbformat.read(path, as_version=4)
    return tuple(
        i for i, c in enumerate(nb.cells) if "raises-exception" in c.metadata.get("tags", [])
    )


def check_graph_click(page, target: Target, stem: str) -> None:
    graph = page.locator(f".jp-OutputArea-output {target.graph}").first
    graph.wait_for(timeout=15_000)
    nodes = graph.locator(target.node)
    assert nodes.count() > 0, f"{target.notebook}: the graph widget drew no {target.node!r}"
    # the widget may open on part of a graph (the output and its neighbourhood, issue 23):
    # click the first node from ``node_index`` on whose centre the viewport shows it
    index = graph.evaluate(
        """(root, [sel, start]) => {
          const port = (root.querySelector('.tv-viewport') || root).getBoundingClientRect();
          const all = Array.from(root.querySelectorAll(sel));
          const inside = (g) => { const r = g.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            return x > port.left && x < port.right && y > port.top && y < port.bottom; };
          const k = all.findIndex((g, i) => i >= start && inside(g));
          return k < 0 ? start : k;
        }""",
        [target.node, target.node_index],
    )
    node = nodes.nth(index)
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


# the GraphWidget's SVG as drawn: its scale, and its on-screen width against its own width
SCALE_JS = """(root) => {
  const canvas = root.querySelector('.tv-canvas'), svg = canvas.querySelector('svg');
  const view = root.querySelector('.tv-viewport').getBoundingClientRect();
  const scale = Number((canvas.style.transform.match(/scale\\(([\\d.]+)\\)/) || [])[1]);
  const natural = svg.width.baseVal.value, drawn = svg.getBoundingClientRect().width;
  return {scale, ratio: drawn / (natural * scale), fits: natural * scale <= view.width};
}"""


def check_graph_readable(page, target: Target) -> None:
    """The graph opens at a legible scale (>= 0.7, or whole when it fits at that), and the
    host page's CSS (JupyterLab's max-width: 100%) does not shrink the SVG behind it."""
    graph = page.locator(f".jp-OutputArea-output {target.graph}").first
    graph.locator("svg g.node").first.wait_for(timeout=15_000)
    got = graph.evaluate(SCALE_JS)
    assert abs(got["ratio"] - 1) < 0.02, f"{target.notebook}: the SVG is resized: {got}"
    assert got["scale"] >= 0.7 or got["fits"], f"{target.notebook}: unreadable scale: {got}"


# is the node marked "current" inside its viewport? (per GraphWidget in the notebook)
CURRENT_JS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-output .tv-viewport'))
  .map((vp) => {
    const g = Array.from(vp.querySelectorAll('g.node'))
      .find((n) => n.textContent.includes('current'));
    if (!g) return null;
    const v = vp.getBoundingClientRect(), r = g.getBoundingClientRect();
    return r.left >= v.left - 1 && r.right <= v.right + 1 && r.top >= v.top - 1
      && r.bottom <= v.bottom + 1;
  }).filter((x) => x !== null)"""


def check_stepper_follows_current(page, stem: str) -> None:
    """The stepper's graph pans to the current node, at the first step and after "next"."""
    assert page.evaluate(CURRENT_JS) == [True], "the stepper's current node is out of view"
    stepper = page.locator(".jp-OutputArea-output .widget-vbox:has(.tv-graph):has(button)")
    stepper.locator("button:has-text('last')").first.click()
    page.wait_for_timeout(1500)
    assert page.evaluate(CURRENT_JS) == [True], "after 'last' the current node is out of view"
    stepper.first.screenshot(path=str(SCREENSHOTS / f"{stem}-4-stepper-last.png"))


def check_slider_redraws(page, target: Target, stem: str) -> None:
    box = page.locator(f".jp-OutputArea-output {target.slider_box}").first
    box.wait_for(timeout=15_000)
    plots = box.locator(".tv-gc-plots svg")
    assert plots.count() >= 3, f"{target.notebook}: no plots in {target.slider_box!r}"
    before = box.locator(".tv-gc-plots").inner_html()
    drag_slider(page, box.locator(target.slider).first, 0.25)
    page.wait_for_function(
        "([el, html]) => el.querySelector('.tv-gc-plots').innerHTML !== html",
        arg=[box.element_handle(), before],
        timeout=30_000,
    )
    screenshot(page, f"{stem}-3-slider-moved")
