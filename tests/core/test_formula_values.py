"""Every built-in elementwise formula (the LaTeX the stepper shows, filled with the user's
numbers) equals the derivative reverse mode computes, at points inside each domain: a
wrong formula would be a wrong number on screen."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.primitives import ROWS, fill
from tapeviz.widgets.formulas import tex_to_text

FUNCS = {"cos": np.cos, "sin": np.sin, "cosh": np.cosh, "sinh": np.sinh, "ln": np.log,
         "sign": np.sign, "floor": np.floor, "sqrt": np.sqrt,
         "sigmoid": lambda v: 1 / (1 + np.exp(-v))}  # fmt: skip
TOKEN = re.compile(r"\s*(\d+\.?\d*|[A-Za-z_]+|\*\*|[-+*/()<>=\[\]])")


def to_python(text: str) -> str:
    """The plain-text formula (``tex_to_text``) as a Python expression: juxtaposition is a
    product, ``^`` a power, ``√``/``σ`` functions, ``[p]`` an Iverson bracket, and a function
    without parentheses applies to the atom after it (``cos x``)."""
    text = text.replace("√", " sqrt ").replace("σ", " sigmoid ").replace("π", " pi ")
    text = text.replace("^", "**")
    tokens, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        assert m, f"cannot read {text[pos:]!r} in {text!r}"
        tokens.append(m.group(1))
        pos = m.end()
    out, pending = [], 0  # pending: functions waiting for a bare atom
    for i, t in enumerate(tokens):
        prev = out[-1] if out else None
        ends_value = prev is not None and (prev == ")" or (_word(prev) and prev not in FUNCS))
        if ends_value and (t in "([" or _word(t)):
            out.append("*")
        out.append({"[": "(", "]": ")"}.get(t, t))
        if t in FUNCS and i + 1 < len(tokens) and tokens[i + 1] != "(":
            out.append("(")
            pending += 1
        elif pending and _word(t) and t not in FUNCS:
            out.append(")" * pending)
            pending = 0
    return " ".join(out) + ")" * pending


def _word(t: str) -> bool:
    return re.fullmatch(r"[\w.]+", t) is not None


def value(tex: str, slots: dict) -> np.ndarray:
    names = {k: f"_{k}" for k in slots}
    expr = to_python(tex_to_text(fill(tex, names)))
    scope = {f"_{k}": np.asarray(v, np.float64) for k, v in slots.items()}
    return eval(expr, {"__builtins__": {}, "e": np.e, "pi": np.pi, **FUNCS}, scope)  # noqa: S307


ELEMENTWISE = [d for d in ROWS if d.formula and not any("{dy}" in f for f in d.formula.values())]
DOMAIN = {"Acosh": (1.5, 2.5)}


@pytest.mark.parametrize("d", ELEMENTWISE, ids=lambda d: d.name)
def test_formula_equals_the_gradient(d):
    lo, hi = DOMAIN.get(d.name, (0.2, 0.8))
    rng = np.random.default_rng(0)
    names = list(d.formula) if "x" not in d.formula else ["x"]
    if set(names) <= {"a", "b"}:
        names = ["a", "b"]
    ins = {n: tv.tensor(rng.uniform(lo, hi, 5) + (0.45 if n == "b" else 0.0)) for n in names}
    with tv.Tape(persistent=True) as tape:
        for t in ins.values():
            tape.watch(t)
        y = tv.run_kernel(d.name, ins, {})
        total = tv.sum(y)
    slots = {n: t.numpy() for n, t in ins.items()} | {"y": y.numpy()}
    for n, tex in d.formula.items():
        got = tape.gradient(total, ins[n])
        want = np.broadcast_to(value(tex, slots), (5,))
        expected = np.zeros(5) if got is None else got.numpy()
        np.testing.assert_allclose(
            want, expected, rtol=1e-9, atol=1e-12, err_msg=f"{d.name} d/d{n}: {tex}"
        )


def test_the_check_fails_a_wrong_formula():
    """The evaluator reads the formulas, so a wrong one fails (cosh for sinh's derivative)."""
    x = np.array([0.3, 0.6])
    assert np.allclose(value(r"\cosh {x}", {"x": x}), np.cosh(x))
    assert not np.allclose(value(r"\sinh {x}", {"x": x}), np.cosh(x))
    assert np.allclose(value("{b} {a}^{{b} - 1}", {"a": x, "b": x + 1}), (x + 1) * x**x)
