"""The lesson tools in JupyterLab (headless Chromium), as a student and a teacher use them.

One notebook written here holds micrograd's first expression (L = (a·b + c)·f), the stepper
in ask-then-show mode, the lesson graph widget on a tensor used twice, and a graph widget.

* Ask mode: at each step a wrong answer shows "not yet" and keeps the gradients hidden ("?");
  the right one shows the chain-rule line typeset by MathJax with the student's names and
  numbers (∂L/∂a = … = (−2)(−3) = 6), the graph's "?" become numbers, and the edges being
  traversed are the lit ones.
* Lesson graph: tensors carry the names of the code's variables, each shows name | data |
  grad and no dtype or bytes, and the "plant the = bug" toggle changes the drawn gradients.
* Issue 17: a node's details show the notebook cell (execution count) and line.

Assertions read the DOM (the SVG's text and edge styles, MathJax's MathML); screenshots go
to test-artifacts/browser/lesson-*.png.
"""

from __future__ import annotations

import re

import pytest
from lab_harness import (
    code_cell,
    code_cells_notebook,
    idle_click_step_alive,
    open_kernel,
    run_all_cells,
    shot,
    unexecuted_cells,
    wait_idle,
    widget_errors,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

NOTEBOOK = "lesson.ipynb"
EXPRESSION = (
    "import tapeviz as tv\n"
    "a = tv.tensor(2.0, dtype='float64')\n"
    "b = tv.tensor(-3.0, dtype='float64')\n"
    "c = tv.tensor(10.0, dtype='float64')\n"
    "f = tv.tensor(-2.0, dtype='float64')\n"
    "with tv.Tape(persistent=True) as tape:\n"
    "    tape.watch([a, b, c, f])\n"
    "    e = a * b\n"
    "    d = e + c\n"
    "    L = d * f\n"
    "tape.gradient(L, [a, b, c, f]);"
)
CELLS = [
    EXPRESSION,
    "stepper = tv.BackpropStepper(tape, ask=True)\nstepper",
    "from tapeviz.widgets.lesson_widget import LessonGraphWidget\n"
    "x = tv.tensor(3.0, dtype='float64')\n"
    "with tv.Tape(persistent=True) as reuse_tape:\n"
    "    reuse_tape.watch(x)\n"
    "    s = x + x\n"
    "    y = s * x\n"
    "reuse_tape.gradient(y, x)\n"
    "LessonGraphWidget(reuse_tape)",
    "tv.GraphWidget(tape)",
]
EXPR, STEPPER, LESSON, GRAPH = range(4)

# name -> [texts] of each tensor record; the lit edges as (tensor name, op symbol)
SVG_JS = """(root) => {
  const svg = root.querySelector('svg');
  if (!svg) return null;
  const byTitle = {};
  svg.querySelectorAll('g.node').forEach((g) => {
    byTitle[g.querySelector('title').textContent] =
      Array.from(g.querySelectorAll('text')).map((t) => t.textContent.trim());
  });
  const tensors = {};
  Object.entries(byTitle).forEach(([id, texts]) => { if (id[0] === 't') tensors[texts[0]] = texts; });
  const lit = [];
  svg.querySelectorAll('g.edge').forEach((g) => {
    const path = g.querySelector('path');
    const wide = path && parseFloat(path.getAttribute('stroke-width') || '1') >= 2.5;
    if (!wide || path.getAttribute('stroke').toLowerCase() !== '#d55e00') return;
    const [tail, head] = g.querySelector('title').textContent.split('->');
    lit.push([byTitle[tail][0], byTitle[head][0]]);
  });
  const box = svg.getBoundingClientRect(), area = root.getBoundingClientRect();
  return {tensors, lit, svgRight: box.right, areaRight: area.right, svgWidth: box.width};
}"""
# the typeset math under ``root``: MathJax's MathML copy of each formula, as text
MATH_JS = """(root) => Array.from(root.querySelectorAll('mjx-container')).map(
  (m) => (m.querySelector('mjx-assistive-mml') || m).textContent)"""


@pytest.fixture(scope="module")
def lab_notebooks_dir(tmp_path_factory):
    return code_cells_notebook(tmp_path_factory, "lab-lesson", NOTEBOOK, CELLS)


_cell = code_cell


def _output(page, i):
    return _cell(page, i).locator(".jp-OutputArea-output").first


def _shot(locator, name):
    shot(locator, f"lesson-{name}")


def _norm(text: str) -> str:
    """MathML text without spaces, with ASCII minus signs: "(−2)(−3)=6" -> "(-2)(-3)=6"."""
    return re.sub(r"\s+", "", text.replace("−", "-").replace("\u2061", ""))


def _graph(out) -> dict:
    data = out.evaluate(SVG_JS)
    assert data, "no lesson graph (SVG) in this output"
    return data


def _graph_when(page, out, cond, timeout: float = 20.0) -> dict:
    """The lesson graph once ``cond(graph)`` holds (the kernel sends the picture after the
    text it changes with), or as it is after ``timeout`` seconds, for the assertion to show."""
    for _ in range(int(timeout * 10)):
        graph = out.evaluate(SVG_JS)
        if graph and cond(graph):
            break
        page.wait_for_timeout(100)
    return _graph(out)


def _lit(graph: dict) -> list:
    return sorted(graph["lit"])


def _grad(graph: dict, name: str) -> str:
    """The "grad …" field of tensor ``name``'s record."""
    return next(t for t in graph["tensors"][name] if t.startswith("grad"))


def _answer_boxes(out) -> dict:
    """{tensor name: its <input>} of the current step: each box's typeset label reads
    ∂L/∂name (MathML text "∂L/∂d"); a row whose label is not typeset yet is left out."""
    boxes = {}
    for row in out.locator(".widget-hbox:has(> .widget-text)").all():
        labels = [_norm(t) for t in row.evaluate(MATH_JS)]
        if len(labels) != 1 or not labels[0]:  # not typeset yet (MathJax is still at it)
            continue
        label = labels[0]
        match = re.fullmatch(r"∂L/∂(\w+)=?", label.replace("this edge's share of", ""))
        assert match, f"unexpected answer label {label!r}"
        boxes[match.group(1)] = row.locator("input")
    return boxes


def _answer(page, out, answers: dict) -> str:
    """Type ``answers`` ({name: text}) into the step's boxes, press "check", return the
    result area's text once it has changed."""
    for _ in range(200):  # a new step's boxes arrive after its question
        boxes = _answer_boxes(out)
        if sorted(boxes) == sorted(answers):
            break
        page.wait_for_timeout(100)
    assert sorted(boxes) == sorted(answers), (sorted(boxes), sorted(answers))
    result = out.locator(".widget-vbox .widget-htmlmath").last
    before = result.inner_text()
    for name, text in answers.items():
        boxes[name].fill(text)
        boxes[name].press("Tab")  # the Text widget syncs on change
    out.locator("button:has-text('check')").click()
    page.wait_for_function(
        "([el, before]) => el.innerText !== before && el.innerText.trim() !== ''",
        arg=[result.element_handle(), before],
        timeout=20_000,
    )
    page.wait_for_timeout(300)  # MathJax typesets after the HTML lands
    return result.inner_text()


def _wait_title(page, out, words: str):
    page.wait_for_function(
        "([el, words]) => el.innerText.includes(words)",
        arg=[out.element_handle(), words],
        timeout=20_000,
    )


def test_ask_mode_lesson_graph_and_cell_lines(lab_server, lab_page):
    page = lab_page
    restarts = lab_server.kernel_restarts()
    pid = open_kernel(page, lab_server, NOTEBOOK)
    run_all_cells(page)
    assert unexecuted_cells(page) == []
    assert widget_errors(page, (".tv-graph .tv-error",)) == []
    _ask_mode(page, _output(page, STEPPER))
    _lesson_graph(page, _output(page, LESSON))
    _details_show_the_cell(page)
    assert page.page_errors == [], page.page_errors
    idle_click_step_alive(page, lab_server, pid, restarts)


def _ask_mode(page, out):
    out.locator("svg g.node").first.wait_for(timeout=30_000)
    _wait_title(page, out, "step 1 of 3")
    graph = _graph(out)
    assert sorted(graph["tensors"]) == ["L", "a", "b", "c", "d", "e", "f"]  # the code's names
    assert [_grad(graph, n) for n in "abcdef"] == ["grad ?"] * 6  # hidden until their step
    assert _grad(graph, "L") == "grad 1"
    assert sorted(graph["lit"]) == [["d", "×"], ["f", "×"]]  # L = d × f is traversed
    assert graph["svgRight"] <= graph["areaRight"] + 1, "the lesson graph is cut off"
    _shot(out, "ask-step1")

    # a wrong answer: "not yet", why, and the gradients stay hidden
    text = _answer(page, out, {"d": "2", "f": "4"})
    assert "not yet" in text and "sign is flipped" in text and "correct" not in text, text
    assert _grad(_graph(out), "d") == "grad ?"
    _shot(out, "ask-wrong")

    # the right one: the typeset line with the names and numbers, the grads filled in
    text = _answer(page, out, {"d": "-2", "f": "4"})
    assert "correct" in text and "not yet" not in text, text
    lines = [_norm(m) for m in out.locator(".widget-vbox .widget-htmlmath").last.evaluate(MATH_JS)]
    assert "∂L∂d=f=-2" in lines and "∂L∂f=d=4" in lines, lines
    graph = _graph_when(page, out, lambda g: _grad(g, "d") != "grad ?")
    assert (_grad(graph, "d"), _grad(graph, "f"), _grad(graph, "e")) == (
        "grad -2",
        "grad 4",
        "grad ?",
    )
    assert sorted(graph["lit"]) == [["d", "×"], ["f", "×"]]
    _shot(out, "ask-right")

    # step 2 (d = e + c), then step 3 (e = a × b): the lit edges follow the step
    out.locator("button:has-text('next')").click()
    _wait_title(page, out, "step 2 of 3")
    page.wait_for_function(
        "(el) => el.querySelector('.widget-hbox input') && el.innerText.includes('e + c')",
        arg=out.element_handle(),
    )
    assert _lit(_graph_when(page, out, lambda g: ["e", "+"] in g["lit"])) == [
        ["c", "+"],
        ["e", "+"],
    ]
    assert "correct" in _answer(page, out, {"e": "-2", "c": "-2"})
    out.locator("button:has-text('next')").click()
    _wait_title(page, out, "step 3 of 3")
    page.wait_for_function(
        "(el) => el.innerText.includes('a × b')", arg=out.element_handle(), timeout=20_000
    )
    assert _lit(_graph_when(page, out, lambda g: ["a", "×"] in g["lit"])) == [
        ["a", "×"],
        ["b", "×"],
    ]
    assert "correct" in _answer(page, out, {"a": "6", "b": "-4"})
    lines = [_norm(m) for m in out.locator(".widget-vbox .widget-htmlmath").last.evaluate(MATH_JS)]
    assert "∂L∂a=∂L∂e⋅∂e∂a=∂L∂e⋅b=(-2)(-3)=6" in lines, lines
    graph = _graph_when(page, out, lambda g: _grad(g, "a") != "grad ?")
    assert [_grad(graph, n) for n in "abcdef"] == [
        "grad 6",
        "grad -4",
        "grad -2",
        "grad -2",
        "grad -2",
        "grad 4",
    ]
    _shot(out, "ask-step3")


def _lesson_graph(page, out):
    out.locator("svg g.node").first.wait_for(timeout=30_000)
    graph = _graph(out)
    assert sorted(graph["tensors"]) == ["s", "x", "y"]
    assert graph["tensors"]["x"] == ["x", "data 3", "grad 12"]  # name | data | grad
    texts = " ".join(t for ts in graph["tensors"].values() for t in ts)
    assert not re.search(r"float|int\d|\d B\b|numpy", texts), texts  # no dtype/bytes/backend
    assert graph["svgRight"] <= graph["areaRight"] + 1, "the lesson graph is cut off"
    _shot(out, "graph")
    bug = out.locator("button:has-text('plant the = bug')")
    bug.click()
    page.wait_for_function(
        f"(el) => ({SVG_JS})(el).tensors.x.includes('grad 3')", arg=out.element_handle()
    )
    graph = _graph(out)
    assert graph["tensors"]["x"] == ["x", "data 3", "grad 3"]  # = instead of +=: 3, not 12
    _shot(out, "graph-bug")
    bug.click()
    page.wait_for_function(
        f"(el) => ({SVG_JS})(el).tensors.x.includes('grad 12')", arg=out.element_handle()
    )


def _details_show_the_cell(page):
    """Issue 17: the node's source is the cell's execution count and line, not a temp file."""
    count = re.search(r"\d+", _cell(page, EXPR).locator(".jp-InputPrompt").inner_text()).group()
    line = EXPRESSION.splitlines().index("    e = a * b") + 1
    graph = _output(page, GRAPH).locator(".tv-graph").first
    graph.locator(".tv-canvas svg g.node[data-tv-id='n0']").click()
    panel = graph.locator(".tv-panel")
    page.wait_for_function(
        "(el) => /In \\[\\d+\\], line \\d+/.test(el.innerText)",
        arg=panel.element_handle(),
        timeout=20_000,
    )
    text = panel.inner_text()
    assert f"In [{count}], line {line}" in text and "ipykernel_" not in text, text
    _shot(_cell(page, GRAPH), "details-cell-line")
    wait_idle(page)
