"""tv.show_code: the generated program as readable, highlighted Python linked to the graph of
the same trace; and the graph, memory inspector and stepper on a jitted function's trace."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.graph.extract import extract

X = tv.tensor([0.5, -1.0, 2.0], name="x")


def loss(x):
    h = tv.tanh(x * 2.0)
    return tv.sum(h * h)


def test_the_code_reads_like_the_users_program():
    view = tv.show_code(tv.grad(loss), X)
    text = view.text
    assert text.startswith("def grad_loss(x):")
    assert "h = Tanh(" in text  # the user's name, from the assignment on the source line
    assert "test_code_view.py:16: h = tv.tanh(x * 2.0)" in text  # the forward op's line
    assert "# backward" in text and "# \u2202 Tanh" in text  # grouped by the op differentiated
    assert "dh = " in text and "TanhGrad(dy=" in text and "return (dx,)" in text
    assert "del " in text  # where intermediates are freed
    assert str(view) == text and view.source.startswith("def _jit_grad_loss(x):")


def test_one_printer_the_programs_code_is_show_codes_text():
    """Issue 36: core's ``Compiled.code`` and ``show_code`` print the program the same way,
    guards included (one printer: ``core/jit/render.py``)."""
    jf = tv.jit(tv.grad(loss))
    code = jf.trace(X).code
    view = tv.show_code(jf, X)
    assert view.text == code
    assert "# guards: a call runs this program only while" in code
    assert "#   backend: numpy" in code.splitlines()


def test_lines_link_to_nodes_of_the_graph_drawn_beside():
    view = tv.show_code(tv.grad(loss), X)
    assert view.graph is not None and view.graph.mode == "both"
    ids = {op["id"] for op in extract(view.graph.tape).ops}
    ids |= {op["id"] for op in extract(view.graph.tape).backward_ops}
    linked = [r for r in view.code.rows if r["node"]]
    assert linked and all(r["node"] in ids for r in linked)
    kinds = {r["phase"] for r in linked}
    assert kinds == {"forward", "backward"}
    tanh = next(r for r in linked if "= Tanh(" in r["text"])
    node = view.graph.tape.node(int(tanh["node"][1:]))
    assert node.kernel == "Tanh"
    assert {"pointed"} <= set(view.graph.keys) and {"pointed"} <= set(view.code.keys)


def test_highlighting_and_a_static_picture_for_saved_notebooks():
    view = tv.show_code(tv.grad(loss), X, graph=False)
    assert view.graph is None
    html = view.code.rows[0]["html"]
    assert '<span class="k">def</span>' in html and '<span class="nf">grad_loss</span>' in html
    data, _ = view._repr_mimebundle_()
    assert "text/html" in data and "TanhGrad" in data["text/html"]
    assert data["text/plain"] == view.text


def test_a_jitted_function_and_its_cache_are_accepted():
    jf = tv.jit(tv.grad(loss))
    jf(X)
    view = tv.show_code(jf, X)
    assert jf.traces == 1  # show_code traces for display without touching the cache
    assert "TanhGrad" in view.text


def test_graph_memory_inspector_and_stepper_read_a_jitted_trace():
    compiled = tv.jit(tv.grad(loss)).trace(X)
    tape = compiled.tape
    assert [n.kernel for n in tape.nodes] == ["Mul", "Tanh", "Mul", "Sum"]
    assert tape.backward_nodes and tape.backward_steps
    graph = tv.GraphWidget(tape, backward="both")
    assert graph.svg and graph.has_backward
    inspector = tv.MemoryInspector(tape)
    assert {r.kernel for r in inspector.rows} >= {"Tanh", "Mul"}
    stepper = tv.BackpropStepper(tape)
    assert stepper.count == len(tape.backward_steps) and "Sum" in stepper.title_text
    stepper.go(stepper.count - 1)
    assert "Mul" in stepper.title_text
    forward_only = tv.jit(loss).trace(X)
    assert [n.kernel for n in forward_only.tape.nodes] == ["Mul", "Tanh", "Mul", "Sum"]
    assert np.isclose(forward_only.first_result.item(), loss(X).item())


def test_show_code_names_what_cannot_compile():
    def bad(x):
        return x if tv.sum(x) > 0 else -x

    with pytest.raises(tv.ConcretizationError, match="tv.where"):
        tv.show_code(bad, X)
