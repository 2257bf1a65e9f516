"""A backprop step's panel as HTML: dy, saved values, local derivative, gradients, sums."""

from __future__ import annotations

import numpy as np

from ...present.palette import GREY, OKABE_ITO
from ...present.text import html_text
from ..common import fmt_shape, preview

_TITLE, _RULE, _NOTE = OKABE_ITO["blue"], GREY["rule"], GREY["edge"]


def value_html(a, limit: int = 12) -> str:
    """A value as a short preview, or its min, max and mean when it is large."""
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
    return f"<pre style='margin:1px 0 4px;font-size:12px'>{html_text(text)}</pre>"


def section(title: str, body: str) -> str:
    return (
        f"<div style='margin:4px 0'><b style='color:{_TITLE}'>{html_text(title)}</b>"
        f"<div style='margin-left:10px'>{body}</div></div>"
    )


def panel_html(d: dict, note: str) -> str:
    """A step's panel from its ``step_data``: dy (``note`` says where it is a sum), the saved
    values, the local derivative, the gradients produced, the accumulation into a tensor."""
    first = section("incoming dy", "".join(value_html(a) for a in d["dy"]) + note)
    if d["backward_node_ids"]:
        first += section("ops the gradient ran", f"backward nodes {d['backward_node_ids']}")
    first += section("saved values used", _saved_html(d))
    second = section("local derivative", _local_html(d))
    second += section("gradients produced", _grads_html(d))
    third = ""
    if d["accumulation"]:
        body = "".join(_accumulation_html(a) for a in d["accumulation"])
        third = section("accumulation (tensor used more than once)", body)
    cols = "".join(
        f"<div style='flex:1;min-width:220px;padding:0 8px'>{c}</div>"
        for c in (first, second, third)
    )
    return (
        "<div style='display:flex;flex-wrap:wrap;font-family:sans-serif;"
        f"font-size:13px;border-top:1px solid {_RULE}'>{cols}</div>"
    )


def sum_note(tape, users: dict, node_id: int) -> str:
    """Where dy is a sum: the output was read by several nodes, each sent a share."""
    node = tape.node(node_id)
    readers = [r for out in node.outputs for r in users.get(out.id, [])]
    if len(readers) < 2:
        return ""
    edges = ", ".join(f"node {n} ({html_text(k)})" for n, k in readers)
    return (
        f"<div style='color:{_NOTE}'><i>the sum of {len(readers)} shares: this output "
        f"is read by {edges}</i></div>"
    )


def _saved_html(d) -> str:
    rows = "".join(
        f"<div>{s['role']} <code>{html_text(s['name'])}</code> "
        f"{fmt_shape(s['shape'])}{value_html(s['value'])}</div>"
        for s in d["saved"]
    )
    return rows or "<i>nothing saved (the gradient needs only dy)</i>"


def _local_html(d) -> str:
    formula = f"<code style='font-size:13px'>{html_text(d['formula'])}</code>"
    numbers = "".join(
        f"<div>&part;out/&part;<code>{html_text(k)}</code> per element "
        f"(d{html_text(k)} &divide; dy){value_html(v)}</div>"
        for k, v in d["local"].items()
        if v is not None
    )
    return formula + (numbers or "<div><i>not elementwise: the formula maps dy to each "
                      "input's shape</i></div>")  # fmt: skip


def _grads_html(d) -> str:
    rows = "".join(
        f"<div>d<code>{html_text(k)}</code> &rarr; {html_text(d['targets'][k])}"
        f"{value_html(v)}</div>"
        for k, v in d["grads"].items()
    )
    skipped = ", ".join(f"<code>{html_text(k)}</code>" for k in d.get("skipped", []))
    if skipped:
        rows += (
            f"<div style='color:{_NOTE}'><i>not computed: {skipped} (no path to a watched "
            "source, so the engine skipped it)</i></div>"
        )
    return rows or "<i>no gradient needed here</i>"


def _accumulation_html(a) -> str:
    rows = "".join(
        f"<li>{'<b>this step</b>: ' if sh['this_step'] else ''}node {sh['node_id']} "
        f"({html_text(sh['label'])}, input <code>{html_text(sh['input'])}</code>)"
        f"{value_html(sh['value'])}</li>"
        for sh in a["shares"]
    )
    return (
        f"<div><code>{html_text(a['input'])}</code> = {html_text(a['tensor'])} is read "
        f"by {a['readers']} nodes; {len(a['shares'])} of their gradients so far:<ul "
        f"style='margin:2px 0'>{rows}</ul>running total{value_html(a['total'])}</div>"
    )
