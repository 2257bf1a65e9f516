"""``tv.GraphWidget``: the tape's graph in JupyterLab — click a node, zoom, pan, switch views.

Why anywidget: the front end is one small ES module (``tapeviz/static/graph_widget.js``)
shipped inside the Python package, so there is no npm build and no JupyterLab extension to
install or keep in step; the same widget runs in JupyterLab, Notebook 7, VS Code and Colab.
Python owns the state (ipywidgets traits synced to the view): the view only reports clicks
(``selected``) and toolbar choices (``mode``, ``show_saved``, ``show_values``); Python
renders ``svg`` and computes ``details``, so every behaviour is testable without a browser.
"""

from __future__ import annotations

import pathlib

import anywidget
import traitlets as t

from .details import node_details
from .extract import extract
from .render import normalize_highlight, render_with_key
from .show import fit_width, mode_of, resolve_tape

_STATIC = pathlib.Path(__file__).resolve().parent.parent / "static"


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

    _esm = _STATIC / "graph_widget.js"
    _css = _STATIC / "graph_widget.css"

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
    views = t.Dict(help="{mode: [svg, key]} drawn ahead: a mode switch needs no round trip").tag(
        sync=True
    )
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
        tape, note = resolve_tape(target, args, kwargs)
        self.tape = tape
        self.data = extract(tape)
        self._max_nodes = max_nodes
        self._engine = engine
        self._ready = False
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
        """Render ``svg`` (and ``views``, ``key``) from the current traits."""
        if not self._ready:
            return
        if self.mode != "forward" and not self.has_backward:
            self.error = (
                f"no backward pass to show in mode {self.mode!r}: call tape.gradient(...) first, "
                "or build the widget from a function: tv.GraphWidget(f, x)"
            )
            return
        try:
            svg, key = self._draw(self.mode)
            self.views = views = {self.mode: [svg, key]}
            self.key, self.svg, self.error = key, svg, ""  # sent now: the view redraws
            if len(self.data.ops) <= self._max_nodes and not self.highlighted:
                for mode in ("forward", "backward", "both") if self.has_backward else ():
                    views.setdefault(mode, list(self._draw(mode)))  # a switch is then instant
                self.views = dict(views)
        except Exception as e:  # errors are part of the UI: shown in place of the graph
            self.error = f"graph could not be drawn: {type(e).__name__}: {e}"

    def _draw(self, mode: str) -> tuple[str, list]:
        return render_with_key(
            self.data,
            engine=self._engine,
            mode=mode,
            show_saved=self.show_saved,
            show_values=self.show_values,
            rankdir=self.rankdir or None,
            highlight=self.highlighted,
            max_nodes=self._max_nodes,
            collapse={"auto": None, "on": True, "off": False}[self.collapse],
            expand=self.expanded,
        )

    @t.observe("mode")
    def _on_mode(self, change) -> None:
        if change["new"] in self.views and self.has_backward:
            self.svg, self.key = self.views[change["new"]]  # the view already shows it
            return
        self.redraw()

    @t.observe("show_saved", "show_values", "rankdir", "highlighted", "collapse", "expanded")
    def _on_view_change(self, change) -> None:
        self.redraw()

    @t.observe("selected")
    def _on_select(self, change) -> None:
        if not change["new"]:
            self.details = {}
            return
        try:
            self.details = node_details(self.tape, self.data, change["new"])
        except Exception as e:
            self.details = {
                "id": change["new"],
                "kind": "error",
                "title": change["new"],
                "rows": [["error", f"{type(e).__name__}: {e}"]],
                "sections": [],
            }

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        if self.svg:
            data["image/svg+xml"] = fit_width(self.svg)  # a saved notebook shows the picture
        return data, meta
