"""Plain records of tensors and ops (shared by the forward and backward extraction)."""

from __future__ import annotations

import numpy as np

from tapeviz.core.tensors.tensor import Tensor

from .cells import source_record


def json_safe(v, depth: int = 0):
    """A JSON-able stand-in for an attr value (arrays and objects become short strings)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)) and depth < 3 and len(v) <= 32:
        return [json_safe(x, depth + 1) for x in v]
    if isinstance(v, dict) and depth < 3:
        return {str(k): json_safe(x, depth + 1) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return f"array(shape={v.shape}, dtype={v.dtype})"
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def tensor_value(t, limit: int):
    """The value of ``t`` as nested lists when it has at most ``limit`` elements, else None."""
    d = t.peek() if isinstance(t, Tensor) else None
    return None if d is None or d.size > limit else d.tolist()


_DTYPE_NAMES: dict = {}  # str(dtype) is slow in numpy 2; 1,000-node tapes ask it often


def dtype_name(dt) -> str:
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt)
    return name


def meta(t: Tensor) -> dict:
    d = t.peek()
    if d is None:
        return {"shape": None, "dtype": None, "bytes": 0}
    return {"shape": list(d.shape), "dtype": dtype_name(d.dtype), "bytes": int(d.nbytes)}


def nbytes(t) -> int:
    d = t.peek()
    return int(d.nbytes) if d is not None else 0


def fusion(node) -> str | None:
    """What a fused kernel does in one go (``MatMul A·B + bias → relu`` for a dense layer's
    ``_FusedMatMul``), shown on its second line and in its details; None for other ops."""
    if node.kernel != "_FusedMatMul":
        return None
    attrs = node.attrs or {}
    a = "Aᵀ" if attrs.get("transpose_a") else "A"
    b = "Bᵀ" if attrs.get("transpose_b") else "B"
    text = f"MatMul {a}·{b}" + (" + bias" if "bias" in node.inputs else "")
    act = attrs.get("activation", "linear")
    return text + (f" → {act}" if act != "linear" else "")


def display_label(node) -> str:
    """The label drawn on an op: the user's name for custom nodes, the kernel otherwise; a
    fused dense kernel is the op the user called: ``dense`` (``dense → relu``), its fusion on
    the next line and in the details; a bare fused matmul (a gradient's ``dy·Bᵀ``) is a
    ``MatMul A·Bᵀ``."""
    if node.kernel != "_FusedMatMul" or node.label != node.kernel:
        return node.label
    attrs = node.attrs or {}
    act = attrs.get("activation", "linear")
    if "bias" not in node.inputs and act == "linear":
        return fusion(node)
    return "dense" + (f" → {act}" if act != "linear" else "")


def op_record(node) -> dict:
    return {
        "id": f"n{node.id}",
        "kernel": node.kernel,
        "backend": node.backend,
        "style": node.style,
        "label": display_label(node),
        "fusion": fusion(node),
        "scope": node.scope,
        "source": source_record(node.source),
        "attrs": {str(k): json_safe(v) for k, v in (node.attrs or {}).items()},
        "inputs": {},
        "outputs": [],
        "saved": [],
        "saved_bytes": 0,
        "grad_of": f"n{node.grad_of}" if node.grad_of is not None else None,
        "once_only": node.primitive.once_only,
    }
