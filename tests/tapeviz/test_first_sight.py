"""What a graph opens on (plain Python): groups by the code's structure, names from the code,
the layout the widget chooses. The browser side: tests/notebooks/test_browser_first_sight.py."""

from __future__ import annotations

import re

import numpy as np

import tapeviz as tv
from tapeviz.graph import extract
from tapeviz.graph.collapse import plan

rng = np.random.default_rng(0)


def mlp(layers):
    x = tv.tensor(rng.standard_normal((4, 3)), name="x")
    Ws = [tv.variable(rng.standard_normal((3, 3)) * 0.5, name=f"W{i}") for i in range(layers)]
    bs = [tv.variable(np.zeros(3), name=f"b{i}") for i in range(layers)]
    with tv.Tape(persistent=True) as tape:
        h = x
        for W, b in zip(Ws, bs):
            h = tv.tanh(h @ W + b)
        loss = tv.mean(tv.square(h))
    tape.gradient(loss, Ws + bs)
    return tape


@tv.custom_grad
def clip_grad(x, save):
    return {"value": x * 1.0, "grad_func": lambda dy, saved: tv.clip(dy, -1.0, 1.0)}


def rnn_two_lines(steps=5):
    xs = tv.tensor(rng.standard_normal((steps, 2, 3)), name="xs")
    Wx = tv.variable(rng.standard_normal((3, 4)) * 0.3, name="Wx")
    Wh = tv.variable(rng.standard_normal((4, 4)) * 0.3, name="Wh")
    with tv.Tape(persistent=True) as tape:
        h = tv.tensor(np.zeros((2, 4)))
        for t in range(steps):
            a = xs[t] @ Wx
            h = clip_grad(tv.tanh(a + h @ Wh))
        loss = tv.sum(h)
    tape.gradient(loss, [Wx, Wh])
    return tape


def test_statements_and_loop_turns_are_the_groups():
    data = extract(mlp(3))
    groups = plan(data, 60, merge_repeats=False)["groups"]
    labels = [g["label"] for g in groups]
    assert labels == [f"h = tv.tanh(h @ W + b) \u00b7 turn {k}/3" for k in (1, 2, 3)] + [
        "loss = tv.mean(tv.square(h))"
    ]
    assert [g["n_ops"] for g in groups] == [3, 3, 3, 3]
    assert groups[1]["same_as"] == "turn 1/3"
    merged = plan(data, 60, merge_repeats=True)["groups"]
    assert merged[0]["label"] == "h = tv.tanh(h @ W + b) (\u00d73 identical)"
    assert merged[0]["id"].startswith("m") and merged[0]["n_ops"] == 9


def test_a_loop_body_of_two_lines_is_one_group_per_turn_and_a_custom_op_stays_apart():
    data = extract(rnn_two_lines(5))
    p = plan(data, 60, merge_repeats=False)
    custom = [op["id"] for op in data.ops if op["style"] == "custom_grad"]
    assert len(custom) == 5 and not set(custom) & set(p["op_group"])  # drawn as themselves
    turns = [g for g in p["groups"] if g["label"].startswith("lines ")]
    assert len(turns) == 5, [g["label"] for g in p["groups"]]
    assert all(g["kernels"] == turns[0]["kernels"] for g in turns)


def test_variables_only_groups_read_are_named_in_them_not_drawn():
    data = extract(mlp(2))
    dot = tv.show_graph(mlp(2), collapse=True).to_dot()
    assert "reads W0, b0" in dot and "reads W1, b1" in dot
    assert not any(f'"{t["id"]}" [' in dot for t in data.tensors if t["role"] == "variable")


def test_unnamed_results_take_the_name_the_code_assigned():
    data = extract(mlp(2))
    names = {t["name"] for t in data.tensors if t.get("name_from_code")}
    assert names == {"h", "loss"}
    out = [t for t in data.tensors if t["role"] == "output"]
    assert [t["name"] for t in out] == ["loss"]


def test_the_widget_opens_grouped_only_when_the_graph_is_too_big_to_read_whole():
    w = tv.GraphWidget(mlp(6))
    assert re.findall(r"<title>(m\d+)</title>", w.svg), "six identical layers: one node"
    assert re.search(r'class="node tv(-|&#45;)output"', w.svg)  # where it opens when cut
    small = tv.GraphWidget(lambda x: tv.sum(tv.tanh(x) * x), tv.tensor([1.0, 2.0]))
    assert not re.findall(r"<title>[cm]\d+</title>", small.svg)  # op by op
    graph = tv.BackpropStepper(mlp(6)).graph_view
    assert isinstance(graph, tv.GraphWidget)
    assert not re.findall(r"<title>[cm]\d+</title>", graph.svg)  # it marks ops: not grouped
