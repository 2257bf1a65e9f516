"""``tv.BackpropStepper``: walk the backward pass one node at a time, in the engine's order."""

from __future__ import annotations

import ipywidgets as W

from tapeviz.graph.lesson import caller_names, lesson_min_scale, tensor_names
from tapeviz.present.ahead import serialized

from ...present.palette import GREY
from ...present.text import html_text
from ..common import error_html, static_bundle
from ..highlight import HighlightGraph, wrap_svg
from .ask import AskPanel
from .data import consumers, step_data, visited_highlight
from .html import panel_html, sum_note
from .view import StepperView

_NOTE = GREY["edge"]

# a tape with at most this many steps has every step's panel drawn at once (the view then
# steps without the kernel); past it, the kernel sends each step's panel as it is shown
PAGES_AT_ONCE = 400

_NO_STEPS = (
    "this tape has no backward pass to step through: call tape.gradient(target, sources) "
    "first (the stepper shows tape.backward_steps, in the order the engine ran them)"
)


class BackpropStepper(W.VBox):
    """Step forward and back through ``tape.backward_steps`` (the engine's real order).

    At each step the graph highlights the current node (visited ones dimmed) and a panel
    shows the incoming ``dy``, the saved values used, the local derivative (formula and
    numbers), the gradients produced and the accumulation into tensors used more than once.

    Every step's title and panel are made at once: the controls (``StepperView``, drawn in
    the browser: first / back / play / next / last and the step slider) show a step without
    a round trip to the kernel and are linked in the browser to the panel and the graph's
    highlight (``GraphWidget.frames``). ``first()``, ``back()``, ``next()``, ``last()`` and
    ``go(i)`` drive it from Python. Ask mode has the same controls; each answer is checked
    in Python.

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
        >>> s.next(); s.title_text
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
        n = len(steps)
        if self.quiz is not None:  # the titles only: the quiz draws the rest in Python
            self._pages, titles = [], [self._title(i) for i in range(n)]
        else:
            self._pages = [self._page(i) for i in range(min(n, PAGES_AT_ONCE))]
            titles = [p[0] for p in self._pages] if n <= PAGES_AT_ONCE else []
        self.head = StepperView(part="head", count=n, interval_ms=interval_ms, pages=titles)
        self.head.observe(lambda ch: self._show(), "value")  # the view's clicks: Python follows
        if self.quiz is not None:
            super().__init__([self.head, self.graph_html, self.quiz.box])
        else:
            super().__init__([self.head, *self._linked_views(n)])
        self._show()

    def _linked_views(self, n: int) -> list:
        """The graph and the panel, linked in the browser to the head's ``value``."""
        at_once = n <= PAGES_AT_ONCE
        self.panel_view = StepperView(part="panel", count=n,
                                      pages=[p[1] for p in self._pages] if at_once else [])  # fmt: skip
        self._links = [W.jslink((self.head, "value"), (self.panel_view, "value"))]
        if self.graph_view is None:
            return [self.graph_html, self.panel_view]
        self.graph_view.frames = [  # the highlight of every step, applied in the browser
            {f"n{k}": v for k, v in visited_highlight(self.tape, i).items()} for i in range(n)
        ]
        self._links.append(W.jslink((self.head, "value"), (self.graph_view, "frame")))
        return [self.graph_view, self.panel_view]

    def _page(self, i: int) -> tuple[str, str, dict]:
        """Step ``i``'s title and panel HTML and its data."""
        data = {"label": str(self.tape.node(self.tape.backward_steps[i].node_id).label)}
        try:
            data = step_data(self.tape, i, self._users)
            node_id = self.tape.backward_steps[i].node_id
            panel = panel_html(data, sum_note(self.tape, self._users, node_id))
        except Exception as e:
            panel = error_html(f"step {i + 1} could not be shown", e)
        return self._title(i, data), panel, data

    def _title(self, i: int, data: dict | None = None) -> str:
        """Step ``i``'s title as HTML: ``step 2 of 3: Mul (node 1)``."""
        node_id = self.tape.backward_steps[i].node_id
        label = (data or {}).get("label", str(self.tape.node(node_id).label))
        return (
            f"<h4 style='margin:2px 0'>{html_text(f'step {i + 1} of {self.count}: {label}')} "
            f"<span style='font-weight:normal;color:{_NOTE}'>(node {node_id})</span></h4>"
        )

    # --- state -------------------------------------------------------------------------
    @property
    def index(self) -> int:
        """The current step, 0-based."""
        return self.head.value - 1

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

    @serialized
    def go(self, index: int) -> None:
        """Show step ``index`` (0-based; clamped to the range), as the view's controls do."""
        self.head.value = int(min(max(index, 0), self.count - 1)) + 1

    def first(self) -> None:
        """The first step (the view's "first" button)."""
        self.go(0)

    def back(self) -> None:
        """The step before this one ("back")."""
        self.go(self.index - 1)

    def next(self) -> None:
        """The step after this one ("next")."""
        self.go(self.index + 1)

    def last(self) -> None:
        """The last step ("last")."""
        self.go(self.count - 1)

    # --- rendering ---------------------------------------------------------------------
    @serialized
    def _show(self) -> None:
        i = self.index
        if self.quiz is not None:
            self._show_quiz(i)
            return
        title, panel, self.data = self._pages[i] if i < len(self._pages) else self._page(i)
        self.panel.value, self.title.value = panel, title
        if self.count > PAGES_AT_ONCE:  # the view has no pages: send this one
            with self.head.hold_sync(), self.panel_view.hold_sync():
                self.head.page, self.head.page_at = title, i + 1
                self.panel_view.page, self.panel_view.page_at = panel, i + 1
        if self.graph_view is not None:  # the view applies frames[i] itself; this is Python's
            self.graph_view.frame = i + 1
            self.graph_view.selected = f"n{self.current.node_id}"  # its details beside
        elif self._graph is not None:
            self.graph_html.value = self._graph.html(self.highlight)

    def _show_quiz(self, i: int) -> None:
        self.data = {"label": str(self.tape.node(self.current.node_id).label)}
        self.title.value = self.head.pages[i]
        self.quiz.show(i)
        self._draw_lesson()

    def _draw_lesson(self) -> None:
        try:
            svg, scale = self.quiz.graph().to_svg(), lesson_min_scale(self.quiz.font_size)
            self.graph_html.value = wrap_svg(svg, min_scale=scale)
        except Exception as e:
            self.graph_html.value = error_html("the lesson graph could not be drawn", e)

    def static_html(self) -> str:
        if self.error is not None:
            return error_html("BackpropStepper", self.error)
        below = self.quiz.question.value + self.quiz.result.value if self.quiz else self.panel.value
        graph = self.graph_html.value
        if self.graph_view is not None:  # the live graph highlights in the browser: draw it
            graph = wrap_svg(self._static_graph())
        return self.title.value + graph + below

    def _static_graph(self) -> str:
        """The graph with this step's highlight, drawn by Graphviz (saved notebooks)."""
        try:
            return self.graph_view.svg_with(self.graph_view.frames[self.index])
        except Exception:  # the picture without the highlight rather than none
            return self.graph_view.svg

    def _repr_mimebundle_(self, include=None, exclude=None):
        text = "BackpropStepper: " + (str(self.error) if self.error else self.title_text)
        return static_bundle(self, self.static_html(), text)


def _live_graph(tape):
    """The interactive graph (zoom, pan, click a node) or None when it cannot be drawn; the
    static ``HighlightGraph`` then stands in."""
    try:
        from tapeviz.graph import GraphWidget

        # the stepper marks ops one by one: op by op (not grouped) up to the widget's budget
        view = GraphWidget(tape, collapse=False if len(tape.nodes) <= 60 else None)
    except Exception:
        return None
    return None if view.error else view
