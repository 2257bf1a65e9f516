"""The instructor's side of the notebooks' exercises: compute every answer with the engine
and write their salted hashes to ``tapeviz/teach/sealed.json`` (no answer is stored).

Run after changing an exercise: ``python assignments/source/seal_exercises.py``.
``tests/tapeviz/test_teach.py`` checks that each reference here passes its check.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import tapeviz.core as core
from tapeviz.teach.seal import SEALED, data_print, seal


def micrograd_grads() -> dict:
    """micrograd's first lecture expression: L = (a*b + c) * f, every gradient."""
    a, b, c, f = (core.tensor(v, dtype="float64") for v in (2.0, -3.0, 10.0, -2.0))
    with core.Tape() as tape:
        tape.watch([a, b, c, f])
        e = a * b
        d = e + c
        L = d * f
    gs = tape.gradient(L, [a, b, c, f, e, d])
    return {f"{k}_grad": g.item() for k, g in zip("abcfed", gs)}


def neuron_grads() -> dict:
    """micrograd's neuron: o = tanh(x1 w1 + x2 w2 + b), b chosen so that o = 1/√2."""
    values = (2.0, 0.0, -3.0, 1.0, 6.8813735870195432)
    x1, x2, w1, w2, b = (core.tensor(v, dtype="float64") for v in values)
    with core.Tape() as tape:
        tape.watch([x1, x2, w1, w2, b])
        n = x1 * w1 + x2 * w2 + b
        o = core.tanh(n)
    gs = tape.gradient(o, [n, x1, w1, x2, w2])
    return {f"{k}_grad": g.item() for k, g in zip(("n", "x1", "w1", "x2", "w2"), gs)}


def two_layer_data() -> dict:
    """Notebook 02's data (the same seed and draws as its cell)."""
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    W1, B1, W2 = rng.standard_normal((3, 5)) * 0.5, np.zeros(5), rng.standard_normal((5, 2)) * 0.5
    return dict(X=X, Y=Y, W1=W1, B1=B1, W2=W2)


def two_layer(X, Y, W1, B1, W2, tanh_of_z: bool = False) -> dict:
    """∂L/∂z and ∂L/∂W1 for L = mean((tanh(X W1 + b1) W2 - Y)²), by the engine; with
    ``tanh_of_z`` the misconception 1 - z² for tanh's local derivative."""
    w1 = core.tensor(W1)
    with core.Tape() as tape:
        tape.watch(w1)
        z = core.tensor(X) @ w1 + core.tensor(B1)
        h = core.tanh(z)
        L = core.mean(core.square(h @ core.tensor(W2) - core.tensor(Y)))
    dz, dw1 = tape.gradient(L, [z, w1])
    if tanh_of_z:
        dh = dz.numpy() / (1 - h.numpy() ** 2)
        dz = dh * (1 - z.numpy() ** 2)
        return {"dz": dz, "dW1": X.T @ dz}
    return {"dz": dz.numpy(), "dW1": dw1.numpy()}


def exercises() -> dict:
    """``{name: (answers, praise, {key: [(wrong value, message)]}, data or None)}``."""
    g, n = micrograd_grads(), neuron_grads()
    M = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    data = two_layer_data()
    sigmoid_slope = core.grad(core.sigmoid)(core.tensor(0.0, dtype="float64")).item()
    sum_mv = core.grad(lambda v: core.sum(core.tensor(M) @ v))(core.tensor(np.ones(2)))
    local_only = "that is the local derivative alone: multiply by the gradient that arrived"
    return {
        "00.L=d*f": ({k: g[k] for k in ("d_grad", "f_grad")},
                     "a product sends each input the other one",
                     {"d_grad": [(4.0, "that is d itself: ∂(d·f)/∂d is the other factor")],
                      "f_grad": [(-2.0, "that is f itself: ∂(d·f)/∂f is the other factor")]},
                     None),
        "00.d=e+c": ({k: g[k] for k in ("e_grad", "c_grad")},
                     "a sum passes dL/dd through unchanged",
                     {"e_grad": [(1.0, local_only)], "c_grad": [(1.0, local_only)]}, None),
        "00.e=a*b": ({k: g[k] for k in ("a_grad", "b_grad")},
                     "the chain rule: dL/de times de/da",
                     {"a_grad": [(-3.0, local_only)], "b_grad": [(2.0, local_only)]}, None),
        "00.b=a+a": ({"a_grad": 2.0}, "a used twice gets both edges' gradients, added",
                     {"a_grad": [(1.0, "that is one edge's share: a reaches b along two "
                                       "edges, and the shares add (+=, not =)")]}, None),
        "00.neuron": (n, "tanh's local derivative 1 − o², then the products",
                      {"n_grad": [(1 - 2**-0.5, "tanh's local derivative is 1 − o², not 1 − o")]},
                      None),
        "02.sigmoid-slope": ({"answer": sigmoid_slope}, "σ'(0) = σ(0)(1 − σ(0))", {}, None),
        "02.sum(Mv)": ({"answer": sum_mv.numpy()}, "v_j meets column j of M once per row",
                       {"answer": [(M.sum(axis=1)[:2], "those are row sums: v_j multiplies "
                                                      "column j")]}, dict(M=M)),
        "02.x*x": ({"answer": (3.0, 3.0, 6.0)}, "each edge sends dy times the other factor",
                   {"answer": [((3.0, 3.0, 3.0), "the total is the sum of both edges' shares")]},
                   None),
        "02.two-layer": (two_layer(**data), "that is the backward pass of a two-layer net",
                         {"dz": [(two_layer(**data, tanh_of_z=True)["dz"],
                                  "tanh's local derivative is written with its output h: "
                                  "1 − h², not 1 − z²")]}, data),
    }  # fmt: skip


def sealed_table() -> dict:
    out = {}
    for name, (answers, praise, wrong, data) in exercises().items():
        entry = {"praise": praise, "answers": {k: seal(name, k, v) for k, v in answers.items()}}
        entry["misconceptions"] = {
            key: [[key, seal(name, f"{key}!{i}", v), msg] for i, (v, msg) in enumerate(items)]
            for key, items in wrong.items()
        }
        if data is not None:
            entry["data"] = data_print(data)
        out[name] = entry
    return out


if __name__ == "__main__":
    Path(SEALED).write_text(json.dumps(sealed_table(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SEALED}")
