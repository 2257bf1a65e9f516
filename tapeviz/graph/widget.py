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

import pathlib
import re
import time
from collections import OrderedDict

import anywidget
import traitlets as t

from ..present.ahead import forget_unseen, make_room, run_ahead, running_loop, serialized
from .details import node_details
from .extract import extract
from .render import normalize_highlight, render_with_key
from .show import fit_width
from .target import mode_of, resolve_tape

_STATIC = pathlib.Path(__file__).resolve().parent.parent / "static"

AHEAD_CHARS = 8 << 20  # SVG text drawn ahead and sent per settled view (about 8 MB) ...
AHEAD_S = 1.5  # ... and kernel seconds spent on it (a 5,000-op picture: ~0.1 s each)
CACHE_CHARS = 48 << 20  # rendered pictures kept in the kernel
DETAILS_AHEAD = 160  # a graph of at most this many nodes sends every node's details at once
HELLO_DELAY_S = 0.25  # a new view is painted before the kernel starts drawing ahead
# the canvas a first view is laid out for (CSS px): the widget in JupyterLab's notebook at a
# 1400 px window, VIEW_HEIGHT of static/graph/panzoom.js high; LEGIBLE_PX: the smallest text
# it opens at
BOX_PX = (940, 600)
LEGIBLE_PX = 11
SMALL_AREA = 2.0  # op by op up to twice the box at LEGIBLE_PX: opened on the output, most shows
_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')
_FONT = re.compile(r'font-size="([\d.]+)"')
_NODE_ID = re.compile(r'<g id="node\d+" class="node[^"]*">\s*<title>([^<]*)</title>')
_CLUSTER_ID = re.compile(r"<title>cluster_x(c\d+)</title>")
_GROUP = re.compile(r"[cm]\d+")


def opening_scale(svg: str, box=BOX_PX) -> tuple[float, float, float]:
    """``(scale, text px, area)``: the scale (at most 1) at which ``svg`` fits ``box``
    whole, its smallest text in CSS px at that scale (Graphviz writes points: 1 pt = 4/3
    px), and its area at a legible scale over the box's (under 1: it fits).

    Example:
        >>> opening_scale('<svg width="300pt" height="150pt"><text font-size="9.00">')
        (1.0, 12.0, 0.11918833727344362)
    """
    m = _SVG_SIZE.search(svg)
    if m is None:
        return 1.0, 0.0, 0.0
    scale, px, area, _ = _opening(svg, box)
    return scale, px, area


def _opening(svg: str, box=BOX_PX) -> tuple[float, float, float, float]:
    """``opening_scale`` and the height drawn (CSS px)."""
    m = _SVG_SIZE.search(svg)
    if m is None:
        return 1.0, 0.0, 0.0, 0.0
    w, h = float(m.group(1)) * 4 / 3, float(m.group(2)) * 4 / 3
    font = min((float(f) for f in _FONT.findall(svg)), default=9.0) * 4 / 3
    scale = min(1.0, (box[0] - 8) / max(w, 1), (box[1] - 8) / max(h, 1))
    legible = min(1.0, LEGIBLE_PX / font)
    return scale, scale * font, (w * legible) * (h * legible) / (box[0] * box[1]), h * scale


# the view's ES module: anywidget loads one module (relative imports do not resolve from the
# blob it loads), so the parts under static/graph/ are joined in this order; each holds the
# top-level functions of one concern, and only the last has `export default`
VIEW_PARTS = (
    "dom.js",  # elements, the SVG parsed safely
    "panel.js",  # the details panel, the legend
    "toolbar.js",  # the elements and controls
    "panzoom.js",  # opening scale, zoom, pan, "fit"
    "nodes.js",  # selection, pointer, links, the stepper's highlights; a node's handlers
    "groups.js",  # open and fold groups, the breadcrumb
    "search.js",  # find a name
    "picture.js",  # parse, wire and show an SVG
    "cache.js",  # pictures drawn ahead by key, messages with Python
    "main.js",  # render: the parts wired together
)


def view_module() -> str:
    """The GraphWidget's ES module: ``VIEW_PARTS`` joined, each after a ``// --- name`` line."""
    folder = _STATIC / "graph"
    return "\n".join(f"// --- {p}\n{(folder / p).read_text()}" for p in VIEW_PARTS)


def picture_id(state: dict) -> tuple:
    """Python's own key of a view's state (its cache of pictures, what the view holds). It is
    never sent: a picture goes to the view with its state, and the view keys it (``keyOf``).

    Example:
        >>> picture_id({"mode": "both", "show_saved": 1, "show_values": False,
        ...             "collapse": "auto", "rankdir": "", "expanded": ["m0", "c3"]})
        ('both', True, False, 'auto', '', ('c3', 'm0'))
    """
    return (
        state["mode"],
        bool(state["show_saved"]),
        bool(state["show_values"]),
        state["collapse"],
        state["rankdir"],
        tuple(sorted(state["expanded"])),
    )


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
        self._cache: OrderedDict = OrderedDict()  # picture_id -> (state, svg, key), oldest first
        self._renders: OrderedDict = OrderedDict()  # layouts tried and drawn, the latest last
        self._layouts: dict = {}  # (mode, toggles, collapse, rankdir) -> the layout chosen
        self._details: dict = {}
        self._sent: set = set()  # picture_ids of the pictures the view holds
        self._generation = 0  # bumped by every redraw: work ahead for an older view stops
        self._views = 0  # views shown (hello, bye): none left, nothing is drawn ahead
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
                (svg, key), view_state = self._picture(state), state
                self._sent.add(picture_id(state))
            with self.hold_sync():  # one message: the view knows which picture this is
                self.view_state, self.key, self.svg, self.error = view_state, key, svg, ""
        except Exception as e:  # errors are part of the UI: shown in place of the graph
            self.error = f"graph could not be drawn: {type(e).__name__}: {e}"
            return
        self._draw_ahead()

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
        """``(collapse, merge, rankdir)`` of a view: what the first sight shows.

        The whole graph op by op when it fits the canvas (``BOX_PX``) with text of at least
        ``LEGIBLE_PX``, top-down or left-right, whichever is larger; else grouped by the
        model's structure (name scopes, ``nn`` layers, the statements and loop turns of the
        user's code), then with repeated groups merged. ``collapse`` "on" starts at the
        groups, "off" draws op by op; a ``rankdir`` the user gave is kept. Chosen once per
        mode and toggles, so that opening a group keeps the layout around it."""
        key = (mode, show_saved, show_values, collapse, rankdir)
        hit = self._layouts.get(key)
        if hit is not None:
            return hit
        drawn = len(self.data.ops) if mode != "backward" else 0
        drawn += len(self.data.backward_ops) if mode != "forward" else 0
        steps = [(False, None)] if collapse != "on" and drawn <= self._max_nodes else []
        if collapse == "off":
            steps = [(False, None)]
        else:
            steps += [(True, False), (True, True)]
        dirs = [rankdir] if rankdir else ["TB", "LR"]
        best = None
        for grouped, merge in steps:
            tried = []
            for rd in dirs:
                svg = self._render(mode, show_saved, show_values, (), {}, grouped, merge, rd)[0]
                tried.append((_opening(svg), rd))
            # of those that fit whole legibly, the lower (less of the notebook to scroll);
            # else the one drawn larger
            fit = [t for t in tried if t[0][1] >= LEGIBLE_PX - 0.05]
            pick = min(fit, key=lambda t: t[0][3]) if fit else max(tried, key=lambda t: t[0][0])
            (scale, px, area, _), rd = pick
            best = (grouped, merge, rd)
            if fit or (not grouped and area <= SMALL_AREA):
                break  # it fits; or a small graph, opened on its output, shows most of it
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

    # --- pictures drawn ahead ------------------------------------------------------------
    def _state(self, **over) -> dict:
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

    def _picture(self, state: dict) -> tuple[str, list]:
        """The picture of ``state`` (no highlight), rendered once and kept."""
        k = picture_id(state)
        hit = self._cache.get(k)
        if hit is None:
            hit = self._cache[k] = (state, *self._draw(**state))
            size = sum(len(v[1]) for v in self._cache.values())
            while size > CACHE_CHARS and len(self._cache) > 1:
                size -= len(self._cache.popitem(last=False)[1][1])
        self._cache.move_to_end(k)
        return hit[1:]

    def _draw_modes_ahead(self) -> None:
        """A small graph's other modes go with the first view: a switch is then instant."""
        if len(self.data.ops) > self._max_nodes or self.highlighted or not self.has_backward:
            return
        try:
            views = []
            for mode in ("forward", "backward", "both"):
                state = self._state(mode=mode)
                views.append([state, *self._picture(state)])
        except Exception:  # the current view is drawn; the others come when asked for
            return
        self._sent.update(picture_id(v[0]) for v in views)
        self.views = views

    def _neighbours(self) -> list[dict]:
        """The views one control away from the current one, likeliest first: the first
        groups opened, the opened ones folded, the single toggles and modes, the other
        groups, the rest of the toggle pairs, "fit"'s collapse."""
        svg, expanded = self.svg, list(self.expanded)
        opened = [
            self._state(expanded=expanded + [gid])
            for gid in dict.fromkeys(_NODE_ID.findall(svg))
            if _GROUP.fullmatch(gid) and gid not in expanded
        ]
        folded = [
            self._state(expanded=[e for e in expanded if e != gid])
            for gid in dict.fromkeys(_CLUSTER_ID.findall(svg))
        ] + ([self._state(expanded=[])] if expanded else [])  # "fold all"
        single, pairs = [], []
        if len(svg) < 200_000:  # modes and toggles of a graph small enough to draw them all
            modes = ("forward", "backward", "both") if self.has_backward else ("forward",)
            saved, values = not self.show_saved, not self.show_values
            single = [self._state(mode=m) for m in modes if m != self.mode]
            single += [self._state(show_saved=saved), self._state(show_values=values)]
            for flip in ({"show_saved": saved}, {"show_values": values}):
                pairs += [self._state(mode=m, **flip) for m in modes if m != self.mode]
            pairs += [self._state(mode=m, show_saved=saved, show_values=values) for m in modes]
        fit = [self._state(collapse="on")] if self.collapse == "auto" else []
        return opened[:4] + folded + single + opened[4:] + pairs + fit

    def _draw_ahead(self, delay: float = 0.01) -> None:
        """While the kernel is idle, render the neighbours and send them, one per turn of its
        event loop (a message from the view is handled between two), up to ``AHEAD_CHARS``
        and ``AHEAD_S``;
        a redraw stops the queue of an older view. Only while a view is shown (it says
        ``hello``; the first view is drawn before the kernel starts: ``delay``). Outside a
        kernel: nothing."""
        self._generation += 1
        if running_loop() is None or self.highlighted or self.error or not self._views:
            return
        generation, queue, budget = self._generation, self._neighbours(), [AHEAD_CHARS]
        deadline = [AHEAD_S]

        def one() -> bool:
            while queue:
                state = queue.pop(0)
                if picture_id(state) in self._sent:
                    continue
                t0 = time.perf_counter()
                try:
                    picture = self._picture(state)
                except Exception:
                    continue
                budget[0] -= len(picture[0])
                deadline[0] -= time.perf_counter() - t0
                if budget[0] < 0:
                    return False
                self._send_pictures([[state, *picture]])
                if deadline[0] < 0:
                    return False
                break
            return bool(queue)

        run_ahead(lambda: generation == self._generation, one, delay)

    def _send_pictures(self, pictures: list) -> None:
        """``[[state, svg, key], ...]`` to the view, which keys them by their state."""
        self._sent.update(picture_id(p[0]) for p in pictures)
        self.send({"pictures": pictures})

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

    @serialized
    def _on_message(self, _widget, content, _buffers) -> None:
        """The view's requests: ``hello`` (a new view: send the pictures drawn ahead and, for
        a small graph, every node's details), ``bye`` (a view removed: the last one stops
        the drawing ahead), ``want`` (a state: its picture), ``details`` (node ids)."""
        if not isinstance(content, dict):
            return
        if content.get("bye"):
            self._views = max(0, self._views - 1)
            if not self._views:
                self._generation += 1
                forget_unseen(lambda: not self._views, self._forget)
        if content.get("hello"):
            self._views += 1
            shown = [self.view_state] if self.view_state else []
            self._sent = {picture_id(s) for s in [v[0] for v in self.views] + shown}
            budget, pictures = AHEAD_CHARS, []
            for k, v in reversed(self._cache.items()):  # the latest first
                if k not in self._sent and len(v[1]) <= budget:
                    budget -= len(v[1])
                    pictures.append(list(v))
            if pictures:
                self._send_pictures(pictures)
            ids = [i for i in dict.fromkeys(_NODE_ID.findall(self.svg)) if not _GROUP.fullmatch(i)]
            if len(ids) <= DETAILS_AHEAD:
                self.send({"details": {i: self._details_of(i) for i in ids}})
            self._draw_ahead(delay=HELLO_DELAY_S)  # after the first view has been painted
        want = content.get("want")
        if isinstance(want, dict) and not self.highlighted:
            try:
                state = self._state(**{k: want[k] for k in self._state() if k in want})
                self._send_pictures([[state, *self._picture(state)]])
            except Exception:  # a bad request from the view: nothing to send
                pass
        ids = content.get("details")
        if isinstance(ids, list):
            self.send({"details": {str(i): self._details_of(str(i)) for i in ids[:50]}})

    def _forget(self) -> None:
        """No view for a while: keep the current picture, drop the others and the details
        (a view shown again asks for them)."""
        k = picture_id(self.view_state) if self.view_state else None
        self._cache = OrderedDict({k: self._cache[k]} if k in self._cache else {})
        self._renders.clear()  # the layouts tried for the first view (up to 12 pictures)
        self._details, self._sent = {}, set()
        self.views = []

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        if self.svg:
            data["image/svg+xml"] = fit_width(self.svg)  # a saved notebook shows the picture
        return data, meta
