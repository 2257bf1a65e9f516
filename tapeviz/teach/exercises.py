"""The exercises of the notebooks and their reference answers, computed by the engine.

Each reference runs the engine (a tape and ``tape.gradient``) on the exercise's data when
the check runs; no answer is stored as a number here or in the notebooks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import tapeviz.core as core


@dataclass(frozen=True)
class Exercise:
    """One exercise: its name, how to compute the reference, what to say when right."""

    name: str
    reference: Callable[..., object]
    praise: str = ""


def _micrograd_grads() -> dict:
    """micrograd's first lecture expression: L = (a*b + c) * f, every gradient."""
    a, b, c, f = (core.tensor(v, dtype="float64") for v in (2.0, -3.0, 10.0, -2.0))
    with core.Tape() as tape:
        tape.watch([a, b, c, f])
        e = a * b
        d = e + c
        L = d * f
    gs = tape.gradient(L, [a, b, c, f, e, d])
    return {k: g.item() for k, g in zip("abcfed", gs)}


def _micrograd(*keys: str) -> Callable[[], dict]:
    return lambda: {f"{k}_grad": _micrograd_grads()[k] for k in keys}


def _reused() -> dict:
    """micrograd's `b = a + a` at a = 3: the gradient of a adds both edges."""
    a = core.tensor(3.0, dtype="float64")
    with core.Tape() as tape:
        tape.watch(a)
        b = a + a
    return {"a_grad": tape.gradient(b, a).item()}


def _neuron() -> dict:
    """micrograd's neuron: o = tanh(x1 w1 + x2 w2 + b), b chosen so that o = 1/√2."""
    values = (2.0, 0.0, -3.0, 1.0, 6.8813735870195432)
    x1, x2, w1, w2, b = (core.tensor(v, dtype="float64") for v in values)
    with core.Tape() as tape:
        tape.watch([x1, x2, w1, w2, b])
        n = x1 * w1 + x2 * w2 + b
        o = core.tanh(n)
    gs = tape.gradient(o, [n, x1, w1, x2, w2])
    return {f"{k}_grad": g.item() for k, g in zip(("n", "x1", "w1", "x2", "w2"), gs)}


def _sigmoid_slope() -> float:
    return core.grad(core.sigmoid)(core.tensor(0.0, dtype="float64")).item()


def _sum_mv(M) -> list:
    v = core.tensor(np.ones(np.shape(M)[1]))
    return core.grad(lambda v: core.sum(core.tensor(M) @ v))(v).numpy().tolist()


def _square_shares() -> tuple:
    """y = x * x at x = 3: each input edge's share (from the backward step), then the total."""
    x = core.tensor(3.0, dtype="float64")
    with core.Tape() as tape:
        tape.watch(x)
        y = x * x
    total = tape.gradient(y, x).item()
    (step,) = tape.backward_steps
    return (step.grads["a"].item(), step.grads["b"].item(), total)


def _two_layer(X, Y, W1, B1, W2) -> dict:
    """h = tanh(z), z = X W1 + b1, ŷ = h W2, L = mean((ŷ - Y)²): ∂L/∂z and ∂L/∂W1."""
    w1 = core.tensor(np.asarray(W1, np.float64))
    with core.Tape() as tape:
        tape.watch(w1)
        z = core.tensor(np.asarray(X, np.float64)) @ w1 + core.tensor(np.asarray(B1, np.float64))
        h = core.tanh(z)
        L = core.mean(core.square(h @ core.tensor(np.asarray(W2, np.float64)) - core.tensor(Y)))
    dz, dw1 = tape.gradient(L, [z, w1])
    return {"dz": dz.numpy(), "dW1": dw1.numpy()}


EXERCISES = {
    e.name: e
    for e in (
        Exercise("00.L=d*f", _micrograd("d", "f"), "a product sends each input the other one"),
        Exercise("00.d=e+c", _micrograd("e", "c"), "a sum passes dL/dd through unchanged"),
        Exercise("00.e=a*b", _micrograd("a", "b"), "the chain rule: dL/de times de/da"),
        Exercise("00.b=a+a", _reused, "a used twice gets both edges' gradients, added"),
        Exercise("00.neuron", _neuron, "tanh's local derivative 1 − o², then the products"),
        Exercise("02.sigmoid-slope", _sigmoid_slope, "σ'(0) = σ(0)(1 − σ(0))"),
        Exercise("02.sum(Mv)", _sum_mv, "v_j meets column j of M once per row"),
        Exercise("02.x*x", _square_shares, "each edge sends dy times the other factor"),
        Exercise("02.two-layer", _two_layer, "that is the backward pass of a two-layer net"),
    )
}
