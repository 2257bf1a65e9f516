"""Your micrograd-style ``Value`` against tapeviz's engine, node by node, graphs side by side.

``compare_values(fn, Value, a=2.0, b=-3.0)`` runs ``fn`` twice — on your ``Value`` objects
(then your ``backward()``) and on tapeviz tensors under a tape (then ``tape.gradient``) —
and matches the values by the names ``fn`` gives them (``e = a * b`` is "e" in both runs).
The table says, per name, whether the data and the gradient agree, and names the pattern of
a mismatch; the two lesson graphs are drawn the same way, yours on the left.
"""

from __future__ import annotations

import sys

import numpy as np

import tapeviz.core as core

from ..graph.lesson import LessonGraph, lesson_graph
from ..present.palette import FAIL, PASS
from ..present.text import html_text
from .patterns import describe

__all__ = ["Comparison", "compare_values"]

_NEEDS = ("data", "grad", "_prev", "_op")


def _run_capturing(fn, args: dict):
    """``fn(**args)`` and the local variables it held when it returned."""
    captured: dict = {}
    code = fn.__code__

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is code:
            captured.update(frame.f_locals)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        out = fn(**args)
    finally:
        sys.setprofile(previous)
    return out, captured


def _walk(root, limit: int = 500) -> list:
    """Every Value reachable from ``root`` through ``_prev``, children first."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if len(seen) > limit:
            raise ValueError(f"compare_values: more than {limit} Values; compare a smaller fn")
        stack.append((v, True))
        stack.extend((c, False) for c in v._prev)
    return order


def _value_lesson(root, names: dict) -> LessonGraph:
    """Your Value graph as lesson data (``name | data | grad`` records, op circles)."""
    tensors, ops = {}, []
    for v in _walk(root):
        name = names.get(id(v)) or getattr(v, "label", "") or ""
        tensors[id(v)] = {"name": name, "value": np.asarray(v.data), "grad": np.asarray(v.grad)}
        if v._prev:
            ops.append({"id": id(v), "symbol": str(v._op) or "?", "kernel": str(v._op),
                        "inputs": [id(c) for c in v._prev], "outputs": [id(v)]})  # fmt: skip
    return LessonGraph({"tensors": tensors, "ops": ops})


class Comparison:
    """The result of ``compare_values``.

    Attributes:
        rows: ``[(name, your data, engine data, your grad, engine grad, verdict)]``,
            verdict "agrees" or the pattern of the mismatch.
        yours, engine: the two ``LessonGraph`` pictures.
        agrees: every named value's data and gradient agree.
    """

    def __init__(self, rows, yours, engine):
        self.rows, self.yours, self.engine = rows, yours, engine
        self.agrees = all(r[-1] == "agrees" for r in rows)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in ("", "your data", "engine", "your grad",
                                                  "engine", ""))  # fmt: skip
        body = ""
        for name, vd, ed, vg, eg, verdict in self.rows:
            colour = PASS if verdict == "agrees" else FAIL
            nums = "".join(f"<td>{_num(v)}</td>" for v in (vd, ed, vg, eg))
            body += (f"<tr><td><b>{html_text(name)}</b></td>{nums}"
                     f"<td style='color:{colour}'>{html_text(verdict)}</td></tr>")  # fmt: skip
        graphs = "".join(
            f"<div style='flex:1;min-width:280px'><b>{title}</b>{g.to_svg()}</div>"
            for title, g in (("your Value", self.yours), ("tapeviz's engine", self.engine))
        )
        return (f"<table><tr>{head}</tr>{body}</table>"
                f"<div style='display:flex;gap:16px;flex-wrap:wrap'>{graphs}</div>")  # fmt: skip

    def __repr__(self) -> str:
        return "\n".join(f"{r[0]}: {r[-1]}" for r in self.rows)


def _num(v) -> str:
    return "—" if v is None else f"{float(v):.4g}"


def compare_values(fn, Value, **inputs) -> Comparison:
    """Compare your ``Value`` with tapeviz's engine on ``fn``, node by node.

    Args:
        fn: a function of scalars built from ``+ - * / **`` and methods both sides have
            (``tanh``, ``exp``), e.g. ``def f(a, b): e = a * b; return e.tanh()``. Its
            local variable names name the nodes.
        Value: your class (micrograd's attribute names: ``data``, ``grad``, ``_prev``,
            ``_op``, and ``backward()``).
        **inputs: the inputs by name, as numbers.

    Returns:
        A ``Comparison`` (a table and the two graphs in a notebook).

    Raises:
        TypeError: ``Value`` lacks one of micrograd's attributes (the message names it).
    """
    vals = {k: Value(float(v), label=k) for k, v in inputs.items()}
    missing = [a for a in _NEEDS if not hasattr(next(iter(vals.values())), a)]
    if missing:
        raise TypeError(f"compare_values: your Value has no {', '.join(missing)} "
                        f"(micrograd's names: {', '.join(_NEEDS)})")  # fmt: skip
    root, v_locals = _run_capturing(fn, vals)
    root.backward()
    tens = {k: core.tensor(float(v), dtype="float64") for k, v in inputs.items()}
    with core.Tape() as tape:
        tape.watch(list(tens.values()))
        t_root, t_locals = _run_capturing(fn, tens)
    names = [k for k, v in t_locals.items() if isinstance(v, core.Tensor)
             and isinstance(v_locals.get(k), Value)]  # fmt: skip
    grads = tape.gradient(t_root, [t_locals[k] for k in names], unconnected_gradients="zero")
    rows = []
    for name, g in zip(names, grads):
        v, t = v_locals[name], t_locals[name]
        verdict = describe(v.data, t.item()) and "the forward value differs"
        verdict = verdict or describe(v.grad, g.item()) or "agrees"
        rows.append((name, v.data, t.item(), v.grad, g.item(), verdict))
    by_id = {id(v_locals[k]): k for k in names}
    engine_names = {t_locals[k].id: k for k in names}
    return Comparison(rows, _value_lesson(root, by_id), lesson_graph(tape, engine_names))
