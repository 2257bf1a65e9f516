"""The tape's graph with highlighted nodes, via ``tapeviz.graph`` when it is available.

``tapeviz.graph.render_svg(extract(tape), highlight={node_id: state})`` draws the graph; if
that package is missing or fails, a plain HTML strip of the forward nodes (with the same
highlight states, written in words as well as colour) takes its place.
"""

from __future__ import annotations

import re

from ..present.palette import GREY, OKABE_ITO, STATE, WHITE
from ..present.text import html_text
from .common import error_html

_BLACK = OKABE_ITO["black"]

STATE_STYLE = {
    "current": (STATE["current"], "&#9654; current"),
    "selected": (STATE["selected"], "&#9679; selected"),
    "visited": (STATE["visited"], "&#10003; done"),
    "error": (STATE["error"], "&#10007; error"),
}


_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


def wrap_svg(svg: str, min_scale: float = 11 / 12) -> str:
    """A static SVG in a scrolling box: shrunk to the width it is given, but never below
    ``min_scale`` of its natural size (a big graph scrolls instead of becoming a thumbnail;
    the default keeps the graph's 9 pt small print at 11 px).

    Example:
        >>> box = wrap_svg('<svg width="750pt" height="75pt" viewBox="0 0 750 75"></svg>')
        >>> "clamp(917px, 100%, 1000px)" in box
        True
    """
    m = _SIZE.search(svg)
    if m is None:
        return f"<div style='overflow:auto;max-height:460px'>{svg}</div>"
    w = float(m.group(1)) * 4 / 3  # pt -> CSS px
    style = f"width:clamp({w * min_scale:.0f}px, 100%, {w:.0f}px);height:auto;max-width:none"
    sized = svg[: m.start()] + f'<svg style="{style}"' + svg[m.start() + 4 :]
    return f"<div style='overflow:auto;max-height:460px'>{sized}</div>"


class HighlightGraph:
    """Renders one tape's graph with a highlight; caches the extracted graph data."""

    def __init__(self, tape):
        self.tape = tape
        self._data = None
        self.backend = "none"
        self.error = None
        try:
            from tapeviz.graph import extract, render_svg  # noqa: F401
        except ImportError as e:
            self.error = e
            return
        try:
            self._data = extract(tape)
            self.backend = "graphviz"
        except Exception as e:  # the graph is a helper view: show why, keep the widget
            self.error = e

    def html(self, highlight: dict) -> str:
        """SVG (or the fallback strip) with ``highlight`` {node_id: state} applied."""
        if self._data is not None:
            try:
                from tapeviz.graph import render_svg

                return wrap_svg(render_svg(self._data, highlight=highlight))
            except Exception as e:
                return error_html("graph could not be drawn", e) + self._strip(highlight)
        return self._strip(highlight)

    def _strip(self, highlight: dict) -> str:
        boxes = []
        for node in self.tape.nodes:
            state = highlight.get(node.id)
            colour, word = STATE_STYLE.get(state, (WHITE, ""))
            strong = state in ("current", "selected", "error")
            border = f"3px solid {_BLACK}" if strong else f"1px solid {GREY['border']}"
            text_colour = GREY["muted"] if state == "visited" else _BLACK
            boxes.append(
                f"<span style='display:inline-block;margin:2px;padding:3px 6px;border:{border};"
                f"border-radius:6px;background:{colour};color:{text_colour};font:12px monospace'>"
                f"{node.id}: {html_text(str(node.label))}"
                f"{'<br/><small>' + word + '</small>' if word else ''}</span>"
            )
        arrows = " &rarr; ".join(boxes)
        return f"<div style='line-height:2.2'>{arrows}</div>"
