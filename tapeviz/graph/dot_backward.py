"""DOT statements for the backward graph drawn op by op, alone or beside the forward one."""

from __future__ import annotations

from ..present.palette import GREY
from .labels import label
from .nodes import (
    EDGE_WORDS,
    PARTIAL,
    cluster_label,
    edge,
    grad_node,
    op_node,
    plain_edge,
    statement,
)
from .style import HIGHLIGHTS, attr


def _accumulators(data) -> dict:
    """Backward op id -> name of the tensor whose gradient shares it summed."""
    tensors = {t["id"]: t for t in data.tensors}
    ops = {op["id"]: op for op in data.ops}
    producer = {e["dst"]: e["src"] for e in data.backward_edges if e["src"].startswith("n")}
    out = {}
    for step in data.backward_steps:
        for g in step["grads"]:
            if g["total"] and g["total"] in producer:
                words = _tensor_words(tensors.get(g["tensor"]), ops)
                out[producer[g["total"]]] = words or g["tensor"]
    return out


def _step_cluster(step, bops, accum, opts, out) -> str:
    text = f"{PARTIAL} {step['label']} \u00b7 {step['op']}"
    border, pen = GREY["light"], "1"
    hit = opts.highlight.get(step["op"])  # a forward op's highlight marks its gradient
    if hit:
        border, pen = HIGHLIGHTS[hit[0]][0], HIGHLIGHTS[hit[0]][2]
    stmts = [
        f"label={cluster_label(text, hit, opts)};",
        f'style="rounded"; color="{border}"; penwidth={pen}; bgcolor="{GREY["background"]}";',
    ]
    for oid in step["backward_ops"]:
        stmts.append(op_node(bops[oid], opts, accum.get(oid)))
        out.present.add(("op", bops[oid]["style"]))
        out.n_units += 1
    if not step["backward_ops"]:
        spec = [("title", text, None), ("text", "dy passed on", None)]
        attrs = {"shape": "box", "style": "dashed"}
        stmts.append(statement(f"b{step['op']}", attrs, label(spec, opts.html)))
        for d in step["dy"]:
            out.edges.append(plain_edge(d["grad"], f"b{step['op']}", 0, style="dashed"))
    return f"subgraph {attr('cluster_b' + step['op'])} {{\n" + "\n".join(stmts) + "\n}"


def draw_backward(data, opts, out, plan) -> None:
    """Statements for the backward graph op by op: each forward op's gradient ops (a cluster
    per step, or in "both" a row level with the op), the gradients, the edges."""
    tensors = {t["id"]: t for t in data.tensors}
    ops = {op["id"]: op for op in data.ops}
    bops = {op["id"]: op for op in data.backward_ops}
    accum = _accumulators(data)
    both = opts.mode == "both"
    for step in data.backward_steps:
        if both:
            _step_row(step, bops, accum, opts, out)
        else:
            out.scoped[""].append(_step_cluster(step, bops, accum, opts, out))
    for g in data.grad_tensors:
        name = _tensor_words(tensors.get(g["of"]), ops) or g["of"]
        out.scoped[""].append(grad_node(g, name, opts))
        out.present.add(("tensor", "gradient"))
        if both and g["of"] in tensors:  # a gradient level with the tensor it belongs to
            out.level(g["of"], "", g["id"])
    if both:
        _row_order(data, accum, bops, out)
    above = _anchors_above(data, out) if both else None
    for e in data.backward_edges:
        if e["kind"] != "saved" and both:  # the ranks are the forward graph's: edges run back
            out.edges.append(_level_edge(e, above))
        elif e["kind"] != "saved":
            out.edges.append(plain_edge(e["src"], e["dst"], e["bytes"]))
        elif both and opts.show_saved:  # a backward op reading a saved forward value
            out.present.add(("edge", "saved_read"))
            out.edges.append(_cross_link("saved_read", e["src"], e["dst"], bops, opts))
    if both:
        for step in data.backward_steps:
            first = step["backward_ops"][0] if step["backward_ops"] else f"b{step['op']}"
            out.present.add(("edge", "grad_link"))
            out.edges.append(_cross_link("grad_link", step["op"], first, bops, opts))


def _row_order(data, accum: dict, bops: dict, out) -> None:
    """The order of a row's gradient ops: one that reads another of its row right after it
    (a Pow's gradient: b - 1, a ** (b - 1), the products), so that the flat edges do not
    arc over each other; a tensor used twice gets shares from two ops of one row and an op
    summing them: drawn after the first share's op (and its total after the first share),
    its edges cross none of the other share's (in the order they ran, the sum's edge from
    the first share crossed the second op's)."""
    producer = {e["dst"]: e["src"] for e in data.backward_edges if e["src"] in bops}
    for e in data.backward_edges:  # a gradient op reading another of its row: right after it
        if e["src"] in bops and e["dst"] in bops:
            out.move_after(e["dst"], e["src"])
    for acc in accum:
        shares = [e["src"] for e in data.backward_edges if e["dst"] == acc]
        shares = [g for g in shares if g in producer]
        if not shares:
            continue
        out.move_after(acc, producer[shares[0]])
        for e in data.backward_edges:
            if e["src"] == acc:
                out.move_after(e["dst"], shares[0])


def _anchors_above(data, out) -> callable:
    """``above(a, b)``: node ``a`` is drawn on a row above ``b`` in "both", because the
    forward nodes they are level with are joined by a forward edge (tensor -> op, op ->
    tensor); None when they are on one row or not next to each other."""
    anchor = {i: a for a, (_, ids) in out.ranks.items() for i in ids}
    forward = {(e["src"], e["dst"]) for e in data.edges}

    def above(a, b):
        pa, pb = anchor.get(a, a), anchor.get(b, b)
        if (pa, pb) in forward:
            return True
        return False if (pb, pa) in forward else None

    return above


def _level_edge(e: dict, above) -> str:
    """A backward edge in "both": gradients flow up the forward graph's rows, so an edge to
    a row above is written from its head with ``dir=back`` and ranks the pair as the forward
    edge between their rows does (dot then orders the rows to avoid crossing it); one along
    a row, or between rows not next to each other, does not rank (``constraint=false``)."""
    up = above(e["dst"], e["src"])
    if up is None:
        return plain_edge(e["src"], e["dst"], e["bytes"], constraint="false")
    if up:
        return plain_edge(e["dst"], e["src"], e["bytes"], dir="back")
    return plain_edge(e["src"], e["dst"], e["bytes"])


def _tensor_words(t: dict | None, ops: dict) -> str | None:
    """A tensor as a person names it: its name, else "<op> out" (``Sub out``), not ``t105``."""
    if t is None:
        return None
    if t["name"]:
        return t["name"]
    op = ops.get(t["producer"]) if t["producer"] else None
    return f"{op['label']} out" if op else None


def _step_row(step, bops, accum, opts, out) -> None:
    """The gradient ops of one forward op, level with it (the "both" view's mirror)."""
    op_id = step["op"]
    for oid in step["backward_ops"]:
        out.scoped[""].append(op_node(bops[oid], opts, accum.get(oid), css=f"tv-of-{op_id}"))
        out.present.add(("op", bops[oid]["style"]))
        out.n_units += 1
        out.level(op_id, "", oid)
    if not step["backward_ops"]:
        spec = [("title", f"{PARTIAL} {step['label']}", None), ("text", "dy passed on", None)]
        attrs = {"shape": "box", "style": "dashed", "class": f"tv-of-{op_id}"}
        out.scoped[""].append(statement(f"b{op_id}", attrs, label(spec, opts.html)))
        out.level(op_id, "", f"b{op_id}")
        for d in step["dy"]:
            out.edges.append(
                plain_edge(d["grad"], f"b{op_id}", 0, style="dashed", constraint="false")
            )


def _cross_link(kind: str, src: str, dst: str, bops: dict, opts) -> str:
    """A forward -> backward link of the "both" view: drawn only for a highlighted node.

    Every link carries the SVG classes ``tv-xlink tv-<kind> tv-of-<forward op>``; the widget
    shows a node's links on hover or click. Unhighlighted ones are transparent, so a static
    picture stays clean.
    """
    of = (bops[dst].get("grad_of") if dst in bops else None) or src
    shown = of in opts.highlight or dst in opts.highlight
    color = EDGE_WORDS[kind][0][:7] + ("" if shown else "00")
    attrs = {"style": "dashed" if kind == "grad_link" else "dotted", "color": color}
    attrs.update(constraint="false", arrowhead="empty" if kind == "grad_link" else "normal")
    attrs["class"] = f"tv-xlink tv-{kind} tv-of-{of}"
    return edge(src, dst, attrs)
