"""Batched replay: run a tape's recorded kernels once on a stack of perturbed inputs.

A numerical Jacobian needs ``f(x ± eps e_k)`` for every element ``k``. Instead of ``2n``
Python calls, ``replay`` re-runs the recorded kernels on raw arrays that carry a leading batch
axis. Each kernel family has a batching rule (elementwise kernels run as they are, broadcasting
kernels align ranks, reductions and shape kernels shift their axes); a kernel without a rule
runs once per batch row on raw arrays. The caller checks the result against direct calls of
the function (a replay cannot see value-dependent Python control flow or numpy escapes).
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import kernel_names as K
from ..engine import no_grad
from ..registry import _KERNELS
from ..tensor import Tensor

__all__ = ["Unbatchable", "replay"]

_UNARY = {
    K.NEG, K.ABS, K.SIGN, K.EXP, K.LOG, K.LOG1P, K.SQRT, K.RSQRT, K.SQUARE, K.RECIPROCAL,
    K.SIN, K.COS, K.TAN, K.TANH, K.SIGMOID, K.RELU, K.LEAKY_RELU, K.ELU, K.SELU, K.SOFTPLUS,
    K.GELU, K.ERF, K.CLIP, K.CAST, K.IDENTITY, K.STOP_GRADIENT,
}  # fmt: skip
_BROADCAST = {
    K.ADD, K.SUB, K.MUL, K.DIV, K.POW, K.MAXIMUM, K.MINIMUM, K.GREATER, K.GREATER_EQUAL,
    K.LESS, K.LESS_EQUAL, K.EQUAL, K.NOT_EQUAL, K.SELECT, K.MATMUL,
    K.TANH_GRAD, K.SIGMOID_GRAD, K.RELU_GRAD, K.SQRT_GRAD, K.RSQRT_GRAD, K.SIN_GRAD, K.COS_GRAD,
}  # fmt: skip
_REDUCE = {K.SUM, K.MAX, K.MIN, K.PROD}
_NHWC = {K.CONV2D, K.MAX_POOL, K.AVG_POOL}


class Unbatchable(Exception):
    """The recorded computation cannot be replayed (a node without a kernel or forward)."""


def replay(nodes, batched: dict, values: dict | None = None, size: int = 0) -> dict:
    """Re-run ``nodes`` with some tensors replaced by batches.

    Args:
        nodes: recorded ``Node`` objects in execution order.
        batched: ``{tensor id: array}``, each array with a leading batch axis of ``size``.
        values: ``{tensor id: array}`` overriding unbatched recorded values (e.g. float64).
        size: the batch size.

    Returns:
        ``{tensor id: batched array}`` for every tensor that depends on a batched one.
    """
    env = dict(batched)
    values = values or {}
    with _blas_limit(sum(a.size for a in batched.values())):
        _replay_nodes(nodes, env, values, size)
    return env


_CONTROLLER: list = []


def _blas_limit(elements: int):
    """One BLAS thread for small batches: on a busy machine, waking BLAS threads for a
    0.1 ms product can cost tens of ms (threadpoolctl is optional)."""
    if elements > 1_000_000:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController

            libs = ThreadpoolController().select(user_api="blas").lib_controllers
            _CONTROLLER.append(list(libs) or None)
        except Exception:  # not installed, or no BLAS found: leave threads alone
            _CONTROLLER.append(None)
    if _CONTROLLER[0] is None:
        return contextlib.nullcontext()
    return _OneBlasThread(_CONTROLLER[0])


class _OneBlasThread:
    """Every BLAS library at one thread inside the block, restored after (threadpoolctl's
    ``limit()`` re-reads every library's state each time: 10x slower for small replays)."""

    def __init__(self, libs):
        self.libs, self.before = libs, ()

    def __enter__(self):
        self.before = [(lib, lib.num_threads) for lib in self.libs]
        for lib, n in self.before:
            if n != 1:
                lib.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        for lib, n in self.before:
            if n != 1:
                lib.set_num_threads(n)
        return False


def _replay_nodes(nodes, env, values, size) -> None:
    for node in nodes:
        if not any(t.id in env for t in node.inputs.values()):
            continue
        ins = {}
        for k, t in node.inputs.items():
            if t.id in env:
                ins[k] = (env[t.id], True)
            else:
                ins[k] = (values.get(t.id, t._data), False)
        outs = _run(node, ins, size)
        for o, arr in zip(node.outputs, outs):
            env[o.id] = arr


def _run(node, ins, size) -> tuple:
    config = _KERNELS.get((node.kernel, node.backend))
    if config is None or node.style not in ("builtin", "override", "gradient"):
        return _custom(node, ins, size)
    fn, attrs, name = config.fn, node.attrs, node.kernel
    try:
        if name in _UNARY or name in (K.SOFTMAX, K.LOG_SOFTMAX) or name in _REDUCE:
            return _as_tuple(fn({"x": ins["x"][0]}, _shift_attrs(name, attrs, ins["x"][0])))
        if name == K.MATMUL:
            return (_matmul(fn, ins, attrs),)
        if name in _BROADCAST:
            return _as_tuple(fn(_align(ins), attrs))
        rule = _SHAPE_RULES.get(name)
        if rule is not None:
            return rule(fn, ins, attrs, size)
        if name in _NHWC and not ins.get("filter", (None, False))[1]:
            return _nhwc(fn, ins, attrs, size)
    except (ValueError, IndexError, TypeError):
        pass  # a rule did not fit these shapes: the row loop below is always right
    return _loop(lambda arrays: _as_tuple(fn(arrays, attrs)), ins, size)


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _shift_attrs(name, attrs, x):
    a = dict(attrs)
    if name in _REDUCE:
        axis = a.get("axis")
        a["axis"] = tuple(range(1, x.ndim)) if axis is None else tuple(i + 1 for i in axis)
    elif name in (K.SOFTMAX, K.LOG_SOFTMAX):
        a["axis"] = a["axis"] + 1
    return a


def _align(ins) -> dict:
    """Give batched operands rank 1 + (the largest unbatched rank) so numpy broadcasting
    keeps the batch axis first."""
    rank = max(a.ndim - (1 if b else 0) for a, b in ins.values())
    out = {}
    for k, (a, b) in ins.items():
        if b and a.ndim - 1 < rank:
            a = a.reshape((a.shape[0],) + (1,) * (rank - a.ndim + 1) + a.shape[1:])
        out[k] = a
    return out


def _matmul(fn, ins, attrs):
    """One GEMM instead of a stack of small ones when a 2-D operand is unbatched."""
    (a, ba), (b, bb) = ins["a"], ins["b"]
    if ba and not bb and b.ndim == 2:
        return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + (b.shape[-1],))
    if bb and not ba and a.ndim == 2 and b.ndim == 2:  # matrix @ a batch of vectors
        return b @ a.T
    if (ba and not bb and b.ndim == 1) or (bb and not ba and a.ndim == 1):
        return a @ b  # numpy broadcasts the batch of matrices against the vector
    if a.ndim - ba == 1 or b.ndim - bb == 1:
        raise ValueError("a batched vector operand without a rule: loop")
    if bb and not ba and a.ndim == 2 and b.ndim == 3:
        size, k, m = b.shape
        out = a @ np.moveaxis(b, 0, 1).reshape(k, size * m)
        return np.moveaxis(out.reshape(a.shape[0], size, m), 1, 0)
    return fn(_align(ins), attrs)


def _reshape(fn, ins, attrs, size):
    return (fn({"x": ins["x"][0]}, {**attrs, "shape": (size,) + tuple(attrs["shape"])}),)


def _transpose(fn, ins, attrs, size):
    perm = (0,) + tuple(p + 1 for p in attrs["perm"])
    return (fn({"x": ins["x"][0]}, {**attrs, "perm": perm}),)


def _broadcast_to(fn, ins, attrs, size):
    x, shape = ins["x"][0], tuple(attrs["shape"])
    x = x.reshape((size,) + (1,) * (len(shape) - x.ndim + 1) + x.shape[1:])
    return (fn({"x": x}, {**attrs, "shape": (size,) + shape}),)


def _concat(fn, ins, attrs, size):
    arrays = {k: a if b else np.broadcast_to(a, (size,) + a.shape) for k, (a, b) in ins.items()}
    return (fn(arrays, {**attrs, "axis": attrs["axis"] + 1}),)


def _split(fn, ins, attrs, size):
    return _as_tuple(fn({"x": ins["x"][0]}, {**attrs, "axis": attrs["axis"] + 1}))


def _slice(fn, ins, attrs, size):
    if attrs.get("advanced"):
        raise ValueError("advanced indexing: loop")
    key = (slice(None),) + tuple(attrs["key"])
    return (fn({"x": ins["x"][0]}, {**attrs, "key": key}),)


def _pad(fn, ins, attrs, size):
    paddings = ((0, 0),) + tuple(tuple(p) for p in attrs["paddings"])
    return (fn({"x": ins["x"][0]}, {**attrs, "paddings": paddings}),)


def _tile(fn, ins, attrs, size):
    x = ins["x"][0]
    if len(attrs["reps"]) != x.ndim - 1:
        raise ValueError("tile reps differ from the rank: loop")
    return (fn({"x": x}, {**attrs, "reps": (1,) + tuple(attrs["reps"])}),)


def _fused_matmul(fn, ins, attrs, size):
    """Only ``a`` batched (not transposed): its rows stack into one GEMM, as a dense layer."""
    a, batched = ins["a"]
    if attrs["transpose_a"] or not batched or any(b for k, (_, b) in ins.items() if k != "a"):
        raise ValueError("fused matmul with a batched weight: loop")
    arrays = {k: v for k, (v, _) in ins.items()}
    arrays["a"] = a.reshape(-1, a.shape[-1])
    out = fn(arrays, attrs)
    return (out.reshape((size, a.shape[1]) + out.shape[1:]),)


_SHAPE_RULES = {
    K.FUSED_MATMUL: _fused_matmul,
    K.RESHAPE: _reshape,
    K.TRANSPOSE: _transpose,
    K.BROADCAST_TO: _broadcast_to,
    K.CONCAT: _concat,
    K.SPLIT: _split,
    K.SLICE: _slice,
    K.PAD: _pad,
    K.TILE: _tile,
}


def _nhwc(fn, ins, attrs, size):
    """Images: fold the batch axis into N, run once, unfold."""
    x = ins["x"][0]
    arrays = {k: a for k, (a, b) in ins.items()}
    arrays["x"] = x.reshape((-1,) + x.shape[2:])
    out = fn(arrays, attrs)
    return (out.reshape((size, x.shape[1]) + out.shape[1:]),)


def _loop(run, ins, size) -> tuple:
    rows = []
    for r in range(size):
        rows.append(run({k: (a[r] if b else a) for k, (a, b) in ins.items()}))
    return tuple(np.stack([np.asarray(row[i]) for row in rows]) for i in range(len(rows[0])))


def _custom(node, ins, size):
    """A node made by ``record_node``: replayable when ``node.info["forward"]`` re-runs it."""
    forward = node.info.get("forward") if isinstance(node.info, dict) else None
    if forward is None:
        raise Unbatchable(
            f"node {node.id} ({node.label}) has no kernel and no node.info['forward']"
        )
    names = list(node.inputs)

    def run(arrays):
        with no_grad():
            out = forward(*[Tensor(np.asarray(arrays[k])) for k in names])
        return tuple(o.numpy() if isinstance(o, Tensor) else np.asarray(o) for o in _as_tuple(out))

    return _loop(run, ins, size)
