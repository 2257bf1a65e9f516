"""Un-fuse fused kernels for the lesson graph, so every step of them can be followed.

A node whose primitive has a ``decomposition`` (``_FusedMatMul``: act(a @ b + bias);
``SoftmaxCrossEntropyWithLogits``: mean(-Σ labels · log_softmax(logits)); an op of
``tv.define_op(..., decomposition=...)``) is run again as those ops on a fresh tape,
on the values it recorded, and differentiated with the ``dy`` its backward step received:
the engine computes every intermediate value and gradient, and the lesson graph draws those
ops in the fused node's place.
"""

from __future__ import annotations

import numpy as np

import tapeviz.core as core

__all__ = ["unfuse"]


def _step_of(tape, node_id):
    return next((s for s in tape.backward_steps if s.node_id == node_id), None)


def unfuse(tape, data: dict, grads_of) -> dict:
    """Replace each fused op in lesson ``data`` by its composite ops (values and grads from
    the engine). ``grads_of(tape)`` gives ``{tensor id: grad}`` of a tape."""
    ops = []
    for op in data["ops"]:
        node = tape.node(op["id"])
        make = node.primitive.decomposition
        if make is None or len(node.outputs) != 1:
            ops.append(op)
            continue
        ops += _expand(tape, node, make, data, grads_of)
    return {"tensors": data["tensors"], "ops": ops}


def _expand(tape, node, make, data, grads_of) -> list:
    from .lesson import OP_SYMBOLS, derived_name, leaf_name

    copies = {k: core.tensor(np.array(t._data)) for k, t in node.inputs.items()}
    with core.Tape() as sub:
        sub.watch(list(copies.values()))
        out = make(copies, node.attrs)
    step = _step_of(tape, node.id)
    if step is not None and step.dy[0] is not None:
        sub.gradient(out, list(copies.values()), output_gradients=step.dy[0])
    alias = {c.id: node.inputs[k].id for k, c in copies.items()}
    alias[out.id] = node.outputs[0].id
    grads = grads_of(sub) if step is not None else {}
    names = {c: data["tensors"][t]["name"] for c, t in alias.items() if t in data["tensors"]}
    for n in sub.nodes:  # an intermediate: what it computes ("x @ W"), else "<op> out"
        for t in list(n.inputs.values()) + list(n.outputs):
            if t.id not in alias and t.id not in data["tensors"]:
                out_ = any(t is o for o in n.outputs)
                slot = next(k for k, v in n.inputs.items() if v is t) if not out_ else ""
                names[t.id] = derived_name(n, names) if out_ else leaf_name(n, slot)
                data["tensors"][t.id] = {"name": names[t.id], "value": np.asarray(t._data),
                                         "grad": grads.get(t.id)}  # fmt: skip
    return [
        {
            "id": f"{node.id}.{n.id}",
            "kernel": n.kernel,
            "symbol": OP_SYMBOLS.get(n.kernel, str(n.label).lower()),
            "inputs": [alias.get(t.id, t.id) for t in n.inputs.values()],
            "outputs": [alias.get(t.id, t.id) for t in n.outputs],
        }  # fmt: skip
        for n in sub.nodes
    ]
