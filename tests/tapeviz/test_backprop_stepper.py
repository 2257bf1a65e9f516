"""BackpropStepper: the engine's real order, buttons and slider, the panel's numbers, the
accumulation into a tensor used three times, and the graph highlight."""

from __future__ import annotations

import ipywidgets as W
import numpy as np
import pytest

import tapeviz as tv
from tapeviz.widgets.formulas import gradient_formula


@pytest.fixture
def tape():
    x = tv.tensor([0.5, -1.0, 2.0], name="x")
    with tv.Tape(persistent=True) as t:
        t.watch(x)
        h = tv.tanh(x)
        y = tv.sum(h * h + h)  # h is read by Mul (twice) and by Add
    t.gradient(y, x)
    return t


def test_steps_follow_the_engines_order(tape):
    s = tv.BackpropStepper(tape)
    assert s.count == len(tape.backward_steps) == 4
    seen = [s.current.node_id]
    for _ in range(s.count - 1):
        s.next()
        seen.append(s.current.node_id)
    assert seen == [st.node_id for st in tape.backward_steps]
    assert s.title_text == "step 4 of 4: Tanh"
    s.next()  # past the last step: it stays there (the view disables the button)
    assert s.index == 3


def test_one_set_of_controls_drives_it(tape):
    """Issue 36: the view's controls (``head``) are the only ones; Python's first / back /
    next / last / go move the same ``value`` a click in the browser moves."""
    s = tv.BackpropStepper(tape)
    assert s.title_text == "step 1 of 4: Sum"
    assert not any(isinstance(w, (W.Button, W.IntSlider, W.Play)) for w in _descendants(s))
    s.last()
    assert s.index == 3 and s.head.value == 4
    s.back()
    assert s.index == 2 and s.title_text == "step 3 of 4: Mul"
    s.first()
    assert s.index == 0
    s.back()
    assert s.index == 0
    s.head.value = 2  # the view's slider
    assert s.title_text == "step 2 of 4: Add" and "step 2 of 4: Add" in s.title.value
    s.go(99)
    assert s.index == 3


def _descendants(widget):
    for child in getattr(widget, "children", ()):
        yield child
        yield from _descendants(child)


def test_graph_highlights_current_and_visited(tape):
    s = tv.BackpropStepper(tape)
    s.go(2)
    steps = tape.backward_steps
    assert s.highlight == {
        steps[0].node_id: "visited",
        steps[1].node_id: "visited",
        steps[2].node_id: "current",
    }
    # the browser applies the step's highlight to the graph it shows; a saved notebook gets
    # the same highlight drawn by Graphviz
    assert s.graph_view.frames[2] == {f"n{k}": v for k, v in s.highlight.items()}
    assert s.graph_view.frame == 3 and "current" not in s.graph_view.svg
    static = s._repr_mimebundle_()["text/html"]
    assert "<svg" in static and "current" in static and "visited" in static


def test_every_step_is_in_the_view_and_linked_in_the_browser(tape):
    from ipywidgets.widgets.widget_link import Link

    s = tv.BackpropStepper(tape)
    assert s.head in s.children and s.panel_view in s.children and s.panel not in s.children
    assert len(s.head.pages) == len(s.panel_view.pages) == s.count == 4
    assert "step 3 of 4: Mul" in s.head.pages[2] and "gradients produced" in s.panel_view.pages[2]
    links = {(type(k).__name__, k.source[1], k.target[0], k.target[1]) for k in s._links}
    assert links == {
        ("Link", "value", s.panel_view, "value"),
        ("Link", "value", s.graph_view, "frame"),
    }
    assert all(isinstance(k, Link) and k.source[0] is s.head for k in s._links)
    s.head.value = 2  # what the view reports after a click: Python follows
    assert s.index == 1 and s.title_text == "step 2 of 4: Add" and s.graph_view.frame == 2
    s.next()
    assert s.head.value == 3


def test_panel_numbers_match_the_backward_step(tape):
    s = tv.BackpropStepper(tape)
    s.last()  # Tanh
    d, step = s.data, tape.backward_steps[3]
    node = tape.node(step.node_id)
    assert d["formula"] == "Tanh: ∂y/∂x = 1 - y^2"  # the registered formula
    assert d["formula"] == gradient_formula(node)
    np.testing.assert_allclose(d["dy"][0], step.dy[0].numpy())
    y = np.tanh(np.array([0.5, -1.0, 2.0], dtype=np.float32))
    (saved,) = d["saved"]
    assert saved["role"] == "output"
    np.testing.assert_allclose(saved["value"], y)
    np.testing.assert_allclose(d["local"]["x"], 1 - y * y, rtol=1e-5)
    np.testing.assert_allclose(d["grads"]["x"], step.grads["x"].numpy())
    np.testing.assert_allclose(d["grads"]["x"], step.dy[0].numpy() * (1 - y * y), rtol=1e-5)
    for section in ("incoming dy", "saved values used", "local derivative", "gradients produced"):
        assert section in s.panel.value
    assert "1 - y^2" in s.panel.value


def test_accumulation_shows_each_edges_share(tape):
    s = tv.BackpropStepper(tape)
    s.go(2)  # Mul: its two inputs are the same tensor h, also read by Add
    step = tape.backward_steps[2]
    (acc,) = s.data["accumulation"]
    assert acc["readers"] == 3 and acc["input"] == "a, b"
    assert len(acc["shares"]) == 3  # Add's b, then Mul's a and b
    assert [sh["this_step"] for sh in acc["shares"]] == [False, True, True]
    np.testing.assert_allclose(acc["total"], step.accumulated["b"].numpy(), rtol=1e-6)
    h = np.tanh(np.array([0.5, -1.0, 2.0], dtype=np.float32))
    np.testing.assert_allclose(acc["total"], 2 * h + 1, rtol=1e-5)  # d(h^2 + h)/dh
    assert "read by 3 nodes" in s.panel.value and "running total" in s.panel.value
    s.go(0)
    assert s.data["accumulation"] == []


def test_non_elementwise_gradient_and_released_tape():
    a = tv.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = tv.variable(np.ones((3, 2), np.float32))
    with tv.Tape() as t:
        y = tv.sum(a @ b)
    t.gradient(y, [b])
    s = tv.BackpropStepper(t)
    s.last()
    assert s.data["kernel"] == "BatchMatMul"
    assert "∂y/∂a = dy bᵀ" in s.data["formula"]  # plain text: the panel does not typeset
    assert "not elementwise" in s.panel.value
    saved = {v["name"]: v["value"] for v in s.data["saved"]}  # read through the inputs
    assert sorted(saved) == ["a", "b"]
    np.testing.assert_array_equal(saved["a"], a.numpy())
    np.testing.assert_array_equal(saved["b"], b.numpy())


def test_errors_are_shown_in_place():
    with tv.Tape() as t:
        tv.tanh(tv.tensor([1.0]))
    s = tv.BackpropStepper(t)
    assert s.error is not None and "call tape.gradient" in s.children[0].value
    bad = tv.BackpropStepper(object())
    assert "role='alert'" in bad.children[0].value
    assert "BackpropStepper" in bad._repr_mimebundle_()["text/plain"]


def test_static_mimebundle(tape):
    s = tv.BackpropStepper(tape)
    s.go(1)
    bundle = s._repr_mimebundle_()
    assert "step 2 of 4: Add" in bundle["text/html"] and "<svg" in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_live_graph_follows_the_current_step_and_shows_its_details(tape):
    s = tv.BackpropStepper(tape)
    assert s.graph_view is not None and s.graph_view in s.children
    s.go(2)
    node = f"n{s.current.node_id}"
    assert s.graph_view.frames[s.graph_view.frame - 1][node] == "current"
    assert s.graph_view.selected == node and s.graph_view.details["id"] == node
    # the static fallback is the same drawing, never shrunk below 60 % of its size
    static = s.static_html()
    assert "clamp(" in static and "<svg" in static and "current" in static


def test_panel_names_the_inputs_the_engine_skipped():
    x = tv.tensor([0.5, -1.0], name="x")
    c = tv.tensor([2.0, 3.0], name="c")  # a constant: no gradient is computed for it
    with tv.Tape(persistent=True) as t:
        t.watch(x)
        y = tv.sum(x * c)
    t.gradient(y, x)
    s = tv.BackpropStepper(t)
    s.last()  # the Mul step
    assert s.data["skipped"] == ["b"]
    assert "not computed: <code>b</code>" in s.panel.value
    assert "&part;out/&part;<code>a</code>" in s.panel.value


def test_a_summed_dy_says_where_its_shares_came_from(tape):
    s = tv.BackpropStepper(tape)
    s.last()  # Tanh: h is read by Mul (a and b) and by Add
    assert "the sum of 3 shares" in s.panel.value
    s.first()  # Sum's output is read by nobody: a plain dy
    assert "shares" not in s.panel.value.split("ops the gradient ran")[0]


def test_the_plain_panel_shows_no_raw_tex():
    """Notebook 02's two-layer stepper showed ``\\frac{1}{b}`` as text (the panel does not
    typeset): every built-in formula reads as plain text there."""
    from tapeviz.core.primitives import ROWS, fill
    from tapeviz.widgets.formulas import tex_to_text

    slots = {k: k for k in ("x", "a", "b", "y", "dy")}
    for kernel, rows in ((d.name, d.formula) for d in ROWS if d.formula):
        for slot, tex in rows.items():
            text = tex_to_text(fill(tex, slots))
            assert not set(text) & set("\\{}"), (kernel, slot, text)
    x = tv.tensor([1.0, 2.0])
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        y = tv.mean(x * x)
    tape.gradient(y, x)
    panels = [tv.BackpropStepper(tape, graph=False)._page(i)[1] for i in range(2)]
    assert "1/b" in "".join(panels) and "frac" not in "".join(panels)
