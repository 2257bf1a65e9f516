"""What a tape records: ``Node`` (one kernel run) and ``SavedValue`` (one value kept for
backward). Plain data with forward references only: tapeviz reads them, the engine
differentiates them.
"""

from __future__ import annotations

from ..registry.kernels import BUILTIN_GRADIENTS
from ..tensors.tensor import Tensor

__all__ = ["Node", "SavedValue"]


class SavedValue:
    """One value kept for backward. ``role`` is ``"input"``, ``"output"`` or ``"memory"``.

    ``needed`` is False for a value the gradient config names but no gradient of this node
    will read (only a constant's gradient would): it is never kept (``tensor`` None,
    ``nbytes`` 0, shape and dtype known).
    """

    __slots__ = ("role", "name", "tensor", "_meta", "intermediate", "needed", "version")

    def __init__(self, role: str, name, tensor: Tensor, intermediate: bool = False):
        self.role = role
        self.name = name
        self.tensor = tensor
        self.version = tensor._version if tensor is not None else 0  # Variable.assign count
        self._meta = None
        self.intermediate = intermediate
        self.needed = True

    @classmethod
    def _unneeded(cls, role: str, name, tensor: Tensor) -> SavedValue:
        s = cls(role, name, None)
        s._meta = (tensor._data.shape, tensor._data.dtype, 0)
        s.needed = False
        return s

    @property
    def shape(self):
        return self._meta[0] if self._meta else self.tensor.shape

    @property
    def dtype(self):
        return self._meta[1] if self._meta else self.tensor.dtype

    @property
    def nbytes(self) -> int:
        return self._meta[2] if self._meta else self.tensor.nbytes

    @property
    def released(self) -> bool:
        """True once a kept value was dropped (gradient() of a non-persistent tape)."""
        return self.tensor is None and self.needed

    def release(self) -> None:
        t = self.tensor
        if t is not None:
            d = t._data
            self._meta = (d.shape, d.dtype, d.nbytes) if d is not None else (None, None, 0)
            self.tensor = None

    def __repr__(self):
        state = ", released" if self.released else "" if self.needed else ", not needed"
        return (
            f"SavedValue({self.role} {self.name!r}, shape={self.shape}, dtype={self.dtype}, "
            f"nbytes={self.nbytes}{state})"
        )


class Node:
    """One recorded kernel run. Plain data: tapeviz reads it, the engine differentiates it.

    Attributes:
        id: stable id within the tape (forward and backward nodes share the counter).
        primitive: the ``Primitive`` it ran (``core/registry/primitive.py``): kernels, VJP, flags.
        backend: backend that ran it.
        inputs: ``{name: Tensor}``; outputs: tuple of Tensors; attrs: non-tensor args.
        saved: list of ``SavedValue`` (empty on backward nodes: this tape never
            differentiates them; an outer tape recording them keeps its own).
        grad: the ``GradConfig`` in force when recorded (None: not differentiable); an
            override or a custom gradient's per-call VJP stays with its node.
        scope: name scope path ("" at top level); source: (file, line, function) or None.
        grad_of: for backward nodes, the id of the forward node whose gradient ran it.

    ``kernel``, ``label`` and ``style`` are read from the primitive.
    """

    __slots__ = (
        "id", "primitive", "backend", "inputs", "outputs", "attrs", "saved", "grad", "scope",
        "source", "grad_of",
    )  # fmt: skip

    def __init__(
        self, id, primitive, backend, inputs, outputs, attrs, saved, grad, scope="",
        source=None, grad_of=None,
    ):  # fmt: skip
        self.id = id
        self.primitive = primitive
        self.backend = backend
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.saved = saved
        self.grad = grad
        self.scope = scope
        self.source = source
        self.grad_of = grad_of

    @property
    def kernel(self) -> str:
        return self.primitive.name

    @property
    def label(self) -> str:
        return self.primitive.label

    @property
    def style(self) -> str:
        """How tapeviz draws it: the primitive's kind for custom primitives, else
        ``"builtin"`` (``"gradient"`` for a backward node) or ``"override"`` when the
        gradient in force replaces a built-in one (a gradient registered for a kernel of
        the user's, that never had one, is no override: ``"builtin"``)."""
        kind = self.primitive.kind
        if kind != "builtin":
            return kind
        g = self.grad
        if g is not None and not g.builtin:
            if self.kernel in BUILTIN_GRADIENTS:
                return "override"
        return "builtin" if self.grad_of is None else "gradient"

    @property
    def saved_nbytes(self) -> int:
        return sum(s.nbytes for s in self.saved)

    def __repr__(self):
        ins = ", ".join(f"{k}: {_shape(t)}" for k, t in self.inputs.items())
        outs = ", ".join(str(_shape(t)) for t in self.outputs)
        return f"Node({self.id} {self.label} [{self.backend}] ({ins}) -> {outs})"


def _shape(t):
    return t.shape if t._data is not None else "<disposed>"
