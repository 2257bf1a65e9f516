"""Pictures a GraphWidget draws ahead: the views one control away, rendered while the kernel
is idle and sent to the view with the state each shows (see ``widget``'s docstring)."""

from __future__ import annotations

import re
import time
from collections import OrderedDict

from ..present.ahead import forget_unseen, run_ahead, running_loop, serialized

AHEAD_CHARS = 8 << 20  # SVG text drawn ahead and sent per settled view (about 8 MB) ...
AHEAD_S = 1.5  # ... and kernel seconds spent on it (a 5,000-op picture: ~0.1 s each)
CACHE_CHARS = 48 << 20  # rendered pictures kept in the kernel
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


class PicturesAhead:
    """The GraphWidget's pictures drawn ahead, its cache of pictures and the view's messages
    (``hello``, ``bye``, ``want``, ``details``). Mixed into ``GraphWidget``, which holds the
    state it reads (``_cache``, ``_sent``, ``_generation``, ``_views``) and draws (``_draw``,
    ``_details_of``)."""

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
