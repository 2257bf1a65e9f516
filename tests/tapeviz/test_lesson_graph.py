"""Lesson mode: the caller's names, op symbols, data | grad only, the planted `=` bug."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.graph.lesson import lesson_data, lesson_graph, tensor_names


def _micrograd():
    a, b = tv.tensor(2.0, dtype="float64"), tv.tensor(-3.0, dtype="float64")
    c, f = tv.tensor(10.0, dtype="float64"), tv.tensor(-2.0, dtype="float64")
    with tv.Tape(persistent=True) as tape:
        tape.watch([a, b, c, f])
        e = a * b
        d = e + c
        L = d * f
    tape.gradient(L, [a, b, c, f])
    return tape, lesson_graph(tape)  # names from this frame


def _by_name(graph) -> dict:
    return {t["name"]: t for t in graph.data["tensors"].values()}


def test_names_symbols_values_and_grads():
    tape, g = _micrograd()
    t = _by_name(g)
    assert set(t) == {"a", "b", "c", "d", "e", "f", "L"}
    assert [op["symbol"] for op in g.data["ops"]] == ["×", "+", "×"]
    grads = {k: float(v["grad"]) for k, v in t.items()}
    assert grads == {"a": 6.0, "b": -4.0, "c": -2.0, "d": -2.0, "e": -2.0, "f": 4.0, "L": 1.0}
    assert float(t["d"]["value"]) == 4.0 and float(t["L"]["value"]) == -8.0
    dot = g.to_dot()
    assert '"{ e | data -6 | grad -2 }"' in dot
    for noise in ("float", "numpy", " B", "saved"):  # no dtype, backend, bytes, saved box
        assert noise not in dot


def test_a_tensor_name_wins_and_unnamed_tensors_say_what_they_are():
    x = tv.tensor(1.5, name="input")
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.tanh(x * 2.0)
    tape.gradient(y, x)
    t = [v["name"] for v in lesson_data(tape)["tensors"].values()]
    assert t == ["input", "2", "input × 2", "tanh(input × 2)"], t  # not t1, t2
    assert lesson_graph(tape).data["ops"][1]["symbol"] == "tanh"


def test_the_accumulation_bug_keeps_only_the_last_edge():
    a = tv.tensor(3.0, dtype="float64")
    with tv.Tape(persistent=True) as tape:
        tape.watch(a)
        b = a + a
        c = b * a
    tape.gradient(c, a)
    right = _by_name(lesson_graph(tape))
    wrong = _by_name(lesson_graph(tape, accumulation_bug=True))
    assert float(right["a"]["grad"]) == 12.0  # d(2a²)/da = 4a
    # micrograd with `self.grad = …`: Mul writes a.grad = b = 6, then Add overwrites it
    # twice with b.grad = a = 3: the last write wins
    assert float(wrong["a"]["grad"]) == 3.0 and float(wrong["b"]["grad"]) == 3.0
    assert float(wrong["c"]["grad"]) == 1.0


def test_the_bug_needs_an_elementwise_graph():
    x = tv.tensor(np.ones((2, 2)))
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.sum(x @ x)
    tape.gradient(y, x)
    with pytest.raises(ValueError, match="not elementwise"):
        lesson_graph(tape, accumulation_bug=True)


def test_hidden_lit_font_and_export(tmp_path):
    tape, g = _micrograd()
    e_id = next(k for k, v in g.data["tensors"].items() if v["name"] == "e")
    mul = g.data["ops"][0]["id"]
    a_id = g.data["ops"][0]["inputs"][0]
    names = {k: v["name"] for k, v in g.data["tensors"].items()}
    big = lesson_graph(tape, names, hidden={e_id}, lit={(a_id, mul)}, font_size=28)
    dot = big.to_dot()
    assert '"{ e | data -6 | grad ? }"' in dot and "fontsize=28" in dot
    assert f'"t{a_id}" -> "o{mul}" [color="#D55E00"' in dot
    svg = big.save(tmp_path / "slide.svg").read_text()
    assert svg.startswith("<svg") and ">e<" in svg
    assert "image/svg+xml" in big._repr_mimebundle_()
    with pytest.raises(ValueError, match=r"\.svg, \.dot"):
        big.save(tmp_path / "slide.pdf")


def test_unfused_dense_and_softmax_ce_carry_the_engines_gradients():
    rng = np.random.default_rng(0)
    x = tv.tensor(rng.standard_normal((4, 3)))
    tv.nn.set_seed(0)
    model = tv.nn.Sequential([tv.nn.Dense(2, activation="tanh")])
    model(x)
    with tv.Tape(persistent=True) as tape:
        logits = model(x)
        loss = tv.losses.softmax_cross_entropy([0, 1, 1, 0], logits)
    tape.gradient(loss, model.parameters())
    fused = lesson_graph(tape)
    assert [op["symbol"] for op in fused.data["ops"]] == ["dense", "softmax CE"]
    g = lesson_graph(tape, unfuse=True)
    symbols = [op["symbol"] for op in g.data["ops"]]
    assert symbols[:4] == ["@", "+", "tanh", "log softmax"] and symbols[-1] == "÷"
    t = _by_name(g)
    # the unfused steps end in the same tensors, with the engine's own gradients
    np.testing.assert_allclose(t["logits"]["grad"], _by_name(fused)["logits"]["grad"])
    z = np.asarray(logits._data)
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    np.testing.assert_allclose(t["logits"]["grad"], (p - np.eye(2)[[0, 1, 1, 0]]) / 4)
    pre = t["Add out"]  # x W + b, before tanh: no ids ("+ #16") in a lesson's names
    # the layer's name counts the Dense layers made before it (dense, dense_1, ...)
    assert t[f"x @ {model[0].kernel.name}"]["value"].shape == (4, 2) and "labels" in t
    assert not [k for k in t if re.search(r"#\d|\bt\d+$", k)], sorted(t)
    np.testing.assert_allclose(pre["grad"], t["logits"]["grad"] * (1 - z**2), rtol=1e-6)
    assert "<svg" in g.to_svg()


def test_the_widget_toggles_the_bug_unfusing_and_font():
    from tapeviz.widgets.lesson_widget import LessonGraphWidget

    a = tv.tensor(3.0, dtype="float64")
    with tv.Tape(persistent=True) as tape:
        tape.watch(a)
        b = a + a
    tape.gradient(b, a)
    w = LessonGraphWidget(tape)
    assert '"{ a | data 3 | grad 2 }"' in w.graph.to_dot() and "<svg" in w.picture.value
    w.bug.value = True
    assert '"{ a | data 3 | grad 1 }"' in w.graph.to_dot()
    w.font.value = 30
    assert "fontsize=30" in w.graph.to_dot()
    x = tv.tensor(np.ones((2, 2)))
    with tv.Tape() as t2:
        t2.watch(x)
        y = tv.sum(x @ x)
    t2.gradient(y, x)
    w2 = LessonGraphWidget(t2)
    w2.bug.value = True  # not a scalar lesson: the error is shown in place
    assert "not elementwise" in w2.picture.value


def test_lesson_pictures_shrink_to_the_output_width_not_below_11px():
    """A wide lesson graph fits the output (it was cut off at 14 pt): the box may shrink it to
    11 px / (14 pt = 18.7 px), where the other graphs' 9 pt small print stops at 11/12."""
    import re

    from tapeviz.widgets.lesson_widget import LessonGraphWidget

    tape, _ = _micrograd()
    clamp = re.compile(r"clamp\((\d+)px, 100%, (\d+)px\)")
    stepper = tv.BackpropStepper(tape, ask=True)
    for html in (LessonGraphWidget(tape).picture.value, stepper.graph_html.value):
        low, natural = map(int, clamp.search(html).groups())
        assert low / natural == pytest.approx(11 / (14 * 4 / 3), abs=0.01)
    big = LessonGraphWidget(tape, font_size=28).picture.value  # a lecture hall's font may
    low, natural = map(int, clamp.search(big).groups())  # shrink to fit, to 11 px at most
    assert low / natural * 28 * 4 / 3 == pytest.approx(11, abs=0.3)


def test_a_displayed_lesson_graph_fits_the_output_width():
    """In a notebook the bare LessonGraph (image/svg+xml) shrinks to 720 pt like show_graph's,
    not below its 11 px floor: at font 28 it was drawn 819 pt wide, and cut off ("grac" in
    00's slide); now it fits, its text >= 11 px."""
    import re

    tape, _ = _micrograd()
    graph = lesson_graph(tape, font_size=28)
    size = re.compile(r'<svg width="([\d.]+)pt"')
    natural = float(size.search(graph.to_svg()).group(1))
    shown = float(size.search(graph._repr_mimebundle_()["image/svg+xml"]).group(1))
    assert natural > 720 and shown == pytest.approx(max(720, natural * 0.295), abs=2)
    assert shown / natural * 28 * 4 / 3 >= 11  # legible


def test_an_unnamed_intermediate_is_named_by_what_it_computes_not_its_id():
    """micrograd's neuron: ``n = x1w1 + x2w2 + bias`` makes an intermediate no variable
    holds; it is ``x1w1 + x2w2`` (the stepper asked about ``t315`` before), a longer
    expression ``<op> out``, an unnamed constant the slot that reads it."""
    x1, x2, w1, w2 = (tv.tensor(v, dtype="float64") for v in (2.0, 0.0, -3.0, 1.0))
    bias = tv.tensor(6.8813735870195432, dtype="float64")
    with tv.Tape() as tape:
        tape.watch([x1, x2, w1, w2, bias])
        x1w1 = x1 * w1
        x2w2 = x2 * w2
        n = x1w1 + x2w2 + bias
        o = tv.tanh(n)
        far = tv.exp(tv.tanh(o * x1w1) + bias)
        farther = tv.exp(far * x1w1 - x2w2 * bias)
    tape.gradient(o, [x1, w1])
    names = [t["name"] for t in lesson_graph(tape).data["tensors"].values()]
    assert names[:10] == ["x1", "w1", "x1w1", "x2", "w2", "x2w2", "x1w1 + x2w2", "bias", "n",
                          "o"], names  # fmt: skip
    assert names[10:] == [
        "o × x1w1",
        "tanh(o × x1w1)",
        "tanh(o × x1w1) + bias",
        "far",
        "far × x1w1",
        "x2w2 × bias",
        "far × x1w1 − x2w2 × bias",
        "farther",
    ]
    unnamed = list(tensor_names(tape, {}).values())  # no variable names: the ids of inputs
    assert unnamed[:3] == [f"t{x1.id}", f"t{w1.id}", f"t{x1.id} × t{w1.id}"], unnamed
    assert far is not None and farther is not None
    with tv.Tape() as tape:  # precedence: (a × b + c) × f, not a × b + c × f
        tape.watch([x1, w1, bias])
        out = (x1 * w1 + bias) * x1 - (w1 - bias)
    names = [t["name"] for t in lesson_graph(tape).data["tensors"].values()]
    assert names[-4:] == ["x1 × w1 + bias", "(x1 × w1 + bias) × x1", "w1 − bias", "out"]
    with tv.Tape() as tape:
        tape.watch([x1, w1])
        out = x1 - (w1 - x1 * w1)
    names = [t["name"] for t in lesson_graph(tape).data["tensors"].values()]
    assert names[-2:] == ["w1 − x1 × w1", "out"] and "x1 − (w1 − x1 × w1)" not in names
    named = lesson_graph(tape, {x1.id: "x1", w1.id: "w1"}).data["tensors"]
    assert named[out.id]["name"] == "x1 − (w1 − x1 × w1)"
