"""Collapse a big graph into groups: one node per name scope, runs of unscoped ops chunked,
repeated identical blocks (same kernel sequence) marked and, when consecutive, merged."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from ..present.palette import OKABE_ITO


def _summary(kernels: list[str]) -> str:
    top = Counter(kernels).most_common(3)
    text = " ".join(f"{k}\u00d7{n}" for k, n in top)
    return text + (" \u2026" if len(set(kernels)) > 3 else "")


def _new_group(gid: str, label: str) -> dict:
    return {"id": gid, "label": label, "members": [], "kernels": [], "saved_bytes": 0}


def plan(data, max_nodes: int = 300, depth: int = 1, merge_repeats: bool = True, expand=()) -> dict:
    """Group the forward ops of ``data`` so that at most about ``max_nodes // 2`` units remain.

    Args:
        data: GraphData.
        max_nodes: the node budget of the drawing.
        depth: how many scope levels name a group (``"a/b/c"`` with depth 1 -> ``"a"``).
        merge_repeats: merge consecutive groups with the same kernel sequence into one node.
        expand: ids of groups to open (a click on a collapsed group): a group ``c<k>`` is
            drawn op by op, a merged run of identical blocks ``m<k>`` one node per block.

    Returns:
        ``{"op_group": {op id: group id}, "groups": [group dict]}``; ops missing from
        ``op_group`` stay as single nodes; an expanded group has ``"expanded": True`` and
        its members are missing from ``op_group``.
    """
    groups: dict[str, dict] = {}
    op_group: dict[str, str] = {}
    loose = []
    for op in data.ops:
        if not op["scope"]:
            loose.append(op)
            continue
        key = "/".join(op["scope"].split("/")[:depth])
        grp = groups.setdefault(key, _new_group(f"c{len(groups)}", key))
        grp["members"].append(op["id"])
        grp["kernels"].append(op["kernel"])
        grp["saved_bytes"] += op["saved_bytes"]
        op_group[op["id"]] = grp["id"]
    ordered = list(groups.values())
    target = max(min(max_nodes // 2, 60), 8)
    if merge_repeats and len(loose) + len(ordered) > target:
        ordered = _merge_repeats(ordered, op_group, expand)
    if len(loose) + len(ordered) > target:
        budget = max(min(target - len(ordered), 24), 1)  # a chain reads best in few chunks
        ordered += _chunk(loose, budget, op_group, len(ordered))
    seen = {}
    for grp in ordered:
        sig = tuple(grp["kernels"])
        grp["n_ops"] = len(grp["members"])
        grp["summary"] = _summary(grp["kernels"])
        grp["same_as"] = seen.get(sig) if len(sig) > 1 and not grp.get("chunk") else None
        seen.setdefault(sig, grp["label"])
        grp["expanded"] = grp["id"] in expand
        for m in grp["members"] if grp["expanded"] else ():
            del op_group[m]
    return {"op_group": op_group, "groups": ordered}


def _merge_repeats(ordered: list[dict], op_group: dict, expand=()) -> list[dict]:
    """Merge runs of groups with the same kernel sequence into one node ``m<k>``; a run
    whose id is in ``expand`` stays apart, one node per block."""
    merged: list[dict] = []
    split = None  # the signature of an expanded run being walked
    for grp in ordered:
        sig, last = tuple(grp["kernels"]), (merged[-1] if merged else None)
        same = last is not None and last["_sig"] == sig and len(sig) > 0
        if same and split != sig and "m" + last["_first_id"][1:] in expand:
            split = sig
        if same and split != sig:
            _absorb(last, grp, op_group)
            continue
        split = split if same else None
        grp["_sig"], grp["_first"], grp["_first_id"], grp["repeat"] = (
            sig,
            grp["label"],
            grp["id"],
            1,
        )
        merged.append(grp)
    for grp in merged:
        if grp["repeat"] > 1:
            grp["kernels"] = list(grp["_sig"])  # one block's kernels; members hold all
        del grp["_sig"], grp["_first"], grp["_first_id"]
    return merged


def _absorb(run: dict, grp: dict, op_group: dict) -> None:
    run["repeat"] += 1
    run["id"] = "m" + run["_first_id"][1:]
    run["label"] = f"{run['_first']} \u2026 {grp['label']} (\u00d7{run['repeat']} identical)"
    run["members"] += grp["members"]
    run["saved_bytes"] += grp["saved_bytes"]
    for m in run["members"]:
        op_group[m] = run["id"]


def _chunk(loose: list[dict], budget: int, op_group: dict, start: int) -> list[dict]:
    size = max(2, math.ceil(len(loose) / max(budget, 1)))
    out = []
    for i in range(0, len(loose), size):
        part = loose[i : i + size]
        grp = _new_group(f"c{start + len(out)}", f"ops {part[0]['id']}\u2013{part[-1]['id']}")
        grp["chunk"] = True
        for op in part:
            grp["members"].append(op["id"])
            grp["kernels"].append(op["kernel"])
            grp["saved_bytes"] += op["saved_bytes"]
            op_group[op["id"]] = grp["id"]
        out.append(grp)
    return out


def draw_forward(data, opts, out, plan) -> None:
    """Statements for the collapsed forward graph: groups, loose ops, aggregated edges."""
    from .nodes import group_node, op_node, plain_edge, tensor_node
    from .style import attr

    og = plan["op_group"]
    ops = {op["id"]: op for op in data.ops}
    in_cluster = set()
    for grp in plan["groups"]:
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
    tensors = {t["id"]: t for t in data.tensors}
    ends = [t for t in data.tensors if t["role"] in ("input", "variable", "output")]
    show_ends = len(ends) <= 40
    hidden = [t for t in data.tensors if t["role"] == "constant" or not show_ends]
    for t in ends if show_ends else ():
        out.scoped[""].append(tensor_node(t, opts))
        out.present.add(("tensor", t["role"]))
    if hidden:
        n_const = sum(t["role"] == "constant" for t in hidden)
        text = f"collapsed: {n_const} constants, {len(hidden) - n_const} other tensors not drawn"
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


def _expanded_cluster(grp: dict, ops: dict, opts, out) -> str:
    """An expanded group: its ops in a cluster whose label collapses it again on a click."""
    from .nodes import cluster_label, op_node
    from .style import attr

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
    from .nodes import group_node, plain_edge

    og = plan["op_group"]
    labels = {g["id"]: g["label"] for g in plan["groups"]}
    labels.update({op["id"]: op["label"] for op in data.ops if op["id"] not in og})
    units: dict[str, dict] = {}
    unit_of = {}
    for bop in data.backward_ops:
        fwd = og.get(bop["grad_of"], bop["grad_of"])
        uid = "b" + fwd
        grp = units.setdefault(uid, _new_group(uid, "\u2202 " + labels.get(fwd, fwd)))
        grp["members"].append(bop["id"])
        grp["kernels"].append(bop["kernel"])
        unit_of[bop["id"]] = uid
    for uid, grp in units.items():
        grp.update(n_ops=len(grp["members"]), summary=_summary(grp["kernels"]), same_as=None)
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
