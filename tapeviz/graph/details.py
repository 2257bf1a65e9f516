"""Details of one graph node for the widget's side panel: plain, JSON-able dicts.

``node_details(tape, data, node_id)`` returns ``{"id", "kind", "title", "rows": [[key,
value]], "sections": [{"title", "rows", "preview", "histogram"}]}``: the rows say what the
node is (kernel, backend, attrs, the user's code line), each section one tensor (a value, a
gradient, a saved value) with its statistics, a preview and a 10-bin histogram.
"""

from __future__ import annotations

import numpy as np

from tapeviz.core.tensors.tensor import Tensor

from ..present.text import visible_tree
from ..present.units import fmt_bytes
from .cells import source_text
from .style import fmt_shape


def tensor_index(tape) -> dict:
    """``{tensor id: Tensor}`` over every tensor the tape and its backward pass touched."""
    out = {}
    for node in list(tape.nodes) + list(tape.backward_nodes):
        for t in list(node.inputs.values()) + list(node.outputs):
            out[t.id] = t
    for step in tape.backward_steps:
        for t in list(step.dy) + list(step.grads.values()) + list(step.accumulated.values()):
            if isinstance(t, Tensor):
                out[t.id] = t
    return out


def stats_section(title: str, t, preview_limit: int = 24) -> dict:
    """Shape, dtype, bytes, min/max/mean/std, a preview and a histogram of ``t``."""
    a = t.peek() if isinstance(t, Tensor) else None
    if a is None:
        return {"title": title, "rows": [["value", "released or disposed"]], "preview": ""}
    rows = [["shape", fmt_shape(a.shape)], ["dtype", str(a.dtype)], ["bytes", fmt_bytes(a.nbytes)]]
    section = {"title": title, "rows": rows, "preview": "", "histogram": None}
    if a.size == 0:
        return section
    f = a.astype(np.float64, copy=False)
    finite = f[np.isfinite(f)]
    if finite.size:
        rows += [
            ["min", f"{finite.min():.4g}"],
            ["max", f"{finite.max():.4g}"],
            ["mean", f"{finite.mean():.4g}"],
            ["std", f"{finite.std():.4g}"],
        ]
        counts, edges = np.histogram(finite, bins=10)
        section["histogram"] = {"counts": counts.tolist(), "edges": edges.tolist()}
    bad = int(f.size - finite.size)
    if bad:
        rows.append(["nan/inf", str(bad)])
    section["preview"] = np.array2string(a, precision=4, threshold=preview_limit, edgeitems=3)
    return section


def _op_rows(op: dict) -> list:
    rows = [["kernel", op["kernel"]], ["backend", op["backend"]], ["style", op["style"]]]
    if op["label"] != op["kernel"]:
        rows.append(["function", op["label"]])
    if op.get("fusion"):
        rows.append(["fused", f"{op['fusion']} in one kernel ({op['kernel']})"])
    if op["scope"]:
        rows.append(["scope", op["scope"]])
    src = op["source"]
    if src:
        rows.append(["source", source_text(src)])
    for k, v in op["attrs"].items():
        rows.append([f"attr {k}", repr(v)])
    if op.get("grad_of"):
        rows.append(["gradient of", op["grad_of"]])
    if op.get("once_only"):
        rows.append(["gradient", "differentiable once only (numpy or compiled code)"])
    return rows


def _op_details(tape, op) -> dict:
    node = tape.node(int(op["id"][1:]))
    out = {"id": op["id"], "kind": "op", "title": f"{op['label']} ({op['id']})"}
    out["rows"] = _op_rows(op)
    sections = []
    for name, t in node.inputs.items():
        sections.append(stats_section(f"input {name}", t))
    for i, t in enumerate(node.outputs):
        sections.append(stats_section(f"output {i}", t))
    for s in node.saved:
        sec = stats_section(f"saved {s.role} {s.name} ({fmt_bytes(s.nbytes)})", s.tensor)
        sections.append(sec)
    if node.saved:
        out["rows"].append(["saved total", fmt_bytes(node.saved_nbytes)])
    for step in tape.backward_steps:
        if step.node_id == node.id:
            out["rows"].append(["backward ops", ", ".join(f"n{i}" for i in step.backward_node_ids)])
            for i, d in enumerate(step.dy):
                if d is not None:
                    sections.append(stats_section(f"dy (output {i})", d))
            for name, g in step.grads.items():
                summed = " (summed with earlier shares)" if name in step.accumulated else ""
                sections.append(stats_section(f"gradient for {name}{summed}", g))
    out["sections"] = sections
    return out


def node_details(tape, data, node_id: str) -> dict:
    """The side-panel dict for ``node_id`` (``n3``, ``t5``, ``s3``, ``g9``; see module doc).

    Example:
        >>> import tapeviz as tv
        >>> from tapeviz.graph import extract
        >>> from tapeviz.graph.details import node_details
        >>> x = tv.tensor([1.0, 2.0], name="x")
        >>> with tv.Tape() as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(x * x)
        >>> node_details(tape, extract(tape), "n0")["rows"][0]
        ['kernel', 'Mul']
    """
    return visible_tree(_node_details(tape, data, node_id))  # JSON to the browser: no surrogates


def _node_details(tape, data, node_id: str) -> dict:
    item = data.index().get(node_id)
    if item is None:
        return {
            "id": node_id,
            "kind": "unknown",
            "title": node_id,
            "rows": [["note", "no details for this node (collapsed group or legend)"]],
            "sections": [],
        }
    tensors = tensor_index(tape)
    if node_id.startswith("s"):
        det = _op_details(tape, item)
        det["sections"] = [s for s in det["sections"] if s["title"].startswith("saved")]
        det.update(id=node_id, kind="saved", title=f"saved for backward by {item['label']}")
        return det
    if node_id.startswith("n"):
        return _op_details(tape, item)
    index = data.index()
    if node_id.startswith("g"):
        of = _tensor_name(index.get(item["of"]), index) or item["of"]
        rows = [["gradient of", of], ["kind", item["kind"]], ["id", node_id]]
        sec = [stats_section("gradient", tensors.get(int(node_id[1:])))]
        title = f"\u2202 {of}"
        return {"id": node_id, "kind": "gradient", "title": title, "rows": rows, "sections": sec}
    return _tensor_details(item, tensors, index)


def _tensor_name(t: dict | None, index: dict) -> str | None:
    """A tensor as a person names it: its name (given, or the one the code assigned), else
    ``<op> out`` (``Mul out``), not its id."""
    if t is None:
        return None
    if t.get("name"):
        return t["name"]
    op = index.get(t.get("producer") or "")
    return f"{op['label']} out" if op else None


def _tensor_details(item: dict, tensors: dict, index: dict) -> dict:
    name = _tensor_name(item, index)
    rows = [["name", str(item["name"] or name)], ["role", item["role"]], ["id", item["id"]]]
    if item["producer"]:
        op = index.get(item["producer"])
        rows.append(["made by", f"{op['label']} ({item['producer']})" if op else item["producer"]])
    if item["grad_shares"] > 1:
        rows.append(["gradient", f"sum of {item['grad_shares']} shares (tensor reused)"])
    sections = [stats_section("value", tensors.get(int(item["id"][1:])))]
    if item["grad_id"]:
        sections.append(stats_section("gradient", tensors.get(int(item["grad_id"][1:]))))
    title = name or f"tensor {item['id']}"
    return {"id": item["id"], "kind": "tensor", "title": title, "rows": rows, "sections": sections}
