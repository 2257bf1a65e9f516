"""A graph widget's first sight: the scale a picture opens at, the layout a view opens with.

The canvas is ``BOX_PX`` (the widget in JupyterLab's notebook at a 1400 px window,
VIEW_HEIGHT of static/graph/panzoom.js high); ``LEGIBLE_PX`` is the smallest text it opens at.
"""

from __future__ import annotations

import re

BOX_PX = (940, 600)
LEGIBLE_PX = 11
SMALL_AREA = 2.0  # op by op up to twice the box at LEGIBLE_PX: opened on the output, most shows
_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')
_FONT = re.compile(r'font-size="([\d.]+)"')


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
    scale, px, area, _ = opening_fit(svg, box)
    return scale, px, area


def opening_fit(svg: str, box=BOX_PX) -> tuple[float, float, float, float]:
    """``opening_scale`` and the height drawn (CSS px)."""
    m = _SVG_SIZE.search(svg)
    if m is None:
        return 1.0, 0.0, 0.0, 0.0
    w, h = float(m.group(1)) * 4 / 3, float(m.group(2)) * 4 / 3
    font = min((float(f) for f in _FONT.findall(svg)), default=9.0) * 4 / 3
    scale = min(1.0, (box[0] - 8) / max(w, 1), (box[1] - 8) / max(h, 1))
    legible = min(1.0, LEGIBLE_PX / font)
    return scale, scale * font, (w * legible) * (h * legible) / (box[0] * box[1]), h * scale


def choose_layout(draw, drawn: int, max_nodes: int, collapse: str, rankdir: str) -> tuple:
    """``(collapse, merge, rankdir)`` of a view: what the first sight shows.

    The whole graph op by op when it fits the canvas (``BOX_PX``) with text of at least
    ``LEGIBLE_PX``, top-down or left-right, whichever is larger; else grouped by the
    model's structure (name scopes, ``nn`` layers, the statements and loop turns of the
    user's code), then with repeated groups merged. ``collapse`` "on" starts at the
    groups, "off" draws op by op; a ``rankdir`` the user gave is kept. ``draw(grouped,
    merge, rankdir)`` is the SVG of a candidate; ``drawn`` the ops the view shows."""
    steps = [(False, None)] if collapse != "on" and drawn <= max_nodes else []
    if collapse == "off":
        steps = [(False, None)]
    else:
        steps += [(True, False), (True, True)]
    dirs = [rankdir] if rankdir else ["TB", "LR"]
    best = None
    for grouped, merge in steps:
        tried = []
        for rd in dirs:
            tried.append((opening_fit(draw(grouped, merge, rd)), rd))
        # of those that fit whole legibly, the lower (less of the notebook to scroll);
        # else the one drawn larger
        fit = [t for t in tried if t[0][1] >= LEGIBLE_PX - 0.05]
        pick = min(fit, key=lambda t: t[0][3]) if fit else max(tried, key=lambda t: t[0][0])
        (scale, px, area, _), rd = pick
        best = (grouped, merge, rd)
        if fit or (not grouped and area <= SMALL_AREA):
            break  # it fits; or a small graph, opened on its output, shows most of it
    return best
