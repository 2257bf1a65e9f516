"""One recorded node as a gradient-check problem (``NodeProblem``): its primitive re-runs the
forward on the recorded inputs (``Primitive.evaluate``), and its VJP (``Primitive.vjp``, the
one the reverse pass calls) is the analytic side. ``audit`` runs the checks on it."""

from __future__ import annotations

import numpy as np

from ..autodiff.backward import checked_gradient
from ..tensors import recording
from ..tensors.kinds import Constant
from ..tensors.tensor import Tensor
from .batched_replay import replay

__all__ = ["NodeProblem"]


class NodeProblem:
    """One node as a check problem: its primitive re-runs the forward, its recorded
    gradient config (``node.grad``) is the analytic side. Kernel nodes are re-run in
    float64, saved values recomputed. Other nodes keep their recorded saved values (analytic
    side in the recorded dtype); their forward runs in float64 when it keeps float64."""

    def __init__(self, node):
        self.node, self.nodes, self.unconnected = node, [node], set()
        self.names = list(node.inputs)
        tensors = [node.inputs[k] for k in self.names]
        self.kernel = node.primitive.kernels.get(node.backend)
        custom = self.kernel is None
        has_dtype_attr = any(isinstance(v, (np.dtype, type)) for v in node.attrs.values())
        mem = any(s.role == "memory" for s in node.saved)
        self.exact = self.kernel is not None and not custom and not has_dtype_attr and not mem
        self.dtypes = [t.dtype for t in tensors]
        self.args = [
            t.numpy().astype(np.float64) if self.exact and t.dtype.kind == "f" else t.numpy()
            for t in tensors
        ]
        # a Python number the op made a constant (the 2 of ``v ** 2``) is never a source: its
        # gradient is not checked (it may not exist: d/db a^b = a^b log a is NaN for a < 0)
        self.diff = [
            k for k, t in enumerate(tensors) if t.dtype.kind == "f" and type(t) is not Constant
        ]
        self.num64 = self.exact or self._keeps_float64()
        if self.num64:
            self.args = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in self.args]
        outs = self._forward(self.args)
        self.out_shapes = [o.shape for o in outs]
        self.out_dtypes = [o.dtype for o in (outs if self.exact else node.outputs)]
        self.outs, self.y = outs, _flat(outs)

    def _keeps_float64(self) -> bool:
        args = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in self.args]
        try:
            outs = self._forward(args, cast=False)
        except Exception:  # the forward insists on its recorded dtype
            return False
        return all(o.dtype == np.float64 for o in outs if o.dtype.kind == "f")

    def _forward(self, args, cast=True) -> list:
        if cast and not self.num64:
            args = [np.asarray(a).astype(d) for a, d in zip(args, self.dtypes)]
        out = self.node.primitive.evaluate(self.node, dict(zip(self.names, args)))
        return [np.asarray(o) for o in out]

    def call(self, args) -> np.ndarray:
        return _flat(self._forward(args))

    def _saved(self):
        if not self.exact:
            return tuple(s.tensor for s in self.node.saved)
        saved = []
        for s in self.node.saved:
            src = self.args[self.names.index(s.name)] if s.role == "input" else self.outs[s.name]
            saved.append(Tensor(np.asarray(src)))
        return tuple(saved)

    def vjp(self, dy) -> list:
        node, pieces, start = self.node, [], 0
        for shape, dtype in zip(self.out_shapes, self.out_dtypes):
            size = int(np.prod(shape))
            pieces.append(Tensor(dy.reshape(-1)[start : start + size].reshape(shape).astype(dtype)))
            start += size
        needed = [self.names[k] for k in self.diff]
        with recording.no_grad():
            thunks = node.primitive.vjp(
                node, pieces[0] if len(pieces) == 1 else tuple(pieces), needed, self._saved()
            )
            out = []
            for k in self.diff:
                x = Tensor(np.asarray(self.args[k]).astype(self._dtype(k)))
                thunk = thunks.get(self.names[k])
                if thunk is None:
                    self.unconnected.add(len(out))
                    out.append(np.zeros(x.shape))
                    continue
                g = checked_gradient(node, self.names[k], x, thunk() if callable(thunk) else thunk)
                out.append(g.numpy().astype(np.float64))
        return out

    def _dtype(self, k):
        return np.float64 if self.exact else self.dtypes[k]

    def batched(self, k, X):
        t = self.node.inputs[self.names[self.diff[k]]]
        values = {self.node.inputs[n].id: a for n, a in zip(self.names, self.args)}
        if not self.num64:
            X = X.astype(self.dtypes[self.diff[k]])
        env = replay(self.nodes, {t.id: X}, values, size=len(X))
        outs = [env[o.id].reshape(len(X), -1) for o in self.node.outputs]
        return np.concatenate(outs, axis=1).astype(np.float64).reshape((len(X),) + self.y.shape), (
            "batched replay"
        )


def _flat(outs) -> np.ndarray:
    if len(outs) == 1:
        return np.asarray(outs[0], dtype=np.float64)
    return np.concatenate([np.asarray(o, dtype=np.float64).reshape(-1) for o in outs])
