"""DOT statements for a collapsed graph (``collapse.plan``): groups as nodes, an opened
group as a cluster, edges summed between groups; the backward graph one node per group."""

from __future__ import annotations

from collections import defaultdict

from ..present.palette import OKABE_ITO
from .collapse import group_summary, new_group
from .nodes import cluster_label, group_node, op_node, plain_edge, tensor_node
from .style import attr


def draw_forward(data, opts, out, plan) -> None:
    """Statements for the collapsed forward graph: groups, loose ops, aggregated edges."""
    og = plan["op_group"]
    ops = {op["id"]: op for op in data.ops}
    tensors = {t["id"]: t for t in data.tensors}
    folded = _fold_ends(data, og, tensors)
    in_cluster = set()
    for grp in plan["groups"]:
        grp["reads"] = [folded_name(tensors[t]) for t, g in folded.items() if grp["id"] in g]
        if not grp["expanded"]:
            out.scoped[""].append(group_node(grp, opts))
        elif opts.mode != "both":  # "both" levels ops with their gradients: no clusters
            out.scoped[""].append(_expanded_cluster(grp, ops, opts, out))
            in_cluster.update(grp["members"])
    for op in data.ops:
        if op["id"] not in og and op["id"] not in in_cluster:
            out.scoped[""].append(op_node(op, opts))
            out.present.add(("op", op["style"]))
    out.present.add(("op", "group"))
    out.n_units += len(plan["groups"]) + sum(op["id"] not in og for op in data.ops)
    ends = [
        t
        for t in data.tensors
        if t["role"] in ("input", "variable", "output") and t["id"] not in folded
    ]
    show_ends = len(ends) <= 40
    hidden = [t for t in data.tensors if t["role"] == "constant" or not show_ends]
    for t in ends if show_ends else ():
        out.scoped[""].append(tensor_node(t, opts))
        out.present.add(("tensor", t["role"]))
    if hidden:
        n_const = sum(t["role"] == "constant" for t in hidden)
        parts = [f"{n_const} constants"] if n_const else []
        parts += [f"{len(hidden) - n_const} other tensors"] if len(hidden) > n_const else []
        text = "not drawn: " + ", ".join(parts)
        out.scoped[""].append(
            f'"hidden" [shape=plaintext, class="tv-note", fontsize=9, label={attr(text)}]'
        )
    agg = defaultdict(int)
    for e in data.edges:
        src_t = tensors.get(e["src"])
        if src_t is not None:
            dst = og.get(e["dst"], e["dst"])
            prod = src_t["producer"]
            if not prod and (src_t["role"] == "constant" or not show_ends):
                continue
            if src_t["id"] in folded:
                continue  # drawn inside the one group that reads it
            src = og.get(prod, prod) if prod else src_t["id"]
        else:
            src = og.get(e["src"], e["src"])
            t = tensors[e["dst"]]
            if t["role"] != "output" or not show_ends:
                continue
            dst = t["id"]
        if src != dst:
            agg[(src, dst)] += e["bytes"]
    for (src, dst), nbytes in agg.items():
        out.edges.append(plain_edge(src, dst, nbytes))


def folded_name(t: dict) -> str | None:
    return t["name"]


def _fold_ends(data, og: dict, tensors: dict) -> dict:
    """``{tensor id: {group ids}}``: the inputs and variables that only collapsed groups
    read; each of those groups names them (``reads W0, b0``) instead of a node of their own
    with an edge to every reader (an RNN's weights, read by each turn)."""
    readers = defaultdict(set)
    for e in data.edges:
        t = tensors.get(e["src"])
        if t is not None and not t["producer"] and t["role"] in ("input", "variable"):
            readers[t["id"]].add(og.get(e["dst"], e["dst"]))
    groups = set(og.values())
    return {t: r for t, r in readers.items() if r <= groups}


def _expanded_cluster(grp: dict, ops: dict, opts, out) -> str:
    """An expanded group: its ops in a cluster whose label collapses it again on a click."""
    lines = [f"subgraph {attr('cluster_x' + grp['id'])} {{"]
    text = f"\u25be {grp['label']} \u00b7 {grp['n_ops']} ops (click here to collapse)"
    lines.append(f"label={cluster_label(text, None, opts)};")
    lines.append(f'style="rounded,dashed"; color="{OKABE_ITO["blue"]}";')
    for m in grp["members"]:
        lines.append(op_node(ops[m], opts))
        out.present.add(("op", ops[m]["style"]))
    lines.append("}")
    return "\n".join(lines)


def draw_backward(data, opts, out, plan) -> None:
    """Statements for the collapsed backward graph: one node per group's gradient ops."""
    og = plan["op_group"]
    labels = {g["id"]: g["label"] for g in plan["groups"]}
    labels.update({op["id"]: op["label"] for op in data.ops if op["id"] not in og})
    units: dict[str, dict] = {}
    unit_of = {}
    for bop in data.backward_ops:
        fwd = og.get(bop["grad_of"], bop["grad_of"])
        uid = "b" + fwd
        grp = units.setdefault(uid, new_group(uid, "\u2202 " + labels.get(fwd, fwd)))
        grp["members"].append(bop["id"])
        grp["kernels"].append(bop["kernel"])
        unit_of[bop["id"]] = uid
    for uid, grp in units.items():
        grp.update(n_ops=len(grp["members"]), summary=group_summary(grp["kernels"]), same_as=None)
        out.scoped[""].append(group_node(grp, opts))
        if opts.mode == "both":
            out.level(uid[1:], "", uid)  # level with its forward group or op
    out.n_units += len(units)
    out.present.add(("op", "group"))
    producer = {e["dst"]: e["src"] for e in data.backward_edges if e["src"] in unit_of}
    agg = defaultdict(int)
    for e in data.backward_edges:
        if e["dst"] not in unit_of or e["kind"] == "saved":
            continue
        src = producer.get(e["src"], e["src"]) if e["kind"] == "grad" else e["src"]
        if src not in unit_of:
            continue  # the seed dy
        a, b = unit_of[src], unit_of[e["dst"]]
        if a != b:
            agg[(a, b)] += e["bytes"]
    extra = {"constraint": "false"} if opts.mode == "both" else {}
    for (src, dst), nbytes in agg.items():
        out.edges.append(plain_edge(src, dst, nbytes, **extra))
