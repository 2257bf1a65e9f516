"""Assemble DOT text from GraphData: forward, backward or both, scopes as clusters, collapse."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..present.palette import GREY
from . import collapse, collapse_draw, dot_backward
from .nodes import (
    cluster_label,
    edge,
    legend,
    op_node,
    plain_edge,
    saved_node,
    tensor_node,
)
from .style import MIN_PT, SAVED_STYLE, TITLE_PT, attr

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
        collapse.plan(data, opts.max_nodes, merge_repeats=opts.merge, expand=opts.expand)
        if collapsed
        else None
    )
    if opts.mode in ("forward", "both"):
        (collapse_draw.draw_forward if plan else _forward)(data, opts, out, plan)
    if opts.mode in ("backward", "both"):
        (collapse_draw.draw_backward if plan else dot_backward.draw_backward)(data, opts, out, plan)
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
