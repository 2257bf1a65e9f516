"""DOT statements for one node of each kind: tensor, op, saved box, gradient, group, legend."""

from __future__ import annotations

from ..present.palette import GREY, OKABE_ITO, SHADE, WHITE
from ..present.units import fmt_bytes
from .labels import label, small, swatch_cells
from .style import (
    HIGHLIGHTS,
    MIN_PT,
    OP_STYLES,
    SAVED_STYLE,
    TENSOR_STYLES,
    apply_highlight,
    attr,
    edge_width,
    fmt_shape,
    op_style,
)

DOT = "\u00b7"
PARTIAL = "\u2202"


def statement(node_id: str, attrs: dict, label_value: str) -> str:
    """``"id" [k="v", ..., label=...]`` with every plain value quoted and escaped."""
    parts = [f"{k}={attr(v)}" for k, v in attrs.items()]
    parts.append(f"label={label_value}")
    return f"{attr(node_id)} [{', '.join(parts)}]"


def edge(src: str, dst: str, attrs: dict) -> str:
    parts = ", ".join(f"{k}={attr(v)}" for k, v in attrs.items())
    return f"{attr(src)} -> {attr(dst)} [{parts}]"


def _finish(node_id, attrs, spec, opts) -> str:
    hit = opts.highlight.get(node_id)
    if hit:
        apply_highlight(attrs, hit[0])
        spec.append(("mark", *hit))
    return statement(node_id, attrs, label(spec, opts.html))


def _shape_line(t) -> tuple:
    dtype = t.get("dtype") or ""
    return ("text", f"{fmt_shape(t['shape'])} {dtype} {DOT} {fmt_bytes(t['bytes'])}", None)


def tensor_node(t: dict, opts) -> str:
    fill, border, extra, tag = TENSOR_STYLES[t["role"]]
    attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": fill, "color": border}
    attrs.update(extra)
    if t["role"] == "output":
        attrs["class"] = "tv-output"  # the widget opens on it when the graph cannot fit
    spec = [("title", t["name"] or "", tag)] if (t["name"] or tag) else []
    spec.append(_shape_line(t))
    if opts.show_values and t["value"] is not None:
        show_grad = opts.has_backward and t["role"] != "constant"
        spec.append(("values", t["value"], t["grad"], show_grad))
    attrs["tooltip"] = f"{t['name'] or t['id']}: {t['role']} {fmt_shape(t['shape'])}"
    return _finish(t["id"], attrs, spec, opts)


def op_node(op: dict, opts, accumulates: str | None = None, css: str = "") -> str:
    shape, fill, border, extra, tag = op_style(op["style"])
    attrs = {"shape": shape, "style": "filled", "fillcolor": fill, "color": border}
    if css:
        attrs["class"] = css  # an SVG class: the widget finds a gradient op's forward op
    attrs.update(extra)
    gradient = op["style"] == "gradient"
    fused = op.get("fusion")  # a fused kernel: the op the user called, its fusion below
    name = op["label"] if fused else op["kernel"]
    spec = [("title", f"{PARTIAL} {name}" if gradient else op["label"], None)]
    if fused and fused != op["label"]:
        spec.append(("text", "fused " + fused, GREY["text"]))
    elif op["label"] != op["kernel"] and not gradient and not fused:
        spec.append(("text", "kernel " + op["kernel"], GREY["text"]))
    if tag:
        spec.append(("text", tag, SHADE["reddish_purple"]))
    if accumulates:
        spec.append(("text", "accumulate += " + accumulates, SHADE["reddish_purple"]))
    spec.append(("badge", op["backend"]))
    src = op["source"]["text"] if op["source"] else "unknown line"
    attrs["tooltip"] = f"{op['label']} ({op['kernel']} on {op['backend']}) at {src}"
    return _finish(op["id"], attrs, spec, opts)


def saved_node(box_id: str, op: dict, saved: list[dict], opts) -> str:
    attrs = {"shape": "box", "style": "filled"}
    attrs.update(fillcolor=SAVED_STYLE["fill"], color=SAVED_STYLE["border"])
    spec = [("title", f"saved for backward {DOT} {fmt_bytes(op['saved_bytes'])}", None)]
    for s in saved:
        gone = " (released)" if s["released"] else ""
        size = fmt_bytes(s["bytes"])
        if not s.get("needed", True):  # no gradient that runs reads it: never kept
            size = "not kept (0 B): no gradient needs it"
        text = f"{s['role']} {s['name']} {fmt_shape(s['shape'])} {size}{gone}"
        spec.append(("text", text, SHADE["orange"]))
    attrs["tooltip"] = f"values {op['label']} saved for backward"
    return _finish(box_id, attrs, spec, opts)


_GRAD_KINDS = {"dy": "dy", "grad": "gradient", "share": "share (summed)", "sum": "\u03a3 total"}


def grad_node(g: dict, forward_name: str, opts) -> str:
    fill, border, extra, _ = TENSOR_STYLES["gradient"]
    attrs = {"shape": "box", "fillcolor": fill, "color": border}
    attrs.update(extra)
    spec = [("title", f"{PARTIAL} {forward_name}", _GRAD_KINDS[g["kind"]]), _shape_line(g)]
    if opts.show_values and g["value"] is not None:
        spec.append(("values", g["value"], None, False))
    attrs["tooltip"] = f"gradient of {forward_name} ({g['kind']})"
    return _finish(g["id"], attrs, spec, opts)


def group_node(grp: dict, opts) -> str:
    shape, fill, border, _, _ = OP_STYLES["group"]
    attrs = {"shape": shape, "style": "filled", "fillcolor": fill, "color": border}
    attrs["margin"] = "0.14,0.05"
    saved = f" {DOT} saved {fmt_bytes(grp['saved_bytes'])}" if grp["saved_bytes"] else ""
    spec = [("title", grp["label"], None), ("text", f"{grp['n_ops']} ops{saved}", None)]
    spec.append(("text", grp["summary"], GREY["text"]))
    if grp.get("reads"):  # names, not ids: the unnamed ones counted
        names = [n for n in grp["reads"] if n]
        unnamed = len(grp["reads"]) - len(names)
        words = ", ".join(names[:4]) + (f" +{len(names) - 4}" if len(names) > 4 else "")
        if unnamed:
            words += (" and " if words else "") + f"{unnamed} unnamed"
        spec.append(("text", "reads " + words, GREY["text"]))
    if grp.get("same_as"):
        spec.append(("text", "\u2261 identical to " + grp["same_as"], SHADE["reddish_purple"]))
    attrs["tooltip"] = f"{grp['label']}: {grp['n_ops']} ops (collapsed)"
    return _finish(grp["id"], attrs, spec, opts)


def plain_edge(src, dst, nbytes, label="", **extra) -> str:
    attrs = {"penwidth": edge_width(nbytes)}
    if label:
        attrs["label"] = label
    attrs.update(extra)
    return edge(src, dst, attrs)


def cluster_label(text: str, mark, opts) -> str:
    """A cluster's ``label=`` value: the scope or step name, and a highlight mark."""
    spec = [("text", text, GREY["dark"])] + ([("mark", *mark)] if mark else [])
    return label(spec, opts.html)


_ROLE_WORDS = {
    "input": "input (watched)",
    "variable": "variable (double border)",
    "constant": "constant (dotted)",
    "output": "output (bold border)",
    "intermediate": "intermediate tensor",
    "gradient": "gradient tensor (dashed)",
}


def _legend_entries(present: set) -> list:
    """(fill, border, shape, style, words) for each style drawn (colour never alone)."""
    out = []
    for role, (fill, border, extra, _) in TENSOR_STYLES.items():
        if ("tensor", role) in present:
            style = extra.get("style", "rounded,filled")
            out.append((fill, border, "box", style, _ROLE_WORDS[role], extra))
    drawn = [s for kind, s in present if kind == "op" and s not in OP_STYLES]
    for style in [*OP_STYLES, *sorted(drawn)]:
        shape, fill, border, extra, tag = op_style(style)
        if ("op", style) in present:
            dashed = ", dashed" if style == "override" else ""
            words = {"builtin": "op (box)", "gradient": f"{PARTIAL} gradient op (grey box)"}.get(
                style, f"{tag} ({shape}{dashed})"
            )
            out.append((fill, border, shape, extra.get("style", "filled"), words, {}))
    if ("saved", "") in present:
        words = "saved for backward (role, bytes)"
        out.append((SAVED_STYLE["fill"], SAVED_STYLE["border"], "box", "filled", words, {}))
    for state, (border, fill, _, marker, _) in HIGHLIGHTS.items():
        if ("highlight", state) in present:
            out.append((fill or WHITE, border, "box", "filled", marker, {}))
    return out


# edge kinds of the "both" view: (colour, pattern, words); the pattern is the colour's twin
EDGE_WORDS = {
    "grad_link": ("#CC79A7B0", "- - -\u25b7", "forward op \u2192 the gradient ops it ran"),
    "saved_read": (
        OKABE_ITO["orange"],
        "\u00b7 \u00b7 \u00b7 \u00b7",
        "saved value read by a gradient op",
    ),
}


def _edge_rows(present: set, html: bool) -> list:
    """Legend lines for the dashed and dotted edges of the "both" view."""
    kinds = [k for k in EDGE_WORDS if ("edge", k) in present]
    if html:
        return [
            f"<TR><TD>{small(EDGE_WORDS[k][1], EDGE_WORDS[k][0][:7], 10)}</TD>"
            f'<TD ALIGN="LEFT">{small(EDGE_WORDS[k][2])}</TD></TR>'
            for k in kinds
        ]
    return [f"{EDGE_WORDS[k][1]} {EDGE_WORDS[k][2]}" for k in kinds]


LEGEND_COLUMNS = 4


def legend_entries(present: set) -> list[list[str]]:
    """The legend as data: ``[fill, border, style, words]`` per style drawn; an edge kind
    has style ``"edge dashed"`` or ``"edge dotted"`` (its fill is the edge colour)."""
    out = [[f, b, st, w] for f, b, _, st, w, _ in _legend_entries(present)]
    for k, (color, pattern, words) in EDGE_WORDS.items():
        if ("edge", k) in present:
            kind = "edge dashed" if "-" in pattern else "edge dotted"
            out.append([color[:7], color[:7], kind, words])
    return out


def legend(present: set, opts, rankdir: str = "TB") -> list[str]:
    """Statements for a compact legend under the graph.

    HTML labels: a graph label (it takes no place in the layout), ``LEGEND_COLUMNS`` entries
    a row. Plain labels (wasm): a block of sample nodes, ``LEGEND_COLUMNS`` a row (a rank
    top-down, a chain left-right: ``rankdir``).
    """
    entries = _legend_entries(present)
    if opts.html:
        cells = []
        for fill, border, _, style, words, _ in entries:
            cell_style = "dashed" if "dashed" in style else "rounded" if "rounded" in style else ""
            cells.append(swatch_cells(fill, border, cell_style or "solid", words))
        cells += [
            f"<TD>{small(EDGE_WORDS[k][1], EDGE_WORDS[k][0][:7])}</TD>"
            f'<TD ALIGN="LEFT">{small(EDGE_WORDS[k][2])}</TD>'
            for k in EDGE_WORDS
            if ("edge", k) in present
        ]
        cells.append('<TD></TD><TD ALIGN="LEFT">' + small("edge width grows with bytes") + "</TD>")
        rows = [
            "<TR>" + "".join(cells[i : i + LEGEND_COLUMNS]) + "</TR>"
            for i in range(0, len(cells), LEGEND_COLUMNS)
        ]
        text = '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="1">'
        text += "".join(rows) + "</TABLE>>"
        return [f'label={text}; labelloc="b"; labeljust="l";']
    lines = ['subgraph "cluster_legend" {',
             f'label="legend"; style="rounded"; color="{GREY["light"]}";']  # fmt: skip
    ids = []
    for i, (fill, border, shape, style, words, extra) in enumerate(entries):
        attrs = {"shape": shape, "style": style, "fillcolor": fill, "color": border}
        attrs.update({k: v for k, v in extra.items() if k != "style"})
        attrs["fontsize"] = str(MIN_PT)
        lines.append(statement(f"legend{i}", attrs, attr(words)))
        ids.append(f"legend{i}")
    words = "\\l".join([*_edge_rows(present, html=False), "edge width grows with bytes"])
    lines.append(f'"legend_edges" [shape=plaintext, fontsize={MIN_PT}, label="{words}\\l"]')
    ids.append("legend_edges")
    rows = [ids[i : i + LEGEND_COLUMNS] for i in range(0, len(ids), LEGEND_COLUMNS)]
    if rankdir in ("LR", "RL"):  # ranks run across: a row is a chain, its columns a rank
        for row in rows:
            lines += [f"{attr(a)} -> {attr(b)} [style=invis]" for a, b in zip(row, row[1:])]
        columns = [[row[k] for row in rows if k < len(row)] for k in range(LEGEND_COLUMNS)]
        for col in columns if len(rows) > 1 else ():
            lines.append("{rank=same; " + "; ".join(attr(i) for i in col) + "}")
    else:
        for row in rows:
            lines.append("{rank=same; " + "; ".join(attr(i) for i in row) + "}")
        for a, b in zip(rows, rows[1:]):
            lines.append(f"{attr(a[0])} -> {attr(b[0])} [style=invis]")
    lines.append("}")
    return lines
