"""The stepper's ask-then-show mode: at each step the student types the gradient each input
receives, gets it checked, then sees the chain-rule line with their names and numbers.

The graph is the lesson picture (``tapeviz.graph.lesson``): a tensor's grad reads "?" until
every step that sends it a gradient has been answered (or shown), and the edges of the
current step are lit.
"""

from __future__ import annotations

import ast

import ipywidgets as W
import numpy as np

from tapeviz.core.tensors.tensor import Tensor
from tapeviz.graph.lesson import lesson_graph
from tapeviz.present.ahead import serialized
from tapeviz.teach.slips import name_slip

from ...present.palette import FAIL, PASS
from ...present.text import html_text
from ..formulas import chain_rule_latex, tex_name


def _parse(text: str):
    """A number or a list of numbers from what the student typed; None if it is not one."""
    text = text.strip().replace("−", "-")
    if not text:
        return None
    try:
        value = ast.literal_eval(text)
        return np.asarray(value, dtype=np.float64)
    except (ValueError, SyntaxError, TypeError):
        return None


class AskPanel:
    """The question, the answer boxes, the verdicts and the worked lines for one stepper.

    Attributes:
        inputs: ``{input slot: Text}`` for the current step. ``answered``: steps answered
            (or shown). ``feedback``: ``{slot: sentence}`` of the last check. ``latex``: the
            worked lines shown (LaTeX).
    """

    def __init__(self, tape, names: dict, font_size: int = 14):
        self.tape, self.names, self.font_size = tape, names, font_size
        self.tex = {k: tex_name(v) for k, v in names.items()}  # names inside LaTeX
        self.loss = self.tex.get(tape.node(tape.backward_steps[0].node_id).outputs[0].id, "L")
        self.answered: set = set()
        self.inputs: dict = {}
        self.feedback: dict = {}
        self.latex: list = []
        self.index = 0
        self.on_change = lambda: None  # the stepper redraws its graph here
        self.question = W.HTMLMath()
        self.answers = W.VBox()
        self.check = W.Button(description="check", icon="check", button_style="primary")
        self.reveal = W.Button(description="show me", icon="eye")
        self.result = W.HTMLMath()
        self.check.on_click(lambda _: self.grade())
        self.reveal.on_click(lambda _: self.show_answer())
        buttons = W.HBox([self.check, self.reveal])
        self.box = W.VBox([self.question, self.answers, buttons, self.result])

    def _senders(self) -> dict:
        """``{tensor id: step indices that send it a gradient}``."""
        out: dict = {}
        for i, step in enumerate(self.tape.backward_steps):
            node = self.tape.node(step.node_id)
            for slot in step.grads:
                out.setdefault(node.inputs[slot].id, set()).add(i)
        return out

    def hidden(self) -> set:
        """Tensor ids whose grad the graph still hides."""
        return {t for t, steps in self._senders().items() if not steps <= self.answered}

    def lit(self) -> set:
        step = self.tape.backward_steps[self.index]
        node = self.tape.node(step.node_id)
        return {(node.inputs[s].id, node.id) for s in step.grads}

    def graph(self):
        """The lesson graph for the current state."""
        return lesson_graph(self.tape, self.names, hidden=self.hidden(), lit=self.lit(),
                            font_size=self.font_size)  # fmt: skip

    # --- one step ----------------------------------------------------------------------
    def _step(self):
        step = self.tape.backward_steps[self.index]
        return step, self.tape.node(step.node_id)

    def _label(self, node, slot: str) -> str:
        """``∂L/∂a`` in LaTeX; "this edge's share of" when ``a`` is read more than once."""
        tid = node.inputs[slot].id
        text = rf"\partial {self.loss}/\partial {self.tex.get(tid, slot)}"
        if (
            len(self._senders().get(tid, ())) > 1
            or list(node.inputs.values()).count(node.inputs[slot]) > 1
        ):
            return f"this edge's share of ${text}$"
        return f"${text}$"

    def show(self, index: int) -> None:
        """Ask the question of step ``index`` (0-based)."""
        self.index = index
        step, node = self._step()
        out = self.names.get(node.outputs[0].id, "y")
        arriving = rf"$\partial {self.loss}/\partial {tex_name(out)}"
        if node.outputs[0].id in self.hidden():  # an earlier step's answer: not given away
            known = f"{arriving}$ comes from an earlier step: answer that one first to see it. "
        else:
            known = f"Known: {arriving} = {_fmt(step.dy[0])}$. "
        self.question.value = (
            f"<b>{html_text(out)} = {html_text(_expression(node, self.names))}</b>. "
            f"{known}What does this step send back to each input?"
        )
        self.inputs = {slot: W.Text(placeholder="a number", description="",
                                    layout=W.Layout(width="140px"))
                       for slot in step.grads}  # fmt: skip
        self.answers.children = [
            W.HBox([W.HTMLMath(self._label(node, slot) + " ="), box])
            for slot, box in self.inputs.items()
        ]
        self.feedback, self.latex = {}, []
        self.result.value = self._worked_html() if index in self.answered else ""

    @serialized
    def grade(self) -> bool:
        """Check what was typed; on success show the worked lines. Returns: all correct."""
        step, node = self._step()
        self.feedback = {}
        for slot, box in self.inputs.items():
            got = _parse(box.value)
            want = np.asarray(step.grads[slot].peek(), np.float64)
            if got is None:
                self.feedback[slot] = "type a number (or a list of numbers)"
            else:
                self.feedback[slot] = name_slip(got, want, _slips(step.dy[0], want))
        correct = not any(self.feedback.values())
        if correct:
            self.answered.add(self.index)
            self.result.value = self._worked_html("correct")
            self.on_change()
        else:
            rows = "".join(
                f"<div style='color:{FAIL}'>not yet: {self._label(node, s)}: {html_text(msg)}</div>"
                for s, msg in self.feedback.items()
                if msg
            )
            self.result.value = rows
        return correct

    @serialized
    def show_answer(self) -> None:
        """Show the worked lines without checking (the step counts as answered)."""
        self.answered.add(self.index)
        self.result.value = self._worked_html("the answer")
        self.on_change()

    def _worked_html(self, heading: str = "answered") -> str:
        step, node = self._step()
        self.latex = []
        for slot, g in step.grads.items():
            line = chain_rule_latex(node, slot, step.dy[0], g, self.tex, self.loss)
            if line is None:  # no formula registered for this kernel: the number only
                name = self.tex.get(node.inputs[slot].id, slot)
                line = rf"\partial {self.loss}/\partial {name} = {_fmt(g)}"
            self.latex.append(line)
        body = "".join(f"<div>$${ln}$$</div>" for ln in self.latex)
        return f"<div style='color:{PASS}'><b>{heading}</b> — the chain rule:</div>{body}"


# the two halves of a step's answer, each left out: named apart (a ratio alone cannot)
UPSTREAM_LEFT_OUT = (
    "this is the local derivative alone: the gradient arriving at the output is not multiplied in"
)
LOCAL_LEFT_OUT = (
    "this is the gradient arriving at the output alone: the local derivative is left out"
)


def _slips(dy, want) -> dict:
    """``{sentence: the answer with that half left out}`` for one input of a step."""
    if dy is None:
        return {}
    d = np.asarray(dy.peek() if isinstance(dy, Tensor) else dy, np.float64)
    slips = {}
    if d.shape == want.shape and np.all(d != 0):
        slips[UPSTREAM_LEFT_OUT] = want / d
    if d.size == want.size:
        slips[LOCAL_LEFT_OUT] = d.reshape(want.shape)
    return slips


def _fmt(t) -> str:
    a = np.asarray(t.peek() if isinstance(t, Tensor) else t, np.float64)
    if a.size == 1:
        return f"{float(a.reshape(-1)[0]):.4g}"
    return np.array2string(a, precision=3, separator=", ")


def _expression(node, names: dict) -> str:
    """``"a × b"`` for a binary op, ``"tanh(x)"`` for a unary one (the user's names)."""
    from tapeviz.graph.lesson_names import OP_SYMBOLS

    args = [names.get(t.id, k) for k, t in node.inputs.items()]
    symbol = OP_SYMBOLS.get(node.kernel, str(node.label).lower())
    if len(args) == 2 and len(symbol) == 1:
        return f"{args[0]} {symbol} {args[1]}"
    return f"{symbol}({', '.join(args)})"
