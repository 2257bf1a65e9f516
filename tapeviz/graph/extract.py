"""Extract: a tape -> ``GraphData``, plain JSON-able data that the renderer and widgets draw.

Ids are strings: ``n<id>`` for a forward or backward op (the tape's node id), ``t<id>`` for a
forward tensor, ``s<node id>`` for the box of values an op saved for backward, ``g<id>`` for
a gradient tensor of the backward pass. Small tensors (``size <= value_limit``) carry their
values (and gradients, once ``tape.gradient`` ran) as nested lists, micrograd style.
"""

from __future__ import annotations

import dataclasses
import json
import linecache
import re
from dataclasses import dataclass, field

from tapeviz.core.autodiff.tape import Tape
from tapeviz.core.tensors.kinds import Variable

from .backward_data import backward_ops, gradients
from .records import dtype_name, json_safe, meta, nbytes, op_record, tensor_value

__all__ = ["GraphData", "extract", "json_safe", "tensor_value"]


@dataclass
class GraphData:
    """Everything the graph shows, as plain data (``to_dict()`` is ``json.dumps``-able).

    Attributes:
        ops: forward op nodes (id, kernel, backend, style, label, scope, source, attrs,
            inputs, outputs, saved ids, saved_bytes).
        tensors: forward tensors (id, name, shape, dtype, bytes, role, value, grad).
        edges: forward edges (src, dst, name, bytes, dy: the gradient id that flowed back).
        saved: saved-for-backward values (id, op, role, name, shape, dtype, bytes, released).
        backward_ops: the ops the gradient ran (id, kernel, grad_of: the forward op id).
        backward_steps: per forward op, in the engine's order: dy in, grads out, accumulation.
        grad_tensors: gradient tensors (id, of: the forward tensor, kind, shape, value).
        backward_edges: data flow between backward ops and gradient tensors.
        meta: counts and totals.
    """

    ops: list = field(default_factory=list)
    tensors: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    saved: list = field(default_factory=list)
    backward_ops: list = field(default_factory=list)
    backward_steps: list = field(default_factory=list)
    grad_tensors: list = field(default_factory=list)
    backward_edges: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def index(self) -> dict:
        """``{id: item}`` over ops, tensors, saved boxes, backward ops and gradient tensors."""
        items = self.ops + self.tensors + self.backward_ops + self.grad_tensors
        out = {d["id"]: d for d in items}
        for op in self.ops:
            if op["saved"]:
                out["s" + op["id"][1:]] = op
        return out


def extract(tape: Tape, value_limit: int = 16) -> GraphData:
    """Read ``tape`` into ``GraphData``.

    Args:
        tape: a recorded ``Tape`` (after ``gradient`` it also has the backward pass).
        value_limit: tensors with at most this many elements carry their values and grads.

    Returns:
        GraphData.

    Example:
        >>> import tapeviz as tv
        >>> from tapeviz.graph import extract
        >>> x = tv.tensor([1.0, 2.0], name="x")
        >>> with tv.Tape() as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(tv.tanh(x))
        >>> [op["kernel"] for op in extract(tape).ops]
        ['Tanh', 'Sum']
    """
    if not isinstance(tape, Tape):
        raise TypeError(f"extract: expected a Tape, got {type(tape).__name__}")
    data = GraphData()
    grads = gradients(tape, data, value_limit)
    _forward(tape, data, value_limit, grads)
    backward_ops(tape, data)
    _names_from_code(data)
    data.meta = {
        "n_ops": len(data.ops),
        "n_tensors": len(data.tensors),
        "n_backward_ops": len(data.backward_ops),
        "saved_bytes": sum(s["bytes"] for s in data.saved),
        "has_backward": bool(tape.backward_steps),
        "persistent": tape.persistent,
        "value_limit": value_limit,
        "scopes": sorted({op["scope"] for op in data.ops if op["scope"]}),
    }
    return data


def _forward(tape, data, limit, grads):
    final_grads, edge_dy, shares = grads
    consumed, produced = set(), set()
    for node in tape.nodes:
        consumed.update(t.id for t in node.inputs.values())
        produced.update(t.id for t in node.outputs)
    tensors = {}

    def add_tensor(t):
        if t.id not in tensors:
            g = final_grads.get(t.id)
            tensors[t.id] = {
                "id": f"t{t.id}",
                "name": t.name,
                **meta(t),
                "role": _role(t, tape, consumed, produced),
                "value": tensor_value(t, limit),
                "grad": tensor_value(g, limit),
                "grad_id": f"g{g.id}" if g is not None else None,
                "grad_shares": shares.get(t.id, 0),
                "producer": None,
            }

    for node in tape.nodes:
        op = op_record(node)
        _saved(node, op, data)
        for name, t in node.inputs.items():
            add_tensor(t)
            op["inputs"][name] = f"t{t.id}"
            dy = edge_dy.get((node.id, name))
            data.edges.append(_edge(f"t{t.id}", op["id"], name, t, dy))
        for i, t in enumerate(node.outputs):
            add_tensor(t)
            tensors[t.id]["producer"] = op["id"]
            op["outputs"].append(f"t{t.id}")
            data.edges.append(_edge(op["id"], f"t{t.id}", str(i), t, None))
        data.ops.append(op)
    data.tensors = list(tensors.values())


_ASSIGNED = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def _names_from_code(data) -> None:
    """An unnamed tensor that a statement of the user's code assigned (``h = tanh(h @ W +
    b)``, ``loss = mean(...)``) is called by that name (``name_from_code``: True): the
    result of the statement's last op; a loop on one line names each turn's result."""
    from .collapse import line_of, period

    tensors = {t["id"]: t for t in data.tensors}
    runs: list = []
    for op in data.ops:
        line = line_of(op)
        if runs and line is not None and runs[-1][0] == line:
            runs[-1][1].append(op)
        else:
            runs.append((line, [op]))
    for line, ops in runs:
        if line is None or not line[0]:
            continue
        m = _ASSIGNED.match(linecache.getline(line[0], line[1]))
        if m is None:
            continue
        p = period([o["kernel"] for o in ops])
        for last in ops[p - 1 :: p]:
            out = tensors.get(last["outputs"][0]) if len(last["outputs"]) == 1 else None
            if out is not None and not out["name"]:
                out["name"], out["name_from_code"] = m.group(1), True


def _edge(src, dst, name, t, dy) -> dict:
    return {"src": src, "dst": dst, "name": name, "bytes": nbytes(t), "dy": dy}


def _saved(node, op, data) -> None:
    for i, sv in enumerate(node.saved):
        sid = f"s{node.id}.{i}"
        op["saved"].append(sid)
        data.saved.append(
            {
                "id": sid,
                "op": op["id"],
                "role": sv.role,
                "name": str(sv.name),
                "shape": list(sv.shape) if sv.shape is not None else None,
                "dtype": dtype_name(sv.dtype) if sv.dtype is not None else None,
                "bytes": int(sv.nbytes),
                "released": sv.released,
                # a value only a constant's gradient would read is never kept (0 B)
                "needed": bool(getattr(sv, "needed", True)),
            }
        )
    op["saved_bytes"] = sum(s.nbytes for s in node.saved)


def _role(t, tape, consumed, produced) -> str:
    if t.id in produced:
        return "intermediate" if t.id in consumed else "output"
    if isinstance(t, Variable):
        return "variable"
    return "input" if t.id in tape.watched else "constant"
