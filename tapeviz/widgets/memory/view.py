"""The memory inspector's table, charts and selected value, drawn in the browser from data.

Why: selecting a row used to ask the kernel for a matplotlib chart, a histogram PNG and a
Graphviz picture: 200-500 ms in JupyterLab. ``MemoryView`` holds every row, each row's
statistics and histogram counts, the bars and the timeline as numbers and the graph once;
the ES module (``tapeviz/static/memory_view.js``) sorts, selects, outlines the bar, marks
where the value is freed and highlights the node at once, and tells the kernel afterwards.
The sort buttons are linked to it in the browser. matplotlib stays for the static picture.
"""

from __future__ import annotations

import pathlib

import anywidget
import numpy as np
import traitlets as t

from ...present.text import html_text
from ...present.units import fmt_bytes
from ..common import fmt_shape, stats_html
from .plots import ROLES, per_node_roles

_STATIC = pathlib.Path(__file__).resolve().parents[2] / "static"  # tapeviz/static
COLUMNS = ("node", "kernel", "role", "name", "shape", "dtype", "bytes")


class MemoryView(anywidget.AnyWidget):
    """One tape's saved values: a sortable table, bars, the timeline, the selected value."""

    _esm = _STATIC / "memory_view.js"
    _css = _STATIC / "memory_view.css"

    rows = t.List(help="one dict per saved value (memory_view.row_data)").tag(sync=True)
    details = t.List(help="per row: its header, statistics (HTML) and histogram").tag(sync=True)
    bars = t.List(help="saved bytes per node, by role").tag(sync=True)
    timeline = t.Dict(help="bytes held after each node and step; where each node frees").tag(
        sync=True
    )
    graph_svg = t.Unicode("", help="the tape's graph, drawn once; the view highlights").tag(
        sync=True
    )
    graph_html = t.Unicode("", help="in place of graph_svg when the graph cannot be drawn").tag(
        sync=True
    )
    sort_keys = t.List(t.Unicode(), help="the sort buttons' names, in order").tag(sync=True)
    sort_index = t.Int(0, help="which sort button is down (linked in the browser)").tag(sync=True)
    descending = t.Bool(False, help="sort descending (linked in the browser)").tag(sync=True)
    selected = t.Int(-1, help="the selected row (index into rows), -1 for none").tag(sync=True)


def row_data(r) -> dict:
    """A ``SavedRow`` as the view's table row (the cells as the static table writes them)."""
    extra = " (shared)" if r.shared else ""
    extra += " (released)" if r.released else ""
    cells = [f"{r.node_id}: {r.label}", r.kernel, r.role, r.name, fmt_shape(r.shape), r.dtype]
    return {
        "node_id": r.node_id,
        "label": r.label,
        "kernel": r.kernel,
        "role": r.role,
        "name": r.name,
        "shape": list(r.shape) if r.shape is not None else None,
        "dtype": r.dtype,
        "nbytes": r.nbytes,
        "cells": cells + [fmt_bytes(r.nbytes) + extra],
    }


def detail_head(r) -> str:
    return (
        f"<b>node {r.node_id}: {html_text(r.label)}</b> saved {r.role} "
        f"<code>{html_text(r.name)}</code> ({fmt_bytes(r.nbytes)})<br/>"
    )


def detail_data(r) -> dict:
    """What the view shows for a selected row: a header, statistics, histogram counts."""
    value = r.value()
    if value is None:
        return {"html": detail_head(r) + "<i>value released and no longer reachable</i>"}
    out = {"html": detail_head(r) + stats_html(value), "title": f"{r.role} {r.name}"}
    f = np.asarray(value, dtype=np.float64).reshape(-1) if value.dtype.kind in "fiub" else None
    f = f[np.isfinite(f)] if f is not None else None
    if f is not None and f.size:
        counts, edges = np.histogram(f, bins=min(30, max(1, f.size)))
        out["hist"] = {
            "counts": counts.tolist(),
            "lo": float(edges[0]),
            "hi": float(edges[-1]),
        }
    return out


def bars_data(report) -> list:
    """Stacked saved bytes per node (shared values once), with each bar's bytes in words."""
    out = []
    for node_id, d in per_node_roles(report).items():
        total = sum(d[role] for role in ROLES)
        out.append({"node_id": node_id, "label": d["label"], "total": fmt_bytes(total),
                    **{role: d[role] for role in ROLES}})  # fmt: skip
    return out


def timeline_data(report) -> dict:
    """Held bytes after each forward node and backward step; each node's freeing step."""
    tl, size = report.timeline, {r.key: r.nbytes for r in report.rows}
    held = [0] + [p[3] for p in tl]
    names = [f"{'F' if p[0] == 'forward' else 'B'}{'' if p[1] is None else p[1]}" for p in tl]
    frees = {}
    for i, p in enumerate(tl):
        if p[0] == "backward" and p[1] is not None:
            freed = fmt_bytes(sum(size[k] for k in p[4]))
            frees[str(p[1])] = [i + 1, f"node {p[1]} done: frees {freed}"]
    peak = int(np.argmax(held))
    return {
        "held": held,
        "names": names,
        "n_forward": sum(1 for p in tl if p[0] == "forward"),
        "peak": peak,
        "peak_text": f"peak {fmt_bytes(held[peak])}",
        "frees": frees,
        "backward_known": bool(report.backward_known),
    }
