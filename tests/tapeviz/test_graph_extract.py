import json

import numpy as np
import pytest
from graph_cases import reuse_tape, styles_tape

import tapeviz as tv
from tapeviz.graph import extract
from tapeviz.graph.details import node_details


def test_forward_nodes_edges_and_roles():
    tape, x, w, y, _ = reuse_tape()
    data = extract(tape)
    assert [op["kernel"] for op in data.ops] == ["Mul", "Tanh", "Mul", "Sum"]
    assert [op["scope"] for op in data.ops] == ["blk", "blk", "", ""]
    roles = {t["id"]: t["role"] for t in data.tensors}
    assert roles[f"t{x.id}"] == "input"
    assert roles[f"t{w.id}"] == "variable"
    assert roles[f"t{y.id}"] == "output"
    assert sorted(roles.values()).count("intermediate") == 3
    # 4 ops: 2 + 1 + 2 + 1 input edges, 4 output edges; x feeds two ops
    assert len(data.edges) == 10
    assert sum(e["src"] == f"t{x.id}" for e in data.edges) == 2
    assert all(e["bytes"] == 8 for e in data.edges if e["src"] == f"t{x.id}")
    src = data.ops[0]["source"]
    assert src["file"].endswith("graph_cases.py") and src["func"] == "reuse_tape"
    json.dumps(data.to_dict())  # plain data


def test_saved_values_roles_and_bytes():
    tape, *_ = reuse_tape()
    data = extract(tape)
    by_op = {}
    for s in data.saved:
        by_op.setdefault(s["op"], []).append((s["role"], s["name"], s["bytes"]))
    assert by_op["n0"] == [("input", "a", 8), ("input", "b", 8)]  # Mul saves both inputs
    assert by_op["n1"] == [("output", "0", 8)]  # Tanh saves its output
    assert "n3" not in by_op  # Sum saves nothing
    assert [op["saved_bytes"] for op in data.ops] == [16, 8, 16, 0]
    assert data.meta["saved_bytes"] == 40
    assert all(s["released"] is False for s in data.saved)  # persistent tape


def test_small_values_and_gradients_micrograd_style():
    tape, x, w, y, (gx, gw) = reuse_tape()
    data = extract(tape)
    tensors = {t["id"]: t for t in data.tensors}
    np.testing.assert_allclose(tensors[f"t{x.id}"]["value"], [1.0, 2.0])
    np.testing.assert_allclose(tensors[f"t{x.id}"]["grad"], gx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(tensors[f"t{w.id}"]["grad"], gw.numpy(), rtol=1e-6)
    assert tensors[f"t{y.id}"]["grad"] == 1.0  # the seed dy
    big = extract(tape, value_limit=1)
    assert all(t["value"] is None for t in big.tensors if t["shape"] == [2])


def test_backward_ops_link_to_forward_nodes():
    tape, *_ = reuse_tape()
    data = extract(tape)
    assert len(data.backward_ops) == len(tape.backward_nodes) > 0
    forward_ids = {op["id"] for op in data.ops}
    assert all(b["grad_of"] in forward_ids for b in data.backward_ops)
    assert [s["op"] for s in data.backward_steps] == ["n3", "n2", "n1", "n0"]
    for step in data.backward_steps:
        for bid in step["backward_ops"]:
            assert next(b for b in data.backward_ops if b["id"] == bid)["grad_of"] == step["op"]
    # data flow of the backward pass: every gradient edge ends at a drawn node
    ids = {b["id"] for b in data.backward_ops} | {g["id"] for g in data.grad_tensors}
    assert data.backward_edges and all(e["dst"] in ids for e in data.backward_edges)


def test_accumulation_of_a_reused_tensor():
    tape, x, *_ = reuse_tape()
    data = extract(tape)
    tx = next(t for t in data.tensors if t["id"] == f"t{x.id}")
    assert tx["grad_shares"] == 2
    steps = {s["op"]: s for s in data.backward_steps}
    assert steps["n0"]["accumulated"] == ["a"]  # x's second share is summed at Mul n0
    summed = next(g for g in steps["n0"]["grads"] if g["input"] == "a")
    kinds = {g["id"]: g["kind"] for g in data.grad_tensors}
    assert kinds[summed["total"]] == "sum" and kinds[summed["grad"]] == "share"
    assert tx["grad_id"] == summed["total"]
    # dy along each edge into the forward ops: the share that flowed back
    dys = [e["dy"] for e in data.edges if e["src"] == f"t{x.id}"]
    assert len(set(dys)) == 2 and all(kinds[d] == "share" for d in dys)


def test_styles_labels_and_attrs_are_json_safe():
    data = extract(styles_tape())
    styles = [(op["style"], op["label"]) for op in data.ops]
    assert styles == [
        ("builtin", "Mul"),
        ("override", "Exp"),
        ("custom_grad", "my_square"),
        ("DifferentiableFunction", "SReLU"),
        ("CompiledLayer", "fast_tanh"),
        ("builtin", "Sum"),
    ]
    assert data.ops[2]["attrs"] == {"k": 2}
    assert [s["role"] for s in data.saved if s["op"] == "n2"] == ["memory"]
    roles = {
        t["name"]: t["role"] for t in data.tensors if t["name"] and not t.get("name_from_code")
    }
    assert roles == {"<script>alert(1)</script>": "input", '"a"->b': "constant"}
    json.dumps(data.to_dict())


def test_released_saved_values_keep_their_metadata():
    x = tv.tensor([1.0, 2.0])
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.sum(tv.exp(x))
    tape.gradient(y, x)
    saved = extract(tape).saved
    assert saved and all(s["released"] and s["bytes"] == 8 for s in saved)


def test_details_for_each_kind_of_node():
    tape, x, *_ = reuse_tape()
    data = extract(tape)
    op = node_details(tape, data, "n1")
    assert op["rows"][:2] == [["kernel", "Tanh"], ["backend", "numpy"]]
    assert ["scope", "blk"] in op["rows"]
    assert any(r[0] == "source" and "graph_cases.py" in r[1] for r in op["rows"])
    titles = [s["title"] for s in op["sections"]]
    assert "saved output 0 (8 B)" in titles and "dy (output 0)" in titles
    t = node_details(tape, data, f"t{x.id}")
    assert ["gradient", "sum of 2 shares (tensor reused)"] in t["rows"]
    value = t["sections"][0]
    assert ["min", "1"] in value["rows"] and sum(value["histogram"]["counts"]) == 2
    saved = node_details(tape, data, "s0")
    assert saved["kind"] == "saved" and len(saved["sections"]) == 2
    grad = node_details(tape, data, data.grad_tensors[0]["id"])
    assert grad["kind"] == "gradient"
    assert node_details(tape, data, "c7")["kind"] == "unknown"


def test_extract_rejects_non_tapes():
    with pytest.raises(TypeError, match="expected a Tape, got list"):
        extract([])


def _texts(svg: str) -> list[str]:
    import html
    import re

    return [html.unescape(m) for m in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_a_fused_kernel_shows_the_op_the_user_called_and_its_fusion_on_details():
    """A dense layer runs one ``_FusedMatMul``: drawn ``dense → relu`` with ``fused MatMul
    A·B + bias → relu`` under it and in its details; the gradient ops it runs (a matmul
    ``dy·Bᵀ`` in the same kernel) are ``∂ MatMul A·Bᵀ``, not ``∂ _FusedMatMul``; an unnamed
    tensor's details are titled by its producer, not its id (01 showed ``t122274``)."""
    import re

    x = tv.tensor(np.linspace(-1, 1, 6).reshape(2, 3), name="x")
    layer = tv.nn.Dense(2, "relu")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        loss = tv.sum(layer(x) * 2.0)
    tape.gradient(loss, [x, *layer.parameters()])
    data = extract(tape)
    dense = next(op for op in data.ops if op["kernel"] == "_FusedMatMul")
    assert dense["label"] == "dense → relu" and dense["fusion"] == "MatMul A·B + bias → relu"
    texts = _texts(tv.show_graph(tape, backward="both").to_svg())
    assert "dense → relu" in texts and "fused MatMul A·B + bias → relu" in texts, texts
    assert not [s for s in texts if "_Fused" in s or re.search(r"\bt\d+\b", s)], texts
    grads = [s for s in texts if s.startswith("\u2202 MatMul")]
    assert sorted(grads) == ["\u2202 MatMul A·Bᵀ", "\u2202 MatMul Aᵀ·B"], texts
    rows = dict(node_details(tape, data, dense["id"])["rows"])
    assert rows["fused"] == "MatMul A·B + bias → relu in one kernel (_FusedMatMul)"
    out = next(t for t in data.tensors if t["producer"] == dense["id"])
    det = node_details(tape, data, out["id"])
    assert det["title"] == "dense → relu out" and out["id"] not in det["title"], det["title"]
    g = next(g for g in data.grad_tensors if g["of"] == out["id"])
    assert node_details(tape, data, g["id"])["title"] == "\u2202 dense → relu out"
