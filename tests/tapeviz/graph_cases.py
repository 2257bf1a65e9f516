"""Tapes with known graphs, shared by the tapeviz.graph tests."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.registry.gradients import GradConfig

# the engines to parametrize a rendering test over: the system dot is optional, so its cases
# skip where it is absent (tests/conftest.py); a bare "system" would fail there
ENGINES = [pytest.param("system", marks=pytest.mark.system_dot), "wasm"]


def reuse_tape():
    """y = sum(tanh(x * w) * x): x is used twice, so its gradient shares are summed."""
    x = tv.tensor([1.0, 2.0], name="x")
    w = tv.variable([0.5, -1.0], name="w")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        with tv.name_scope("blk"):
            h = tv.tanh(x * w)
        y = tv.sum(h * x)
    grads = tape.gradient(y, [x, w])
    return tape, x, w, y, grads


def styled(x, style: str, label: str):
    """Record one custom node of ``style`` (y = 2x) with a saved memory value."""
    y = tv.tensor(x.numpy() * 2)
    config = GradConfig("Twice", lambda dy, saved, attrs: {"x": lambda: dy * 2.0})
    memory = tv.tensor(np.zeros(3, np.float32))
    prim = tv.Primitive("Twice", label=label, kind=style)
    tv.record(prim, {"x": x}, (y,), {"k": 2}, config, [("memory", "m", memory)])
    return y


def styles_tape():
    """One node of each style: builtin, override, custom_grad, DifferentiableFunction,
    CompiledLayer; plus a constant and a hostile tensor name."""
    x = tv.tensor([1.0, -2.0], name="<script>alert(1)</script>")
    c = tv.tensor([3.0, 4.0], name='"a"->b')
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        a = x * c
        with tv.gradient_override("Exp", lambda dy, saved, attrs: {"x": lambda: dy}):
            b = tv.exp(a)
        d = styled(b, "custom_grad", "my_square")
        e = styled(d, "DifferentiableFunction", "SReLU")
        f = styled(e, "CompiledLayer", "fast_tanh")
        y = tv.sum(f)
    tape.gradient(y, x)
    return tape


def scoped_tape(blocks: int = 50, ops_per_block: int = 20):
    """``blocks`` identical name scopes of ``ops_per_block`` ops (about 1,000 ops), with
    backward."""
    rng = np.random.default_rng(0)
    x = tv.tensor(rng.normal(size=(2, 4)).astype(np.float32), name="x")
    ws = [tv.variable(rng.normal(size=(4, 4)).astype(np.float32) * 0.3) for _ in range(blocks)]
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for i, w in enumerate(ws):
            with tv.name_scope(f"block{i}"):
                for _ in range(ops_per_block // 4):
                    h = tv.tanh(h @ w) * 0.5 + h
        loss = tv.sum(h)
    tape.gradient(loss, [x] + ws)
    return tape


def chain_tape(n: int = 1000):
    """An unscoped chain of ``n`` ops."""
    x = tv.tensor([0.5, -0.25], name="x")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for i in range(n - 1):
            h = tv.sin(h) if i % 2 else h * 1.01
        y = tv.sum(h)
    tape.gradient(y, x)
    return tape
