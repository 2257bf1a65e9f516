"""Pictures a GraphWidget draws ahead: the views one control away, rendered while the kernel
is idle and sent to the view with the state each shows (see ``widget``'s docstring).

``PicturesAhead`` is one object the widget owns (``GraphWidget.ahead``); it sees the widget
only through the functions it is given, never its attributes.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ...present.ahead import forget_unseen, run_ahead, running_loop

AHEAD_CHARS = 8 << 20  # SVG text drawn ahead and sent per settled view (about 8 MB) ...
AHEAD_S = 1.5  # ... and kernel seconds spent on it (a 5,000-op picture: ~0.1 s each)
# rendered pictures kept in the kernel. Measured (bench/house_measurements.md: sessions of
# 30 clicks on a 1,000-op tape): 16 MB keeps 81-89% of the render time 48 MB saved, 8 MB
# 58-84%; the view keeps its own 48 MB (graph/cache.js), which decides what is instant
CACHE_CHARS = 16 << 20
DETAILS_AHEAD = 160  # a graph of at most this many nodes sends every node's details at once
HELLO_DELAY_S = 0.25  # a new view is painted before the kernel starts drawing ahead
_NODE_ID = re.compile(r'<g id="node\d+" class="node[^"]*">\s*<title>([^<]*)</title>')
_CLUSTER_ID = re.compile(r"<title>cluster_x(c\d+)</title>")
_GROUP = re.compile(r"[cm]\d+")


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


@dataclass(frozen=True)
class Shown:
    """What the widget shows now, as the work ahead needs it: the view's ``state`` (its
    traits, ``picture_id``'s fields), its ``svg``, whether the tape ``has_backward``, whether
    the picture is ``highlighted`` (then it is not the state's picture, and nothing is drawn
    ahead or sent for the asking) and whether drawing it ``failed``."""

    state: dict
    svg: str
    has_backward: bool
    highlighted: bool = False
    failed: bool = False

    def but(self, **over) -> dict:
        """The state of the view that ``over`` (a control's change) leads to."""
        return {**self.state, **over}


class PicturesAhead:
    """A GraphWidget's pictures: rendered once and kept (``picture``), drawn ahead while the
    kernel is idle and sent to the view (``restart``), and the view's messages
    (``message``: ``hello``, ``bye``, ``want``, ``details``).

    Args:
        draw: ``draw(state) -> (svg, legend)``, the widget's picture of a state.
        shown: ``shown() -> Shown``, the view shown now.
        send: ``send(message)``, a custom message to the widget's views.
        details: ``details(node_id) -> dict``, a node's side-panel data.
        forget: called when no view has been left for a while, after this object dropped its
            pictures: the widget drops what it can compute again.
    """

    def __init__(
        self,
        draw: Callable[[dict], tuple],
        shown: Callable[[], Shown],
        send: Callable[[dict], None],
        details: Callable[[str], dict],
        forget: Callable[[], None],
    ):
        self._draw, self._shown, self._send = draw, shown, send
        self._details, self._forget_host = details, forget
        self._cache: OrderedDict = OrderedDict()  # picture_id -> (state, svg, key), oldest first
        self._sent: set = set()  # picture_ids of the pictures the view holds
        self._modes: set = set()  # picture_ids of the pictures in the widget's ``views``
        self._generation = 0  # bumped by every restart: work ahead for an older view stops
        self.views = 0  # views shown (hello, bye): none left, nothing is drawn ahead

    def kept(self) -> set:
        """The picture_ids of the pictures kept in the kernel."""
        return set(self._cache)

    def picture(self, state: dict, shown: bool = False) -> tuple[str, list]:
        """The picture of ``state`` (no highlight), rendered once and kept; ``shown``: the
        widget shows it now (the view gets it as the ``svg`` trait)."""
        k = picture_id(state)
        hit = self._cache.get(k)
        if hit is None:
            hit = self._cache[k] = (state, *self._draw(state))
            size = sum(len(v[1]) for v in self._cache.values())
            while size > CACHE_CHARS and len(self._cache) > 1:
                size -= len(self._cache.popitem(last=False)[1][1])
        self._cache.move_to_end(k)
        if shown:
            self._sent.add(k)
        return hit[1:]

    def modes(self, states: list[dict]) -> list:
        """``[[state, svg, key], ...]`` of ``states`` (a small graph's other modes, for the
        widget's ``views``: a switch is then instant); [] when one cannot be drawn."""
        try:
            views = [[state, *self.picture(state)] for state in states]
        except Exception:  # the current view is drawn; the others come when asked for
            return []
        self._modes = {picture_id(v[0]) for v in views}
        self._sent |= self._modes
        return views

    def restart(self, delay: float = 0.01) -> None:
        """While the kernel is idle, render the neighbours of the view shown and send them,
        one per turn of its event loop (a message from the view is handled between two), up
        to ``AHEAD_CHARS`` and ``AHEAD_S``; a restart stops the queue of an older view. Only
        while a view is shown (it says ``hello``; the first view is drawn before the kernel
        starts: ``delay``). Outside a kernel: nothing."""
        self._generation += 1
        shown = self._shown()
        if running_loop() is None or shown.highlighted or shown.failed or not self.views:
            return
        generation, queue, budget = self._generation, neighbours(shown), [AHEAD_CHARS]
        deadline = [AHEAD_S]

        def one() -> bool:
            while queue:
                state = queue.pop(0)
                if picture_id(state) in self._sent:
                    continue
                t0 = time.perf_counter()
                try:
                    picture = self.picture(state)
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
        self._send({"pictures": pictures})

    def message(self, content) -> None:
        """The view's requests: ``hello`` (a new view: send the pictures drawn ahead and, for
        a small graph, every node's details), ``bye`` (a view removed: the last one stops
        the drawing ahead), ``want`` (a state: its picture), ``details`` (node ids)."""
        if not isinstance(content, dict):
            return
        if content.get("bye"):
            self.views = max(0, self.views - 1)
            if not self.views:
                self._generation += 1
                forget_unseen(lambda: not self.views, self._forget)
        shown = self._shown()
        if content.get("hello"):
            self._hello(shown)
        want = content.get("want")
        if isinstance(want, dict) and not shown.highlighted:
            try:
                state = shown.but(**{k: want[k] for k in shown.state if k in want})
                self._send_pictures([[state, *self.picture(state)]])
            except Exception:  # a bad request from the view: nothing to send
                pass
        ids = content.get("details")
        if isinstance(ids, list):
            self._send({"details": {str(i): self._details(str(i)) for i in ids[:50]}})

    def _hello(self, shown: Shown) -> None:
        self.views += 1
        now = set() if shown.highlighted else {picture_id(shown.state)}
        self._sent = self._modes | now
        budget, pictures = AHEAD_CHARS, []
        for k, v in reversed(self._cache.items()):  # the latest first
            if k not in self._sent and len(v[1]) <= budget:
                budget -= len(v[1])
                pictures.append(list(v))
        if pictures:
            self._send_pictures(pictures)
        ids = [i for i in dict.fromkeys(_NODE_ID.findall(shown.svg)) if not _GROUP.fullmatch(i)]
        if len(ids) <= DETAILS_AHEAD:
            self._send({"details": {i: self._details(i) for i in ids}})
        self.restart(delay=HELLO_DELAY_S)  # after the first view has been painted

    def _forget(self) -> None:
        """No view for a while: keep the current picture, drop the others (a view shown
        again asks for them), then the widget's own."""
        shown = self._shown()
        k = None if shown.highlighted else picture_id(shown.state)
        self._cache = OrderedDict({k: self._cache[k]} if k in self._cache else {})
        self._sent, self._modes = set(), set()
        self._forget_host()


def neighbours(shown: Shown) -> list[dict]:
    """The views one control away from ``shown``, likeliest first: the first groups opened,
    the opened ones folded, the single toggles and modes, the other groups, the rest of the
    toggle pairs, "fit"'s collapse."""
    svg, now = shown.svg, shown.state
    expanded = list(now["expanded"])
    but = shown.but
    opened = [
        but(expanded=expanded + [gid])
        for gid in dict.fromkeys(_NODE_ID.findall(svg))
        if _GROUP.fullmatch(gid) and gid not in expanded
    ]
    folded = [
        but(expanded=[e for e in expanded if e != gid])
        for gid in dict.fromkeys(_CLUSTER_ID.findall(svg))
    ] + ([but(expanded=[])] if expanded else [])  # "fold all"
    single, pairs = [], []
    if len(svg) < 200_000:  # modes and toggles of a graph small enough to draw them all
        modes = ("forward", "backward", "both") if shown.has_backward else ("forward",)
        saved, values = not now["show_saved"], not now["show_values"]
        single = [but(mode=m) for m in modes if m != now["mode"]]
        single += [but(show_saved=saved), but(show_values=values)]
        for flip in ({"show_saved": saved}, {"show_values": values}):
            pairs += [but(mode=m, **flip) for m in modes if m != now["mode"]]
        pairs += [but(mode=m, show_saved=saved, show_values=values) for m in modes]
    fit = [but(collapse="on")] if now["collapse"] == "auto" else []
    return opened[:4] + folded + single + opened[4:] + pairs + fit
