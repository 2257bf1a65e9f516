"""``tv.BackpropStepper``: walk the backward pass one node at a time, in the engine's order."""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np

from tapeviz.graph.lesson import caller_names, lesson_min_scale, tensor_names

from ..present.palette import GREY, OKABE_ITO
from ._common import error_html, fmt_shape, preview, static_bundle
from ._graph import HighlightGraph, wrap_svg
from .stepper_ask import AskPanel
from .stepper_data import consumers, step_data, visited_highlight

_TITLE, _RULE, _NOTE = OKABE_ITO["blue"], GREY["rule"], GREY["edge"]

_NO_STEPS = (
    "this tape has no backward pass to step through: call tape.gradient(target, sources) "
    "first (the stepper shows tape.backward_steps, in the order the engine ran them)"
)


def _value_html(a, limit: int = 12) -> str:
    if a is None:
        return "<i>not available (released)</i>"
    a = np.asarray(a)
    if a.size <= limit:
        text = preview(a, limit)
    else:
        f = a.astype(np.float64)
        text = (
            f"shape {fmt_shape(a.shape)}: min {np.nanmin(f):.4g}, max {np.nanmax(f):.4g}, "
            f"mean {np.nanmean(f):.4g}\n{preview(a, 6)}"
        )
    return f"<pre style='margin:1px 0 4px;font-size:12px'>{html.escape(text)}</pre>"


def _section(title: str, body: str) -> str:
    return (
        f"<div style='margin:4px 0'><b style='color:{_TITLE}'>{html.escape(title)}</b>"
        f"<div style='margin-left:10px'>{body}</div></div>"
    )


class BackpropStepper(W.VBox):
    """Step forward and back through ``tape.backward_steps`` (the engine's real order).

    At each step the graph highlights the current node (visited ones dimmed) and a panel
    shows the incoming ``dy``, the saved values used, the local derivative (formula and
    numbers), the gradients produced and the accumulation into tensors used more than once.

    Args:
        tape: a ``tv.Tape`` on which ``gradient()`` was called (``persistent=True`` keeps
            the saved values; otherwise the inputs and outputs the node read are shown).
        graph: draw the graph (``tapeviz.graph``) beside the panel.
        ask: ask-then-show mode for a class: the lesson graph (the caller's variable names,
            ``data | grad``) hides each gradient until its step; the student types what the
            step sends to each input, it is checked, then the chain-rule line is shown with
            their names and numbers (``stepper.quiz`` is the ``AskPanel``).
        font_size: the lesson graph's font size in ask mode (24 or more for a lecture hall).

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([0.5, -1.0])
        >>> with tv.Tape(persistent=True) as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(tv.tanh(x) * x)
        >>> _ = tape.gradient(y, x)
        >>> s = tv.BackpropStepper(tape)
        >>> s.next.click(); s.title_text
        'step 2 of 3: Mul'
    """

    def __init__(self, tape, graph: bool = True, interval_ms: int = 900, ask: bool = False,
                 font_size: int = 14):  # fmt: skip
        self.tape, self.error, self.data, self.quiz = tape, None, {}, None
        frame_names = caller_names(2) if ask else {}
        self.graph_html = W.HTML()
        self.panel = W.HTML()
        self.title = W.HTML()
        try:
            steps = tape.backward_steps
            if not steps:
                raise ValueError(_NO_STEPS)
            self._users = consumers(tape)
            if ask:
                self.quiz = AskPanel(tape, tensor_names(tape, frame_names), font_size)
                self.quiz.on_change = self._draw_lesson
                graph = False
            self.graph_view = _live_graph(tape) if graph else None
            self._graph = HighlightGraph(tape) if graph and self.graph_view is None else None
        except Exception as e:
            self.error = e
            msg = e if isinstance(e, ValueError) else f"expected a tv.Tape: {e}"
            super().__init__([W.HTML(error_html("BackpropStepper", msg))])
            return
        controls = self._controls(len(steps), interval_ms)
        view = self.graph_view if self.graph_view is not None else self.graph_html
        below = self.quiz.box if self.quiz is not None else self.panel
        super().__init__([self.title, controls, view, below])
        self._show()

    def _controls(self, n: int, interval_ms: int) -> W.HBox:
        """first / back / play / next / last and the step slider, wired to ``go``."""
        self.slider = W.IntSlider(value=1, min=1, max=n, description="step")
        self.play = W.Play(value=1, min=1, max=n, interval=interval_ms, description="play")
        W.link((self.play, "value"), (self.slider, "value"))  # Python-side: tests drive it
        buttons = {}
        for word, icon, target in (
            ("first", "fast-backward", lambda: 0),
            ("back", "step-backward", lambda: self.index - 1),
            ("next", "step-forward", lambda: self.index + 1),
            ("last", "fast-forward", lambda: n - 1),
        ):
            b = W.Button(description=word, icon=icon, tooltip=f"{word} step",
                         layout=W.Layout(width="80px"))  # fmt: skip
            b.on_click(lambda _, target=target: self.go(target()))
            buttons[word] = b
        self.first, self.back, self.next, self.last = buttons.values()
        self.slider.observe(lambda ch: self._show(), "value")
        return W.HBox([self.first, self.back, self.play, self.next, self.last, self.slider])

    # --- state -------------------------------------------------------------------------
    @property
    def index(self) -> int:
        """The current step, 0-based."""
        return self.slider.value - 1

    @property
    def count(self) -> int:
        return len(self.tape.backward_steps)

    @property
    def current(self):
        """The current ``BackwardStep``."""
        return self.tape.backward_steps[self.index]

    @property
    def title_text(self) -> str:
        """The step count in words, e.g. ``"step 4 of 11: Tanh"``."""
        return f"step {self.index + 1} of {self.count}: {self.data.get('label', '')}"

    @property
    def highlight(self) -> dict:
        return visited_highlight(self.tape, self.index)

    def go(self, index: int) -> None:
        """Show step ``index`` (0-based; clamped to the range)."""
        self.slider.value = int(min(max(index, 0), self.count - 1)) + 1

    # --- rendering ---------------------------------------------------------------------
    def _show(self) -> None:
        i = self.index
        if self.quiz is not None:
            self._show_quiz(i)
            return
        try:
            self.data = step_data(self.tape, i, self._users)
            self.panel.value = self._panel_html()
        except Exception as e:
            self.panel.value = error_html(f"step {i + 1} could not be shown", e)
        self.title.value = (
            f"<h4 style='margin:2px 0'>{html.escape(self.title_text)} "
            f"<small>(node {self.current.node_id})</small></h4>"
        )
        self.first.disabled = self.back.disabled = i == 0
        self.next.disabled = self.last.disabled = i == self.count - 1
        if self.graph_view is not None:  # the live graph pans to the current node itself
            self.graph_view.highlight(self.highlight)
            self.graph_view.selected = f"n{self.current.node_id}"  # its details beside
            self.graph_html.value = wrap_svg(self.graph_view.svg)
        elif self._graph is not None:
            self.graph_html.value = self._graph.html(self.highlight)

    def _show_quiz(self, i: int) -> None:
        self.data = {"label": str(self.tape.node(self.current.node_id).label)}
        self.title.value = f"<h4 style='margin:2px 0'>{html.escape(self.title_text)}</h4>"
        self.first.disabled = self.back.disabled = i == 0
        self.next.disabled = self.last.disabled = i == self.count - 1
        self.quiz.show(i)
        self._draw_lesson()

    def _draw_lesson(self) -> None:
        try:
            svg, scale = self.quiz.graph().to_svg(), lesson_min_scale(self.quiz.font_size)
            self.graph_html.value = wrap_svg(svg, min_scale=scale)
        except Exception as e:
            self.graph_html.value = error_html("the lesson graph could not be drawn", e)

    def _panel_html(self) -> str:
        d = self.data
        first = _section("incoming dy", "".join(_value_html(a) for a in d["dy"]) + self._sum_note())
        if d["backward_node_ids"]:
            first += _section("ops the gradient ran", f"backward nodes {d['backward_node_ids']}")
        first += _section("saved values used", _saved_html(d))
        second = _section("local derivative", _local_html(d))
        second += _section("gradients produced", _grads_html(d))
        third = ""
        if d["accumulation"]:
            body = "".join(_accumulation_html(a) for a in d["accumulation"])
            third = _section("accumulation (tensor used more than once)", body)
        cols = "".join(
            f"<div style='flex:1;min-width:220px;padding:0 8px'>{c}</div>"
            for c in (first, second, third)
        )
        return (
            "<div style='display:flex;flex-wrap:wrap;font-family:sans-serif;"
            f"font-size:13px;border-top:1px solid {_RULE}'>{cols}</div>"
        )

    def _sum_note(self) -> str:
        """Where dy is a sum: the output was read by several nodes, each sent a share."""
        node = self.tape.node(self.current.node_id)
        readers = [r for out in node.outputs for r in self._users.get(out.id, [])]
        if len(readers) < 2:
            return ""
        edges = ", ".join(f"node {n} ({html.escape(k)})" for n, k in readers)
        return (
            f"<div style='color:{_NOTE}'><i>the sum of {len(readers)} shares: this output "
            f"is read by {edges}</i></div>"
        )

    def static_html(self) -> str:
        if self.error is not None:
            return error_html("BackpropStepper", self.error)
        below = self.quiz.question.value + self.quiz.result.value if self.quiz else self.panel.value
        return self.title.value + self.graph_html.value + below

    def _repr_mimebundle_(self, include=None, exclude=None):
        text = "BackpropStepper: " + (str(self.error) if self.error else self.title_text)
        return static_bundle(self, self.static_html(), text)


def _live_graph(tape):
    """The interactive graph (zoom, pan, click a node) or None when it cannot be drawn; the
    static ``HighlightGraph`` then stands in."""
    try:
        from tapeviz.graph import GraphWidget

        view = GraphWidget(tape)
    except Exception:
        return None
    return None if view.error else view


def _saved_html(d) -> str:
    rows = "".join(
        f"<div>{s['role']} <code>{html.escape(s['name'])}</code> "
        f"{fmt_shape(s['shape'])}{_value_html(s['value'])}</div>"
        for s in d["saved"]
    )
    return rows or "<i>nothing saved (the gradient needs only dy)</i>"


def _local_html(d) -> str:
    formula = f"<code style='font-size:13px'>{html.escape(d['formula'])}</code>"
    numbers = "".join(
        f"<div>&part;out/&part;<code>{html.escape(k)}</code> per element "
        f"(d{html.escape(k)} &divide; dy){_value_html(v)}</div>"
        for k, v in d["local"].items()
        if v is not None
    )
    return formula + (numbers or "<div><i>not elementwise: the formula maps dy to each "
                      "input's shape</i></div>")  # fmt: skip


def _grads_html(d) -> str:
    rows = "".join(
        f"<div>d<code>{html.escape(k)}</code> &rarr; {html.escape(d['targets'][k])}"
        f"{_value_html(v)}</div>"
        for k, v in d["grads"].items()
    )
    skipped = ", ".join(f"<code>{html.escape(k)}</code>" for k in d.get("skipped", []))
    if skipped:
        rows += (
            f"<div style='color:{_NOTE}'><i>not computed: {skipped} (no path to a watched "
            "source, so the engine skipped it)</i></div>"
        )
    return rows or "<i>no gradient needed here</i>"


def _accumulation_html(a) -> str:
    rows = "".join(
        f"<li>{'<b>this step</b>: ' if sh['this_step'] else ''}node {sh['node_id']} "
        f"({html.escape(sh['label'])}, input <code>{html.escape(sh['input'])}</code>)"
        f"{_value_html(sh['value'])}</li>"
        for sh in a["shares"]
    )
    return (
        f"<div><code>{html.escape(a['input'])}</code> = {html.escape(a['tensor'])} is read "
        f"by {a['readers']} nodes; {len(a['shares'])} of their gradients so far:<ul "
        f"style='margin:2px 0'>{rows}</ul>running total{_value_html(a['total'])}</div>"
    )
