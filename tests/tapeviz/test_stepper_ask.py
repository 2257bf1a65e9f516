"""The stepper's ask-then-show mode on micrograd's lecture expression: gradients stay hidden
until their step, answers are checked, the chain-rule line has the user's names and numbers."""

from __future__ import annotations

import pytest

import tapeviz as tv


@pytest.fixture
def stepper():
    a, b = tv.tensor(2.0, dtype="float64"), tv.tensor(-3.0, dtype="float64")
    c, f = tv.tensor(10.0, dtype="float64"), tv.tensor(-2.0, dtype="float64")
    with tv.Tape(persistent=True) as tape:
        tape.watch([a, b, c, f])
        e = a * b
        d = e + c
        L = d * f
    tape.gradient(L, [a, b, c, f])
    return tv.BackpropStepper(tape, ask=True)  # names come from this frame: a, b, e, d, L


def test_the_question_uses_the_callers_names(stepper):
    q = stepper.quiz
    assert "L = d × f" in q.question.value and r"\partial L/\partial L = 1" in q.question.value
    assert stepper.title_text == "step 1 of 3: Mul"
    assert stepper.panel not in stepper.children  # the numbers panel would give it away


def test_ask_mode_has_the_views_controls(stepper):
    """The same controls as the plain stepper (issue 36: one set): the view's head, with
    each step's title; a click there (``head.value``) asks that step's question."""
    assert stepper.children[0] is stepper.head and "step 2 of 3: Add" in stepper.head.pages[1]
    stepper.head.value = 2
    assert "d = e + c" in stepper.quiz.question.value and stepper.title_text.startswith("step 2")


def test_grads_stay_hidden_until_their_step_is_answered(stepper):
    q = stepper.quiz
    names = q.names
    hidden = {names[t] for t in q.hidden()}
    assert hidden == {"a", "b", "c", "d", "e", "f"}
    assert "grad ?" in q.graph().to_dot() and "grad 1" in q.graph().to_dot()  # L's own
    q.inputs["a"].value, q.inputs["b"].value = "-2", "4"
    assert q.grade()
    assert {names[t] for t in q.hidden()} == {"a", "b", "c", "e"}
    assert "grad -2" in stepper.graph_html.value or "grad &#45;2" in stepper.graph_html.value


def test_a_wrong_answer_is_not_accepted_and_says_why(stepper):
    q = stepper.quiz
    q.inputs["a"].value, q.inputs["b"].value = "2", "4"  # ∂L/∂d = f = -2, not 2
    assert not q.grade()
    assert "sign is flipped" in q.result.value and "not yet" in q.result.value
    assert 0 not in q.answered and q.latex == []
    q.inputs["a"].value = "minus two"
    assert not q.grade() and "type a number" in q.result.value


def test_the_next_step_does_not_give_the_previous_answer(stepper):
    """Step 2 (d = e + c) receives ∂L/∂d, step 1's answer: it stays hidden until step 1 is
    answered or shown."""
    q = stepper.quiz
    stepper.next()
    assert "d = e + c" in q.question.value
    assert "-2" not in q.question.value and "answer that one first" in q.question.value
    stepper.back()
    q.show_answer()
    stepper.next()
    assert r"Known: $\partial L/\partial d = -2$" in q.question.value


def test_the_worked_line_has_names_and_numbers(stepper):
    q = stepper.quiz
    for _ in range(2):  # the earlier steps, so that e = a × b is asked with ∂L/∂e known
        q.show_answer()
        stepper.next()
    assert "e = a × b" in q.question.value
    assert q.lit() == {(next(t for t, n in q.names.items() if n == k), stepper.current.node_id)
                       for k in "ab"}  # fmt: skip
    q.inputs["a"].value, q.inputs["b"].value = "6", "-4"
    assert q.grade()
    line_a, line_b = q.latex
    assert line_a == (
        r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial e} \cdot "
        r"\frac{\partial e}{\partial a} = \frac{\partial L}{\partial e} \cdot b = (-2)\,(-3) = 6"
    )
    assert line_b.endswith(r"\cdot a = (-2)\,(2) = -4")
    assert "$$" in q.result.value and "correct" in q.result.value


def test_show_me_reveals_without_a_check(stepper):
    q = stepper.quiz
    q.show_answer()
    assert 0 in q.answered and "the answer" in q.result.value
    assert q.latex == [r"\frac{\partial L}{\partial d} = f = -2",
                       r"\frac{\partial L}{\partial f} = d = 4"]  # fmt: skip
    stepper.next()
    stepper.back()
    assert "the chain rule" in q.result.value  # an answered step stays answered


def test_names_with_underscores_are_escaped_in_latex():
    x_in = tv.tensor(0.5, dtype="float64")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x_in)
        net_out = tv.tanh(x_in)
    tape.gradient(net_out, x_in)
    s = tv.BackpropStepper(tape, ask=True)
    s.quiz.show_answer()
    (line,) = s.quiz.latex
    assert line.startswith(r"\frac{\partial net\_out}{\partial x\_in} = 1 - net\_out^2")
    assert "<b>net_out = tanh(x_in)</b>" in s.quiz.question.value


def test_an_expression_name_is_one_term_in_the_chain_rule():
    """A lesson names an unnamed intermediate by what it computes (``x1w1 + x2w2``): in
    ``∂L/∂…`` it is one term, in parentheses, its words kept apart (``Add out``)."""
    from tapeviz.widgets.formulas import tex_name

    assert tex_name("x1w1 + x2w2") == r"(\text{x1w1 + x2w2})"
    assert tex_name("Add out") == r"(\text{Add out})"
    assert [tex_name(n) for n in ("net_loss", "dense/kernel", "e", "2")] == [
        r"net\_loss",
        "dense/kernel",
        "e",
        "2",
    ]


def test_upstream_left_out_is_told_apart_from_local_left_out(stepper):
    """At e = a × b with ∂L/∂e = -2: typing the local derivative alone (b = -3 for a) is "the
    gradient arriving … not multiplied in", typing ∂L/∂e alone is "the local derivative is
    left out" — a factor pattern used to blame the local derivative for both."""
    from tapeviz.widgets.stepper.ask import LOCAL_LEFT_OUT, UPSTREAM_LEFT_OUT

    q = stepper.quiz
    for _ in range(2):
        q.show_answer()
        stepper.next()
    q.inputs["a"].value, q.inputs["b"].value = "-3", "2"  # ∂e/∂a and ∂e/∂b alone
    assert not q.grade()
    assert q.feedback == {"a": UPSTREAM_LEFT_OUT, "b": UPSTREAM_LEFT_OUT}
    q.inputs["a"].value, q.inputs["b"].value = "-2", "-2"  # ∂L/∂e alone
    assert not q.grade()
    assert q.feedback == {"a": LOCAL_LEFT_OUT, "b": LOCAL_LEFT_OUT}
    assert "-2" not in UPSTREAM_LEFT_OUT + LOCAL_LEFT_OUT  # the sentences hold no number
