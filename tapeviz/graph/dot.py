"""Assemble DOT text from GraphData: forward, backward or both, scopes as clusters, collapse."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..present.palette import GREY
from . import collapse as _collapse
from .labels import label
from .nodes import (
    EDGE_WORDS,
    PARTIAL,
    cluster_label,
    edge,
    grad_node,
    legend,
    op_node,
    plain_edge,
    saved_node,
    statement,
    tensor_node,
)
from .style import HIGHLIGHTS, MIN_PT, SAVED_STYLE, TITLE_PT, attr

MODES = ("forward", "backward", "both")


@dataclass
class Options:
    """How to draw (see ``render.to_dot`` for the meaning of each field)."""

    mode: str = "forward"
    show_saved: bool = True
    show_values: bool = True
    rankdir: str | None = None
    highlight: dict = field(default_factory=dict)  # id -> (state, text or None)
    collapse: bool | None = None
    max_nodes: int = 300
    legend: bool = True
    has_backward: bool = False
    html: bool = True  # HTML-like labels (system dot); False: plain text (wasm)
    expand: frozenset = frozenset()  # collapsed groups drawn op by op (group ids)
    merge: bool | None = None  # merge runs of identical groups: always, never, None: when many


class _Out:
    def __init__(self):
        self.scoped = defaultdict(list)  # scope path -> statements
        self.edges: list[str] = []
        self.present: set = set()
        self.n_units = 0
        self.ranks: dict = {}  # anchor node id -> (scope, [node ids drawn level with it])

    def level(self, anchor: str, scope: str, node_id: str) -> None:
        """Draw ``node_id`` at the same rank as ``anchor`` (to its right)."""
        self.ranks.setdefault(anchor, (scope, [anchor]))[1].append(node_id)

    def emit_ranks(self) -> None:
        for scope, ids in self.ranks.values():
            quoted = "; ".join(attr(i) for i in ids)
            self.scoped[scope].append(f"{{rank=same; {quoted}}}")
            for a, b in zip(ids, ids[1:]):  # a flat edge puts its tail left of its head
                self.scoped[scope].append(f"{attr(a)} -> {attr(b)} [style=invis]")

    def move_after(self, node_id: str, after: str) -> None:
        """In the row holding both, draw ``node_id`` right after ``after``."""
        for _, ids in self.ranks.values():
            if node_id in ids and after in ids:
                ids.remove(node_id)
                ids.insert(ids.index(after) + 1, node_id)
                return


def build(data, opts: Options) -> str:
    """DOT text for ``data`` drawn with ``opts``."""
    return build_parts(data, opts)[0]


def build_parts(data, opts: Options) -> tuple[str, set]:
    """DOT text for ``data`` and the set of styles drawn (what a legend has to explain)."""
    out = _Out()
    collapsed = opts.collapse
    if collapsed is None:
        drawn = len(data.ops) if opts.mode != "backward" else 0
        drawn += len(data.backward_ops) if opts.mode != "forward" else 0
        collapsed = drawn > opts.max_nodes
    plan = (
        _collapse.plan(data, opts.max_nodes, merge_repeats=opts.merge, expand=opts.expand)
        if collapsed
        else None
    )
    if opts.mode in ("forward", "both"):
        (_collapse.draw_forward if plan else _forward)(data, opts, out, plan)
    if opts.mode in ("backward", "both"):
        (_collapse.draw_backward if plan else _backward)(data, opts, out, plan)
    for state, _ in opts.highlight.values():
        out.present.add(("highlight", state))
    if opts.mode == "both":  # rank=same rows cannot cross clusters: one flat level
        flat = [s for stmts in out.scoped.values() for s in stmts]
        out.scoped = defaultdict(list, {"": flat})
        out.ranks = {k: ("", ids) for k, (_, ids) in out.ranks.items()}
    out.emit_ranks()
    rankdir = opts.rankdir or ("LR" if out.n_units <= 6 else "TB")  # chains read LR
    lines = [
        "digraph tapeviz {",
        f'graph [rankdir="{rankdir}", compound=true, fontname="Helvetica", fontsize={MIN_PT}, '
        'nodesep=0.22, ranksep=0.32, bgcolor="transparent", pad=0.15];',
        f'node [fontname="Helvetica", fontsize={TITLE_PT}, margin="0.06,0.03", height=0.3];',
        f'edge [fontname="Helvetica", fontsize={MIN_PT}, color="{GREY["edge"]}", arrowsize=0.6];',
    ]
    _emit_scopes(out.scoped, lines, opts)
    lines += out.edges
    if opts.legend:
        lines.extend(legend(out.present, opts, rankdir))
    lines.append("}")
    return "\n".join(lines), out.present


def _emit_scopes(scoped: dict, lines: list, opts) -> None:
    children = defaultdict(set)
    for path in list(scoped):
        parts = path.split("/") if path else []
        for i in range(len(parts)):
            children["/".join(parts[:i])].add("/".join(parts[: i + 1]))
    counter = iter(range(1_000_000))

    def emit(path):
        lines.extend(scoped.get(path, ()))
        for child in sorted(children[path]):
            name = child.rsplit("/", 1)[-1]
            lines.append(f'subgraph "cluster_scope{next(counter)}" {{')
            lines.append(f"label={cluster_label(name, None, opts)};")
            lines.append(f'style="rounded,dashed"; color="{GREY["border"]}";')
            emit(child)
            lines.append("}")

    emit("")


def _forward(data, opts, out, plan):
    saved_by_op = defaultdict(list)
    for s in data.saved:
        saved_by_op[s["op"]].append(s)
    scope_of = {}
    for op in data.ops:
        scope_of[op["id"]] = op["scope"]
        out.scoped[op["scope"]].append(op_node(op, opts))
        out.present.add(("op", op["style"]))
        out.n_units += 1
        if opts.show_saved and op["saved"]:
            box = "s" + op["id"][1:]
            out.scoped[op["scope"]].append(saved_node(box, op, saved_by_op[op["id"]], opts))
            out.level(op["id"], op["scope"], box)
            out.edges.append(
                edge(
                    op["id"],
                    box,
                    {"style": "dotted", "color": SAVED_STYLE["border"], "arrowhead": "none"},
                )
            )
            out.present.add(("saved", ""))
    for t in data.tensors:
        out.scoped[scope_of.get(t["producer"], "")].append(tensor_node(t, opts))
        out.present.add(("tensor", t["role"]))
    n_inputs = {op["id"]: len(op["inputs"]) for op in data.ops}
    for e in data.edges:
        label = e["name"] if e["dst"] in n_inputs and n_inputs[e["dst"]] > 1 else ""
        out.edges.append(plain_edge(e["src"], e["dst"], e["bytes"], label))


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


def _backward(data, opts, out, plan):
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
