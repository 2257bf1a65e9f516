"""What one step of the backward pass did, as plain data (for the BackpropStepper panel).

For step ``i`` of ``tape.backward_steps``: the node, the incoming ``dy``, the saved values
its gradient used, the gradient formula, the local derivative as numbers (``dx / dy`` for
elementwise gradients), the gradients produced, and for tensors used by more than one node
each edge's contribution to the summed gradient so far.
"""

from __future__ import annotations

import numpy as np

from tapeviz.core.tensors.tensor import Tensor

from ..formulas import gradient_formula
from ..memory.data import linked_tensor


def _arr(t):
    d = t.peek() if isinstance(t, Tensor) else None
    return None if d is None else np.asarray(d)


def consumers(tape) -> dict:
    """tensor id -> [(node_id, input name)] of the forward nodes that read it."""
    out: dict = {}
    for node in tape.nodes:
        for name, t in node.inputs.items():
            out.setdefault(t.id, []).append((node.id, name))
    return out


def _local(dy, g, x):
    """dx/dy elementwise when the gradient is elementwise in dy, else None."""
    if dy is None or g is None or dy.shape != g.shape or dy.shape != x.shape:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(dy != 0, g / np.where(dy != 0, dy, 1), np.nan)
    return ratio


def _saved(node, s) -> dict:
    t = s.tensor if s.tensor is not None else linked_tensor(node, s)
    return {"role": s.role, "name": str(s.name), "value": _arr(t), "shape": s.shape,
            "nbytes": s.nbytes}  # fmt: skip


def _tensor_name(tape, t) -> str:
    """What to call the tensor a gradient flows into: its name, or its producer."""
    if t.name:
        return t.name
    producer = tape.producer(t)
    if producer is not None:
        return f"output of node {producer.id} ({producer.label})"
    return "watched input" if t.id in tape.watched else f"tensor #{t.id}"


def step_data(tape, index: int, users: dict | None = None) -> dict:
    """Everything the panel shows for backward step ``index`` (0-based)."""
    steps = tape.backward_steps
    step = steps[index]
    node = tape.node(step.node_id)
    users = consumers(tape) if users is None else users
    dys = [_arr(d) for d in step.dy]
    saved = []
    for s in node.saved:
        t = s.tensor if s.tensor is not None else linked_tensor(node, s)
        saved.append(
            {
                "role": s.role,
                "name": str(s.name),
                "value": _arr(t),
                "shape": s.shape,
                "nbytes": s.nbytes,
            }
        )
    grads = {name: _arr(g) for name, g in step.grads.items()}
    dy0 = dys[0] if len(dys) == 1 else None
    local = {name: _local(dy0, g, node.inputs[name]) for name, g in grads.items()}
    targets = {name: _tensor_name(tape, node.inputs[name]) for name in grads}
    return {
        "index": index,
        "count": len(steps),
        "node_id": node.id,
        "label": str(node.label),
        "kernel": node.kernel,
        "style": node.style,
        "dy": dys,
        "saved": saved,
        "formula": gradient_formula(node),
        "local": local,
        "grads": grads,
        "targets": targets,
        "skipped": [name for name in node.inputs if name not in grads],
        "accumulation": _accumulation(tape, index, node, step, users),
        "backward_node_ids": list(step.backward_node_ids),
    }


def _accumulation(tape, index, node, step, users) -> list:
    """For each input of this node read by several nodes: every edge's share so far."""
    out, seen = [], set()
    for name in step.grads:
        x = node.inputs[name]
        readers = users.get(x.id, [])
        if len(readers) < 2 or x.id in seen:
            continue
        seen.add(x.id)
        names = [k for k in step.grads if node.inputs[k].id == x.id]
        shares = []
        for s in tape.backward_steps[: index + 1]:
            n = tape.node(s.node_id)
            for k, g in s.grads.items():
                if n.inputs[k].id == x.id:
                    shares.append(
                        {
                            "node_id": n.id,
                            "label": str(n.label),
                            "input": k,
                            "value": _arr(g),
                            "this_step": s is step,
                        }
                    )
        total = sum(sh["value"] for sh in shares) if shares else None
        out.append(
            {
                "input": ", ".join(names),
                "tensor": _tensor_name(tape, x),
                "readers": len(readers),
                "shares": shares,
                "total": total,
                "summed_by_engine": any(k in step.accumulated for k in names),
            }
        )
    return out


def visited_highlight(tape, index: int) -> dict:
    """{node_id: "visited" | "current"} for the graph at step ``index``."""
    hl = {s.node_id: "visited" for s in tape.backward_steps[:index]}
    hl[tape.backward_steps[index].node_id] = "current"
    return hl
