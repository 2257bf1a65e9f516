"""``tv.GraphWidget``: the tape's graph in JupyterLab — click a node, zoom, pan, switch views.

Why anywidget: the front end is one small ES module shipped inside the Python package (the
parts in ``tapeviz/static/graph/``, joined by ``view_module``), so there is no npm build and
no JupyterLab extension to install or keep in step; the same widget runs in JupyterLab,
Notebook 7, VS Code and Colab.
Python owns the state (ipywidgets traits synced to the view): the view reports clicks
(``selected``) and toolbar choices (``mode``, ``show_saved``, ``show_values``, ``expanded``);
Python renders ``svg`` and computes ``details``, so every behaviour is testable without a
browser.

Why the view answers at once: a round trip through the kernel costs 50-150 ms in JupyterLab
before any work is done, so the pictures a control leads to are drawn ahead. ``views`` holds
the other modes of a small graph; while the kernel is idle, Python renders the neighbours of
the current view (the toggles, each collapsed group opened, each opened one folded) and sends
them as custom messages, each picture with the state it shows (the view keys them: the key
is built in one place, graph/cache.js's ``keyOf``); a pointer resting on a group asks for that
group's picture. The view shows a picture it holds as soon as the control is used and tells
Python afterwards (Python then sets the same ``svg``). The details of every node of a small
graph go along too, and the stepper's highlights are ``frames`` that the view applies to the
SVG it shows (classes and a marker: no new layout).
"""

from __future__ import annotations

from collections import OrderedDict

import anywidget
import traitlets as t

from ...present.ahead import make_room, serialized
from ..details import node_details
from ..extract import extract
from ..opening import BOX_PX, LEGIBLE_PX, choose_layout, opening_scale
from ..render import normalize_highlight, render_with_key
from ..show import fit_width
from ..target import mode_of, resolve_tape
from ..view_parts import STATIC, VIEW_PARTS, view_module
from .ahead import PicturesAhead, Shown, picture_id

__all__ = [
    "BOX_PX",
    "LEGIBLE_PX",
    "VIEW_PARTS",
    "GraphWidget",
    "opening_scale",
    "picture_id",
    "view_module",
]


class GraphWidget(anywidget.AnyWidget):
    """Interactive graph of a tape: forward / backward / both, saved values, values, details.

    Args:
        target: a Tape, a Tensor made on a live tape, or a function (then ``args`` follow).
        *args: arguments of ``target`` when it is a function.
        backward: initial view: False (forward), True (backward) or ``"both"``.
        show_saved, show_values, rankdir, max_nodes, collapse, engine: as ``show_graph``.

    Example:
        >>> import tapeviz as tv
        >>> w = tv.GraphWidget(lambda x: tv.sum(x * x), tv.tensor([1.0, 2.0]))
        >>> w.selected = "n0"
        >>> w.details["rows"][0]
        ['kernel', 'Mul']
    """

    _esm = view_module()
    _css = STATIC / "graph_widget.css"

    svg = t.Unicode("", help="the rendered graph, SVG text").tag(sync=True)
    mode = t.Enum(
        ["forward", "backward", "both"], "forward", help="which graph: forward, backward, both"
    ).tag(sync=True)
    show_saved = t.Bool(True, help="draw saved-for-backward values").tag(sync=True)
    show_values = t.Bool(True, help="small tensors show data | grad").tag(sync=True)
    rankdir = t.Unicode("", help="'LR', 'TB' or '' (choose by size)").tag(sync=True)
    selected = t.Unicode("", help="id of the clicked node ('n3', 't5', ...), '' for none").tag(
        sync=True
    )
    pointed = t.Unicode(
        "", help="id of the node under the pointer, or one a linked view points at (show_code)"
    ).tag(sync=True)
    details = t.Dict(help="side-panel data for the selected node (computed in Python)").tag(
        sync=True
    )
    highlighted = t.Dict(help="{node id: 'error'|'current'|'visited'|'selected'}").tag(sync=True)
    has_backward = t.Bool(False, help="the tape has a backward pass to show").tag(sync=True)
    error = t.Unicode("", help="a message shown in place of the graph when drawing fails").tag(
        sync=True
    )
    key = t.List(help="the legend as data: [fill, border, style, words] per style drawn").tag(
        sync=True
    )
    views = t.List(
        help="[[state, svg, key], ...] drawn ahead (the other modes): a switch needs no round trip"
    ).tag(sync=True)
    view_state = t.Dict(
        help="the state `svg` shows ({} when highlighted: not reused for another view)"
    ).tag(sync=True)
    frames = t.List(
        help="highlights the browser applies, one {node id: state} per step (the stepper)"
    ).tag(sync=True)
    frame = t.Int(0, help="which of `frames` is shown, 1-based; 0 for none").tag(sync=True)
    collapse = t.Enum(
        ["auto", "on", "off"], "auto", help="groups: auto (past max_nodes ops), on or off"
    ).tag(sync=True)
    expanded = t.List(t.Unicode(), help="ids of collapsed groups drawn op by op").tag(sync=True)

    def __init__(
        self,
        target,
        *args,
        backward=False,
        show_saved=True,
        show_values=True,
        rankdir=None,
        max_nodes=60,
        collapse=None,
        engine="auto",
        **kwargs,
    ):
        make_room()
        tape, note = resolve_tape(target, args, kwargs)
        self.tape = tape
        self.data = extract(tape)
        self._max_nodes = max_nodes
        self._engine = engine
        self._ready = False
        self._renders: OrderedDict = OrderedDict()  # layouts tried and drawn, the latest last
        self._layouts: dict = {}  # (mode, toggles, collapse, rankdir) -> the layout chosen
        self._details: dict = {}
        self.ahead = PicturesAhead(  # the pictures kept, drawn ahead and sent to the view
            draw=lambda state: self._draw(**state),
            shown=self._shown,
            send=lambda message: self.send(message),
            details=self._details_of,
            forget=self._forget,
        )
        super().__init__(
            collapse={None: "auto", True: "on", False: "off"}[collapse],
            mode=mode_of(backward),
            show_saved=show_saved,
            show_values=show_values,
            rankdir=rankdir or "",
            has_backward=self.data.meta["has_backward"],
        )
        if note is not None:
            self.error = f"backward failed: {note}"
        self._ready = True
        self.redraw()
        self._draw_modes_ahead()
        self.on_msg(self._on_message)

    def highlight(self, states: dict | None = None, **more) -> GraphWidget:
        """Highlight nodes: ``w.highlight({"n3": "error: wrong scale", 5: "current"})``.

        Integer keys are tape node ids. ``w.highlight({})`` clears. Returns the widget.
        """
        merged = dict(states or {}, **more)
        normalize_highlight(merged)  # raise early, naming the bad state
        self.highlighted = {
            (f"n{k}" if isinstance(k, int) else str(k)): v for k, v in merged.items()
        }
        return self

    def redraw(self) -> None:
        """Render ``svg`` (and ``key``, ``view_state``) from the current traits."""
        if not self._ready:
            return
        if self.mode != "forward" and not self.has_backward:
            self.error = (
                f"no backward pass to show in mode {self.mode!r}: call tape.gradient(...) first, "
                "or build the widget from a function: tv.GraphWidget(f, x)"
            )
            return
        try:
            state = self._state()
            if self.highlighted:
                (svg, key), view_state = self._draw(**state), {}
            else:
                (svg, key), view_state = self.ahead.picture(state, shown=True), state
            with self.hold_sync():  # one message: the view knows which picture this is
                self.view_state, self.key, self.svg, self.error = view_state, key, svg, ""
        except Exception as e:  # errors are part of the UI: shown in place of the graph
            self.error = f"graph could not be drawn: {type(e).__name__}: {e}"
            return
        self.ahead.restart()

    def _state(self, **over) -> dict:
        """The view's state (``picture_id``'s fields) from the traits, with ``over``."""
        state = {
            "mode": self.mode,
            "show_saved": self.show_saved,
            "show_values": self.show_values,
            "collapse": self.collapse,
            "rankdir": self.rankdir,
            "expanded": list(self.expanded),
        }
        state.update(over)
        return state

    def _shown(self) -> Shown:
        """What the view shows now, for the pictures drawn ahead (``widget_ahead``)."""
        highlighted, failed = bool(self.highlighted), bool(self.error)
        return Shown(self._state(), self.svg, self.has_backward, highlighted, failed)

    def _draw_modes_ahead(self) -> None:
        """A small graph's other modes go with the first view: a switch is then instant."""
        if len(self.data.ops) > self._max_nodes or self.highlighted or not self.has_backward:
            return
        views = self.ahead.modes([self._state(mode=m) for m in ("forward", "backward", "both")])
        if views:
            self.views = views

    @serialized
    def _on_message(self, _widget, content, _buffers) -> None:
        """The view's messages (``hello``, ``bye``, ``want``, ``details``): ``ahead``'s."""
        self.ahead.message(content)

    def _forget(self) -> None:
        """No view for a while (``ahead`` kept the current picture): drop the layouts tried
        for the first view (up to 12 pictures), the details and the other modes."""
        self._renders.clear()
        self._details = {}
        self.views = []

    def svg_with(self, highlight: dict) -> str:
        """The current view drawn by Graphviz with ``highlight`` written into it (for a
        static picture of what the browser shows with ``frames``)."""
        return self._draw(**self._state(), highlight=highlight)[0]

    def _draw(self, mode, show_saved, show_values, collapse, rankdir, expanded, highlight=None):
        layout = self._layout(mode, show_saved, show_values, collapse, rankdir)
        highlight = self.highlighted if highlight is None else highlight
        return self._render(mode, show_saved, show_values, tuple(expanded), highlight, *layout)

    def _render(self, mode, show_saved, show_values, expanded, highlight, collapse, merge, rd):
        key = (mode, show_saved, show_values, expanded, collapse, merge, rd)
        hit = None if highlight else self._renders.get(key)
        if hit is None:
            hit = render_with_key(
                self.data,
                engine=self._engine,
                mode=mode,
                show_saved=show_saved,
                show_values=show_values,
                rankdir=rd,
                highlight=highlight,
                max_nodes=self._max_nodes,
                collapse=collapse,
                merge=merge,
                expand=expanded,
            )
            if not highlight:
                self._renders[key] = hit
                while len(self._renders) > 12:
                    self._renders.popitem(last=False)
        return hit

    def _layout(self, mode, show_saved, show_values, collapse, rankdir) -> tuple:
        """``(collapse, merge, rankdir)`` of a view (``opening.choose_layout``), chosen once
        per mode and toggles, so that opening a group keeps the layout around it."""
        key = (mode, show_saved, show_values, collapse, rankdir)
        hit = self._layouts.get(key)
        if hit is not None:
            return hit
        drawn = len(self.data.ops) if mode != "backward" else 0
        drawn += len(self.data.backward_ops) if mode != "forward" else 0

        def draw(grouped, merge, rd) -> str:
            return self._render(mode, show_saved, show_values, (), {}, grouped, merge, rd)[0]

        best = choose_layout(draw, drawn, self._max_nodes, collapse, rankdir)
        self._layouts[key] = best
        return best

    @t.observe(
        "mode", "show_saved", "show_values", "rankdir", "highlighted", "collapse", "expanded"
    )
    @serialized
    def _on_view_change(self, change) -> None:
        self.redraw()

    @t.observe("selected")
    @serialized
    def _on_select(self, change) -> None:
        self.details = self._details_of(change["new"]) if change["new"] else {}

    def _details_of(self, node_id: str) -> dict:
        hit = self._details.get(node_id)
        if hit is None:
            try:
                hit = node_details(self.tape, self.data, node_id)
            except Exception as e:
                hit = {
                    "id": node_id,
                    "kind": "error",
                    "title": node_id,
                    "rows": [["error", f"{type(e).__name__}: {e}"]],
                    "sections": [],
                }
            self._details[node_id] = hit
        return hit

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        if self.svg:
            data["image/svg+xml"] = fit_width(self.svg)  # a saved notebook shows the picture
        return data, meta
