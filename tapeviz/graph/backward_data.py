"""The backward half of extraction: steps, gradient tensors and the gradient ops' data flow."""

from __future__ import annotations

from .records import display_label, meta, nbytes, op_record, tensor_value


class _Grads:
    """Collects gradient tensors, the last gradient of each tensor and its shares."""

    def __init__(self, limit):
        self.limit = limit
        self.records, self.shares, self.final, self.edge_dy = {}, {}, {}, {}

    def record(self, g, of, kind) -> str:
        gid = f"g{g.id}"
        if gid not in self.records:
            rec = {"id": gid, "of": f"t{of.id}", "kind": kind, **meta(g)}
            rec["value"] = tensor_value(g, self.limit)
            self.records[gid] = rec
        return gid

    def step(self, step, node) -> dict:
        dys = []
        for o, g in zip(node.outputs, step.dy):
            if g is not None:
                self.final.setdefault(o.id, g)
                dys.append({"tensor": f"t{o.id}", "grad": self.record(g, o, "dy")})
        outs = []
        for name, g in step.grads.items():
            x = node.inputs[name]
            gid = self.record(g, x, "grad")
            self.shares.setdefault(x.id, []).append(gid)
            self.edge_dy[(node.id, name)] = gid
            total = step.accumulated.get(name)
            tid = self.record(total, x, "sum") if total is not None else None
            self.final[x.id] = total if total is not None else self.final.get(x.id, g)
            outs.append({"input": name, "tensor": f"t{x.id}", "grad": gid, "total": tid})
        return {
            "op": f"n{node.id}",
            "label": display_label(node),
            "dy": dys,
            "grads": outs,
            "accumulated": sorted(step.accumulated),
            "backward_ops": [f"n{i}" for i in step.backward_node_ids],
        }


def gradients(tape, data, limit):
    """Backward steps and gradient tensors into ``data``.

    Returns (final gradient per tensor id, gradient id per (node id, input name), number of
    gradient contributions per tensor id: more than one means they were accumulated).
    """
    nodes = {n.id: n for n in tape.nodes}
    grads = _Grads(limit)
    for step in tape.backward_steps:
        data.backward_steps.append(grads.step(step, nodes[step.node_id]))
    for ids in grads.shares.values():
        for gid in ids if len(ids) > 1 else ():
            if grads.records[gid]["kind"] == "grad":
                grads.records[gid]["kind"] = "share"
    data.grad_tensors = list(grads.records.values())
    return grads.final, grads.edge_dy, {k: len(v) for k, v in grads.shares.items()}


def backward_ops(tape, data):
    gids = {g["id"] for g in data.grad_tensors}
    forward = {t["id"] for t in data.tensors}
    producer = {}
    for node in tape.backward_nodes:
        op = op_record(node)
        for name, t in node.inputs.items():
            tid = f"g{t.id}"
            op["inputs"][name] = tid
            if tid in gids:
                src, kind = tid, "grad"
            elif t.id in producer:
                src, kind = producer[t.id], "flow"
            elif f"t{t.id}" in forward:
                src, kind = f"t{t.id}", "saved"
            else:
                continue  # a constant made inside the gradient function
            data.backward_edges.append(
                {"src": src, "dst": op["id"], "name": name, "bytes": nbytes(t), "kind": kind}
            )
        for t in node.outputs:
            producer[t.id] = op["id"]
            op["outputs"].append(f"g{t.id}")
            if f"g{t.id}" in gids:
                data.backward_edges.append(
                    {
                        "src": op["id"],
                        "dst": f"g{t.id}",
                        "name": "",
                        "bytes": nbytes(t),
                        "kind": "grad",
                    }
                )
        data.backward_ops.append(op)
