"""tv.show_code in JupyterLab (headless Chromium): the generated forward and backward,
syntax-highlighted in the theme's editor colours, beside the graph of the same trace;
pointing at a line outlines its node in the graph, pointing at a node lights its lines
(jslink: in the browser, no round trip through the kernel).

Screenshots go to test-artifacts/browser/code-*.png.
"""

from __future__ import annotations

import pytest
from lab_harness import (
    code_cell,
    code_cells_notebook,
    open_notebook,
    run_all_cells,
    shot,
    unexecuted_cells,
    widget_errors,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

NOTEBOOK = "code.ipynb"
CELLS = [
    "import tapeviz as tv\n"
    "x = tv.tensor([0.5, -1.0, 2.0], name='x')\n"
    "def loss(x):\n"
    "    h = tv.tanh(x * 2.0)\n"
    "    return tv.sum(h * h)\n"
    "view = tv.show_code(tv.grad(loss), x)\n"
    "view",
]

# the rows of the code view and the pointed nodes of the graph, read from the DOM
STATE_JS = """(root) => {
  const rows = Array.from(root.querySelectorAll('.tv-code .tv-row')).map((r) => ({
    text: r.innerText, node: r.dataset.node || '', pointed: r.classList.contains('tv-pointed')}));
  const pointed = Array.from(root.querySelectorAll('.tv-graph g.node.tv-pointed'))
    .map((g) => g.querySelector('title').textContent);
  const kw = root.querySelector('.tv-code span.k');
  const name = root.querySelector('.tv-code span.n');
  return {rows, pointed, nodes: root.querySelectorAll('.tv-graph g.node').length,
          kwColor: kw && getComputedStyle(kw).color, nameColor: name && getComputedStyle(name).color};
}"""


@pytest.fixture(scope="module")
def lab_notebooks_dir(tmp_path_factory):
    return code_cells_notebook(tmp_path_factory, "lab-code", NOTEBOOK, CELLS)


def _state(out) -> dict:
    return out.evaluate(STATE_JS)


def _until(page, out, cond, timeout=20.0) -> dict:
    for _ in range(int(timeout * 10)):
        state = _state(out)
        if cond(state):
            return state
        page.wait_for_timeout(100)
    return _state(out)


def test_code_and_graph_point_at_each_other(lab_server, lab_page):
    page = lab_page
    open_notebook(page, lab_server, NOTEBOOK)
    run_all_cells(page)
    assert unexecuted_cells(page) == []
    assert widget_errors(page, (".tv-graph .tv-error",)) == []
    out = code_cell(page, 0).locator(".jp-OutputArea-output").first
    out.locator(".tv-code .tv-row").first.wait_for(timeout=60_000)
    out.locator(".tv-graph svg g.node").first.wait_for(timeout=60_000)
    state = _state(out)
    texts = [r["text"] for r in state["rows"]]
    assert texts[0].startswith("def grad_loss(x):")
    assert any("h = Tanh(" in t for t in texts) and any("TanhGrad(" in t for t in texts)
    assert state["kwColor"] and state["kwColor"] != state["nameColor"]  # highlighted
    shot(out, "code-view")

    # a code line -> its node in the graph
    row = out.locator(".tv-code .tv-row", has_text="h = Tanh(").first
    node = row.get_attribute("data-node")
    assert node
    row.hover()
    state = _until(page, out, lambda s: s["pointed"])
    assert state["pointed"] == [node], state["pointed"]
    assert [r["node"] for r in state["rows"] if r["pointed"]] == [node]
    shot(out, "code-line-points-at-node")

    # a backward node in the graph -> its line in the code
    backward = next(r for r in state["rows"] if "TanhGrad(" in r["text"])
    page.mouse.move(0, 0)
    _until(page, out, lambda s: not s["pointed"])
    out.locator(f".tv-graph svg g.node:has(> title:text-is('{backward['node']}'))").hover()
    state = _until(page, out, lambda s: any(r["pointed"] for r in s["rows"]))
    lit = [r["text"] for r in state["rows"] if r["pointed"]]
    assert lit and all("TanhGrad(" in t for t in lit), lit
    shot(out, "code-node-points-at-line")
    assert page.page_errors == [], page.page_errors
