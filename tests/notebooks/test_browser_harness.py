"""The browser harness itself, on notebooks written here with plain ipywidgets and anywidget.

Proves, in this JupyterLab: widgets render (ipywidgets 8 and anywidget front ends), a click
in an anywidget's SVG reaches Python and comes back (the GraphWidget pattern: traits
``svg``, ``selected``, ``details``), dragging a slider redraws an Image (the GradCheckWidget
pattern), and :func:`widget_errors` sees errors. Screenshots: test-artifacts/browser/.
"""

from __future__ import annotations

import time

import nbformat
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

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

GRAPH_CELL = r'''
import io

import anywidget
import ipywidgets as W
import numpy as np
import traitlets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

KERNELS = {"node1": "Placeholder x", "node2": "Tanh", "node3": "Sum"}
SVG = "<svg xmlns='http://www.w3.org/2000/svg' width='300' height='60'>" + "".join(
    f"<g id='{i}' class='node'><title>{k}</title>"
    f"<rect x='{10 + 95 * n}' y='10' width='80' height='40' fill='#56B4E9'/>"
    f"<text x='{20 + 95 * n}' y='35'>{k.split()[0]}</text></g>"
    for n, (i, k) in enumerate(KERNELS.items())
) + "</svg>"


class ProbeGraph(anywidget.AnyWidget):
    _esm = """
    function render({ model, el }) {
      el.classList.add("probe-graph");
      const canvas = document.createElement("div");
      canvas.className = "probe-canvas";
      const details = document.createElement("pre");
      details.className = "probe-details";
      el.append(canvas, details);
      const draw = () => {
        canvas.innerHTML = model.get("svg");
        canvas.querySelectorAll("g.node").forEach((g) => g.addEventListener("click", () => {
          model.set("selected", g.id);
          model.save_changes();
        }));
      };
      const show = () => { details.textContent = model.get("details"); };
      model.on("change:svg", draw);
      model.on("change:details", show);
      draw();
      show();
    }
    export default { render };
    """
    svg = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Unicode("").tag(sync=True)

    @traitlets.observe("selected")
    def _show_details(self, change):
        self.details = f"{change['new']}: {KERNELS[change['new']]}"


graph = ProbeGraph(svg=SVG)
graph
'''

SLIDER_CELL = r"""
def plot_png(k):
    fig = Figure(figsize=(3, 2), dpi=60)
    FigureCanvasAgg(fig)
    x = np.linspace(-3, 3, 50)
    fig.add_subplot().plot(x, np.tanh(k * x))
    buf = io.BytesIO()
    fig.canvas.print_png(buf)
    return buf.getvalue()


slider = W.IntSlider(value=1, min=1, max=10, description="k")
image = W.Image(value=plot_png(1), format="png", layout=W.Layout(width="240px"))
slider.observe(lambda c: setattr(image, "value", plot_png(c["new"])), names="value")
W.VBox([image, slider], layout=W.Layout(width="400px"))
"""

HTML_CELL = """W.HTML("<svg class='probe-html-svg' width='40' height='20'><rect width='40' height='20'/></svg>")"""
CHECK_CELL = """assert graph.svg.count("class='node'") == 3 and slider.value == 1"""

BROKEN_CELLS = [
    """import anywidget

class Broken(anywidget.AnyWidget):
    _esm = "export default { render() { throw new Error('probe render failure'); } };"

Broken()""",
    "print('before')",
    "raise ValueError('probe cell failure')",
    "print('never runs')",
]


def _notebook(path, cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source.strip()) for source in cells]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def lab_notebooks_dir(tmp_path_factory):
    """Serve two notebooks written here instead of the repo's notebooks/."""
    root = tmp_path_factory.mktemp("probe-notebooks")
    _notebook(root / "probe.ipynb", [GRAPH_CELL, SLIDER_CELL, HTML_CELL, CHECK_CELL])
    _notebook(root / "broken.ipynb", BROKEN_CELLS)
    return root


def test_widgets_render_click_and_redraw(lab_server, lab_page):
    page, started = lab_page, time.monotonic()
    open_notebook(page, lab_server, "probe.ipynb")
    ran = run_all_cells(page)
    screenshot(page, "harness-after-run-all")
    assert unexecuted_cells(page) == []
    assert widget_errors(page) == []

    graph = page.locator(".jp-OutputArea-output .probe-graph")
    nodes = graph.locator("svg g.node")
    assert nodes.count() == 3, "the anywidget's SVG did not render its nodes"
    nodes.nth(1).click()
    details = graph.locator(".probe-details")
    details.filter(has_text="node2: Tanh").wait_for(timeout=10_000)  # Python answered the click

    box = page.locator(".jp-OutputArea-output .widget-vbox").filter(
        has=page.locator(".widget-slider")
    )
    before = image_srcs(box)
    assert len(before) == 1
    drag_slider(page, box.locator(".widget-slider"), 0.5)
    page.wait_for_function(
        "([el, src]) => el.querySelector('img').src !== src",
        arg=[box.element_handle(), before[0]],
        timeout=10_000,
    )
    assert box.locator(".widget-readout").inner_text() != "1"
    assert page.locator(".widget-html svg.probe-html-svg rect").count() == 1
    screenshot(page, "harness-after-click-and-drag")
    assert widget_errors(page) == [] and page.console_errors == []
    print(f"probe.ipynb: run all {ran:.1f} s, whole test {time.monotonic() - started:.1f} s")


def test_widget_errors_reports_what_a_user_sees(lab_server, lab_page):
    page = lab_page
    open_notebook(page, lab_server, "broken.ipynb")
    run_all_cells(page)
    screenshot(page, "harness-broken")
    errors = widget_errors(page)
    assert len(errors) == 3, errors
    assert sum(e.startswith("empty widget area") for e in errors) == 1, errors
    assert sum("ValueError: probe cell failure" in e for e in errors) == 1, errors
    assert "uncaught in the browser: probe render failure" in errors
    assert unexecuted_cells(page) == [3]  # Run All stops at the failing cell
    assert any("probe render failure" in e for e in page.console_errors), page.console_errors
