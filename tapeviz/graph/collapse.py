"""Collapse a big graph into groups: one node per name scope, runs of unscoped ops chunked,
repeated identical blocks (same kernel sequence) marked and, when consecutive, merged.
``collapse_draw`` writes the plan as DOT."""

from __future__ import annotations

import linecache
import math
from collections import Counter


def group_summary(kernels: list[str]) -> str:
    """A group's kernels in a few words: the three most common, counted (``Mul×4 Add×2``)."""
    top = Counter(kernels).most_common(3)
    text = " ".join(f"{k}\u00d7{n}" for k, n in top)
    return text + (" \u2026" if len(set(kernels)) > 3 else "")


def new_group(gid: str, label: str) -> dict:
    """An empty group: its id, its label, no members yet."""
    return {"id": gid, "label": label, "members": [], "kernels": [], "saved_bytes": 0}


def plan(
    data, max_nodes: int = 300, depth: int = 1, merge_repeats=None, expand=(), structure=True
) -> dict:
    """Group the forward ops of ``data`` so that at most about ``max_nodes // 2`` units remain.

    Args:
        data: GraphData.
        max_nodes: the node budget of the drawing.
        depth: how many scope levels name a group (``"a/b/c"`` with depth 1 -> ``"a"``).
        merge_repeats: merge consecutive groups with the same kernel sequence into one node:
            True always, False never, None (the default) past the budget.
        expand: ids of groups to open (a click on a collapsed group): a group ``c<k>`` is
            drawn op by op, a merged run of identical blocks ``m<k>`` one node per block.
        structure: ops outside any name scope are grouped by the code that recorded them:
            one group per statement (the ops of one line, e.g. ``h @ W + b``; a custom op
            stays a node of its own), a loop on
            one line split into its turns, a loop body of several lines one group per
            turn; without sources (or past the budget) they are chunked in tape order.

    Returns:
        ``{"op_group": {op id: group id}, "groups": [group dict]}``; ops missing from
        ``op_group`` stay as single nodes; an expanded group has ``"expanded": True`` and
        its members are missing from ``op_group``.
    """
    groups: dict[str, dict] = {}
    loose = []
    position = {op["id"]: i for i, op in enumerate(data.ops)}
    for op in data.ops:
        if not op["scope"]:
            loose.append(op)
            continue
        key = "/".join(op["scope"].split("/")[:depth])
        grp = groups.setdefault(key, new_group("", key))
        _add(grp, op)
    target = max(min(max_nodes // 2, 60), 8)
    ordered, rest = list(groups.values()), loose
    if structure:
        found = _code_groups(loose)
        grouped = {op["id"] for g in found for op in g["_ops"]}
        rest = [op for op in loose if op["id"] not in grouped]
        ordered += found
    ordered.sort(key=lambda g: position[g["members"][0]])
    op_group: dict[str, str] = {}
    for i, grp in enumerate(ordered):
        grp["id"] = f"c{i}"
        for m in grp["members"]:
            op_group[m] = grp["id"]
    if merge_repeats or (merge_repeats is None and len(rest) + len(ordered) > target):
        ordered = _merge_repeats(ordered, op_group, expand)
    if structure and len(rest) + len(ordered) > target:  # too many for the code's shape
        return plan(data, max_nodes, depth, merge_repeats, expand, structure=False)
    if len(rest) + len(ordered) > target:
        budget = max(min(target - len(ordered), 24), 1)  # a chain reads best in few chunks
        ordered += _chunk(rest, budget, op_group, len(ordered))
    seen = {}
    for grp in ordered:
        grp.pop("_ops", None)
        sig = tuple(grp["kernels"])
        grp["n_ops"] = len(grp["members"])
        grp["summary"] = group_summary(grp["kernels"])
        grp["same_as"] = seen.get(sig) if len(sig) > 1 and not grp.get("chunk") else None
        if grp["same_as"] == grp["label"]:
            grp["same_as"] = "the one before"
        elif grp["same_as"] and grp["same_as"].startswith(grp.get("base", "\0") + " \u00b7 "):
            grp["same_as"] = grp["same_as"][len(grp["base"]) + 3 :]  # "turn 1/6"
        seen.setdefault(sig, grp["label"])
        grp["expanded"] = grp["id"] in expand
        for m in grp["members"] if grp["expanded"] else ():
            del op_group[m]
    return {"op_group": op_group, "groups": ordered}


def _add(grp: dict, op: dict) -> None:
    grp["members"].append(op["id"])
    grp["kernels"].append(op["kernel"])
    grp["saved_bytes"] += op["saved_bytes"]


def line_of(op):
    """``(file, line)`` of the code that recorded ``op``, None without a source."""
    src = op.get("source") or {}
    return (src.get("file"), src.get("line")) if src.get("line") else None


def period(kernels: list) -> int:
    """The shortest repeating unit of ``kernels`` (a loop on one line), at least 2 ops."""
    n = len(kernels)
    for p in range(2, n // 2 + 1):
        if n % p == 0 and all(kernels[i] == kernels[i % p] for i in range(n)):
            return p
    return n


def _code_text(line, width: int = 34) -> str:
    text = linecache.getline(line[0], line[1]).strip() if line[0] else ""
    if not text:
        return f"line {line[1]}"
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _code_groups(loose: list[dict]) -> list[dict]:
    """Groups of the loose ops by the code that recorded them (see ``plan``)."""
    runs: list = []  # (line, [ops]): consecutive ops recorded at one line
    for op in loose:
        line = line_of(op)
        if op["style"] != "builtin":  # a custom op, an override: the user's own, in sight
            runs.append((None, []))  # ends the run; not in any group, not a turn's end
        elif runs and line is not None and runs[-1][0] == line:
            runs[-1][1].append(op)
        else:
            runs.append((line, [op]))
    statements = []
    for line, ops in (r for r in runs if r[1]):
        p = period([o["kernel"] for o in ops])
        statements += [(line, ops[i : i + p]) for i in range(0, len(ops), p)]
    turns: list[list] = []  # a turn of a loop ends where the line goes back
    for line, ops in statements:
        last = turns[-1][-1][0] if turns else None
        if line and last and line[0] == last[0] and line[1] > last[1]:
            turns[-1].append((line, ops))
        else:
            turns.append([(line, ops)])
    sigs = [tuple(line for line, _ in t) for t in turns]
    out = []
    for i, turn in enumerate(turns):
        looped = len(turn) > 1 and sigs[i] in sigs[max(i - 1, 0) : i] + sigs[i + 1 : i + 2]
        n = len(sigs[i - 1]) if i else 0
        if not looped and n > 1 and sigs[i][:n] == sigs[i - 1]:  # the last turn, then on
            parts = [turn[:n]] + [[s] for s in turn[n:]]
        else:
            parts = [turn] if looped else [[s] for s in turn]
        for part in parts:
            ops = [op for _, stmt in part for op in stmt]
            if part[0][0] is None or len(ops) < 2:
                continue  # no source, or one op: drawn as it is
            first, last = part[0][0], part[-1][0]
            label = _code_text(first)
            if last[1] != first[1]:
                label = f"lines {first[1]}\u2013{last[1]}: {label}"
            grp = new_group("", label)
            grp["_ops"] = ops
            for op in ops:
                _add(grp, op)
            out.append(grp)
    i = 0
    while i < len(out):  # groups of the same code: a loop's turns, or calls on one line
        j = i
        while j + 1 < len(out) and out[j + 1]["label"] == out[i]["label"]:
            j += 1
        if j > i:
            _number(out[i : j + 1])
        i = j + 1
    return out


def _number(run: list[dict]) -> None:
    """Number groups of the same code text. A loop's turns repeat the same call sites
    ("turn 2/3"); calls on one line (``f(z) + f(-z)``: no loop between them) are different
    call sites, so each is "call 1/2" with the part of the line that tells it apart."""
    sites = [tuple((line_of(op), (op.get("source") or {}).get("at")) for op in g["_ops"])
             for g in run]  # fmt: skip
    if any(at is None for site in sites for _, at in site):  # no call sites: as before
        sites = [()] * len(run)
    distinct = list(dict.fromkeys(sites))
    for k, grp in enumerate(run):
        grp["base"] = grp["label"]
        parts = []
        if len(distinct) > 1:
            seg = _call_text(grp["_ops"])
            call = f"call {distinct.index(sites[k]) + 1}/{len(distinct)}"
            parts.append(f"{call}: {seg}" if seg else call)
        turns = sites.count(sites[k])
        if turns > 1:
            parts.append(f"turn {sites[:k].count(sites[k]) + 1}/{turns}")
        grp["label"] += " \u00b7 " + ", ".join(parts)


def _call_text(ops: list[dict], width: int = 26) -> str:
    """The text of the expression that recorded the group's first op on its last line (the
    caller's line of a call): ``f(-z)`` in ``y * f(z) + (1 - y) * f(-z)``; "" if unknown."""
    last = line_of(ops[-1])
    src = next(((op.get("source") or {}) for op in ops if line_of(op) == last), {})
    cols = src.get("cols")
    if not cols or last is None or not last[0]:
        return ""
    raw = linecache.getline(last[0], last[1]).encode("utf-8")
    text = raw[cols[0] : cols[1]].decode("utf-8", "replace").strip()
    return text if len(text) <= width else text[: width - 1] + "\u2026"


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
    if run.get("base") is not None and run["base"] == grp.get("base"):  # a loop's turns
        run["label"] = f"{grp['base']} (\u00d7{run['repeat']} identical)"
    elif run["_first"] == grp["label"]:  # the same name scope each time
        run["label"] = f"{grp['label']} (\u00d7{run['repeat']} identical)"
    else:
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
        grp = new_group(f"c{start + len(out)}", f"ops {part[0]['id']}\u2013{part[-1]['id']}")
        grp["chunk"] = True
        for op in part:
            grp["members"].append(op["id"])
            grp["kernels"].append(op["kernel"])
            grp["saved_bytes"] += op["saved_bytes"]
            op_group[op["id"]] = grp["id"]
        out.append(grp)
    return out
