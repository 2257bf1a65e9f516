"""Names for the lesson graph: the op symbols (+, ×, tanh), the user's variable names found
in a caller's frame, and what to call a tensor nothing names (the expression that made it,
``x1w1 + x2w2``, or a leaf's value or slot)."""

from __future__ import annotations

import sys

from tapeviz.core.tensors.tensor import Tensor

__all__ = ["OP_SYMBOLS", "caller_names", "derived_name", "leaf_name", "tensor_names"]

OP_SYMBOLS = {
    "Add": "+", "Sub": "−", "Mul": "×", "RealDiv": "÷", "Neg": "−", "Pow": "^", "Square": "²",
    "Tanh": "tanh", "Exp": "exp", "Log": "log", "Relu": "ReLU", "Sigmoid": "σ", "Abs": "|·|",
    "Sqrt": "√", "Sum": "Σ", "BatchMatMul": "@", "Softmax": "softmax",
    "LogSoftmax": "log softmax", "_FusedMatMul": "dense", "SoftmaxCrossEntropyWithLogits": "softmax CE",
}  # fmt: skip


def caller_names(depth: int = 2) -> dict:
    """``{id(tensor): variable name}`` for the tensors bound to names in a caller's frame."""
    frame = sys._getframe(depth)
    names = {}
    for scope in (frame.f_globals, frame.f_locals):
        for key, value in scope.items():
            if isinstance(value, Tensor) and not key.startswith("_"):
                names[id(value)] = key
    return names


_PREC = {"+": 1, "−": 1, "×": 2, "÷": 2, "@": 2, "^": 3}
_INFIX = set(_PREC)


def _paren(text: str, prec: int, right: bool) -> str:
    """``text`` as an operand of an operator binding ``prec``: in parentheses when its own
    loosest operator (outside parentheses) binds less, or as much on the right side
    (``(a × b + c) × f``, ``a − (b − c)``)."""
    depth, loosest = 0, None
    for word in text.split(" "):
        depth += word.count("(") - word.count(")")
        if depth == 0 and word in _PREC:
            loosest = min(loosest or 9, _PREC[word])
    if loosest is not None and (loosest < prec or (right and loosest == prec)):
        return f"({text})"
    return text


_NAME_CHARS = 24  # a longer expression is called "<op> out"


def derived_name(node, names: dict) -> str:
    """What to call an unnamed intermediate that ``node`` made, not ``t315``: the expression
    it computes from named inputs when short (``x1w1 + x2w2``, ``tanh(n)``), else
    ``<op> out`` (``Add out``)."""
    sym = OP_SYMBOLS.get(node.kernel)
    args = [names.get(t.id) for t in node.inputs.values()]
    if sym and all(a and not a.endswith((" out", " in")) for a in args):
        text = None
        if sym in _INFIX and len(args) == 2:
            a, b = (_paren(x, _PREC[sym], right) for x, right in zip(args, (False, True)))
            text = f"{a} {sym} {b}"
        elif len(args) == 1 and sym[0].isalpha():
            text = f"{sym}({args[0]})"
        if text and len(text) <= _NAME_CHARS:
            return text
    return f"{node.label} out"


def leaf_name(node, slot: str, watched=None) -> str:
    """An unnamed leaf that ``node`` reads as ``slot``: a one-element constant by its value
    (``2``), else the slot when it says what the value is (``labels``), else ``<op> input``;
    an unnamed watched input or variable (``watched``: the tape's) keeps ``t<id>``."""
    t = node.inputs[slot]
    d = t.peek()
    if watched is not None and (t.id in watched or hasattr(t, "trainable")):
        return f"t{t.id}"  # an input or variable the user left unnamed: its id, not a value
    if d is not None and d.size == 1 and d.dtype.kind in "biuf":
        return f"{d.item():g}"
    return slot if len(slot) >= 3 and slot.isidentifier() else f"{node.label} input"


def tensor_names(tape, frame_names: dict, given: dict | None = None) -> dict:
    """``{tensor.id: name}`` for every tensor on ``tape``: its ``name``, else the variable it
    is bound to (``frame_names``: ``{id(tensor object): name}``), else the expression that
    made it or ``<op> out`` (``derived_name``); a leaf nothing names, by what reads it
    (``leaf_name``). ``given``: ``{tensor.id: name}`` that win over all of these."""
    out = dict(given or {})
    for node in tape.nodes:
        for slot, t in node.inputs.items():
            out.setdefault(
                t.id, t.name or frame_names.get(id(t)) or leaf_name(node, slot, tape.watched)
            )
        for t in node.outputs:
            if t.id not in out:
                out[t.id] = t.name or frame_names.get(id(t)) or derived_name(node, out)
    return out
