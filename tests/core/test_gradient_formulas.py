"""The LaTeX formulas of the built-in primitives (the ``formula`` of their definitions,
core/primitives/<family>.py), as registered with their gradients."""

from __future__ import annotations

import warnings

import numpy as np

import tapeviz.core as core
from tapeviz.core.primitives import ROWS, fill

FORMULAS = {d.name: dict(d.formula) for d in ROWS if d.formula}

_X = core.tensor(np.array([0.5, 0.7]))
_OPS = {  # kernel -> a call that records it, to read the kernel's input names
    "Neg": lambda: -_X, "Abs": lambda: core.abs(_X), "Exp": lambda: core.exp(_X),
    "Log": lambda: core.log(_X), "Sqrt": lambda: core.sqrt(_X), "Square": lambda: core.square(_X),
    "Sin": lambda: core.sin(_X), "Cos": lambda: core.cos(_X), "Tanh": lambda: core.tanh(_X),
    "Sigmoid": lambda: core.sigmoid(_X), "Relu": lambda: core.relu(_X),
    "Add": lambda: _X + _X, "Sub": lambda: _X - _X, "Mul": lambda: _X * _X,
    "RealDiv": lambda: _X / _X, "Pow": lambda: _X**_X, "Sum": lambda: core.sum(_X),
    "BatchMatMul": lambda: core.matmul(_X[None], _X[:, None]),
}  # fmt: skip


def test_every_formula_names_inputs_the_kernel_has():
    seen = set()
    for kernel, make in _OPS.items():
        with core.Tape() as tape:
            tape.watch(_X)
            make()
        node = next(n for n in tape.nodes if n.kernel == kernel)
        assert set(FORMULAS[kernel]) <= set(node.inputs), (kernel, list(node.inputs))
        assert dict(core.get_gradient(kernel).formula) == FORMULAS[kernel]
        seen.add(kernel)
    for kernel in FORMULAS:
        assert core.get_gradient(kernel).formula, f"{kernel}: the formula was not registered"


def test_register_gradient_keeps_a_users_formula():
    old = core.get_gradient("Tanh")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = core.register_gradient(
            "Tanh", old.grad_fn, (), (0,), formula={"x": r"\operatorname{sech}^2 {x}"}
        )
    try:
        assert cfg.formula == (("x", r"\operatorname{sech}^2 {x}"),)
        assert fill(dict(cfg.formula)["x"], {"x": "z"}) == r"\operatorname{sech}^2 z"
    finally:
        core.primitives.register()  # the built-ins back, formulas included
    assert core.get_gradient("Tanh").formula == (("x", "1 - {y}^2"),)
