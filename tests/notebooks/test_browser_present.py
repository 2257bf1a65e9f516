"""Presenting: the ask stepper under ``tapeviz.teach.presentation()`` on a 1280×800 screen,
and the notebook as jupyterlab-rise slides.

Before: ``presentation()`` cut the buttons to "ch…" and "sh…", zoomed the graph past the
output's edge and left the question at 13 px. Now every button shows its whole word, the
question is large and the graph fits the output's width. RISE: each cell tagged
``slide`` is a slide, its math typeset with assistive MathML. (In RISE's page the ipywidgets manager fails to load — the open
jupyterlab-contrib/rise issue #119, ipywidgets ≥ 8 — so a widget shows its static picture
there; the live stepper is presented from JupyterLab.) Screenshots: test-artifacts/browser/
present-*.png.
"""

from __future__ import annotations

import nbformat
import pytest
from lab_harness import code_cell, open_notebook, run_all_cells, screenshot, unexecuted_cells

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

NOTEBOOK = "present.ipynb"
CELLS = [
    ("markdown", "# Backprop, one step at a time\n\nThe stepper asks before it shows: "
                 "$\\sigma'(x) = \\sigma(x)\\,(1 - \\sigma(x))$."),
    ("code", "import tapeviz as tv\nfrom tapeviz.teach import presentation\npresentation()"),
    ("code", "a = tv.tensor(2.0, dtype='float64')\nb = tv.tensor(-3.0, dtype='float64')\n"
             "c = tv.tensor(10.0, dtype='float64')\nf = tv.tensor(-2.0, dtype='float64')\n"
             "with tv.Tape() as tape:\n    tape.watch([a, b, c, f])\n    e = a * b\n"
             "    d = e + c\n    L = d * f\ntape.gradient(L, [a, b, c, f])\n"
             "tv.BackpropStepper(tape, ask=True, font_size=24)"),
]  # fmt: skip
MEASURE_JS = """(out) => {
  const buttons = Array.from(out.querySelectorAll('.widget-button, .tv-step-button')).map(
    (b) => [b.textContent.trim(), b.scrollWidth, b.clientWidth]);
  const q = out.querySelector('.widget-htmlmath-content');
  const svg = out.querySelector('svg').getBoundingClientRect();
  const area = out.getBoundingClientRect();
  return {buttons, question: parseFloat(getComputedStyle(q).fontSize),
          svgRight: svg.right, areaRight: area.right, svgWidth: svg.width};
}"""


@pytest.fixture(scope="module")
def lab_notebooks_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab-present")
    nb = nbformat.v4.new_notebook()
    for kind, source in CELLS:
        cell = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        nb.cells.append(cell(source, metadata={"slideshow": {"slide_type": "slide"}}))
    nbformat.write(nb, root / NOTEBOOK)
    return root


def test_the_ask_stepper_reads_at_1280x800(lab_server, lab_page):
    page = lab_page
    page.set_viewport_size({"width": 1280, "height": 800})
    open_notebook(page, lab_server, NOTEBOOK)
    run_all_cells(page)
    assert unexecuted_cells(page) == []
    out = code_cell(page, 1).locator(".jp-OutputArea-output").first
    out.locator("button:has-text('show me')").wait_for(timeout=30_000)
    out.locator(".widget-htmlmath-content mjx-container").first.wait_for(timeout=30_000)
    out.scroll_into_view_if_needed()
    screenshot(page, "present-stepper-1280x800")
    m = out.evaluate(MEASURE_JS)
    # the step controls are the browser's own (stepper.js: "« first", "‹ back", ...), the
    # ask buttons ipywidgets'
    words = {w for text, _, _ in m["buttons"] for w in (text, *text.split())}
    assert {"first", "back", "next", "last", "check", "show me"} <= words, m["buttons"]
    cut = [(t, s, c) for t, s, c in m["buttons"] if s > c + 1]
    assert cut == [], f"buttons whose words are cut: {cut}"
    assert m["question"] >= 18, f"the question is {m['question']} px"
    assert m["svgRight"] <= m["areaRight"] + 1, f"the graph runs past the output: {m}"
    assert m["svgWidth"] > 600, f"the graph shrank to {m['svgWidth']:.0f} px"


def test_cells_tagged_slide_are_rise_slides(lab_server, lab_page):
    page = lab_page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{lab_server.url}/rise/{NOTEBOOK}?token={lab_server.token}")
    sections = page.locator(".jp-Notebook.slides > section")
    sections.first.wait_for(timeout=60_000)
    page.locator(".jp-RenderedMarkdown h1:has-text('Backprop, one step')").wait_for(timeout=60_000)
    page.wait_for_timeout(1000)
    math = page.locator(".jp-RenderedMarkdown mjx-container")
    math.first.wait_for(timeout=30_000)
    screenshot(page, "present-rise-title")
    assert sections.count() == len(CELLS)
    # typeset by JupyterLab's MathJax, with the MathML a screen reader reads (the MathJax of
    # jupyterlab-mathjax3, which jupyterlab-rise pulls in, has none: the Makefile and
    # binder/postBuild disable it)
    mml = math.first.locator("mjx-assistive-mml")
    assert mml.count() == 1, "the slide's math has no assistive MathML (jupyterlab-mathjax3?)"
    assert "σ" in mml.text_content()
