"""The tape: a plain record of every kernel run, and reverse mode over it.

``tape.nodes`` is what tapeviz draws. Each ``Node`` holds, by plain forward references, the
kernel name, backend, input and output tensors, attrs, and the values its gradient config
saved for backward (``SavedValue``: role, name, shape, dtype, nbytes). After ``gradient()``
the tape also holds ``backward_nodes`` (the ops the gradient ran, each with ``grad_of``, the
forward node whose gradient produced it) and ``backward_steps`` (per forward node, in the
order the engine processed them: the incoming ``dy``, the gradients produced and where they
were accumulated). Backward values larger than ``settings.backward_keep_bytes`` (64 KiB) are
recorded there by shape only (a disposed stand-in with the same id), so large arrays free
and reuse memory as plain numpy code does; the gradients returned are always full values.
"""

from __future__ import annotations

import threading
import weakref

from ..engine.node import Node, SavedValue
from ..registry.gradients import GradConfig
from ..registry.validation import saved_key_error
from ..tensors import recording
from ..tensors.foreign import Foreign, own
from ..tensors.kinds import Constant, Variable
from ..tensors.nested import flatten_tensors
from ..tensors.tensor import Tensor
from ..tensors.tracing import TRACER, touch
from .backward import BackwardStep, reverse

__all__ = ["Tape", "Node", "SavedValue", "BackwardStep"]  # the record tapeviz reads

_LIVE_TAPES: weakref.WeakSet = weakref.WeakSet()


class Tape:
    """Record kernel runs in the block; ``gradient`` differentiates what was recorded.

    Args:
        persistent: keep saved values after ``gradient`` so it can be called again.

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([3.0])
        >>> with tv.Tape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.gradient(y, x).numpy()
        array([6.], dtype=float32)
    """

    def __init__(self, persistent: bool = False):
        self.persistent = persistent
        self.nodes: list[Node] = []
        self.backward_nodes: list[Node] = []
        self.backward_steps: list[BackwardStep] = []
        self.watched: dict[int, Tensor] = {}
        self._producer: dict[int, Node] = {}  # output tensor id -> the node that made it
        self._next_id = 0
        self._used = False
        self._token = None
        self._owner = None  # the thread whose `with` block is open
        _LIVE_TAPES.add(self)

    # --- recording -----------------------------------------------------------------------
    def __enter__(self):
        """Start recording: every kernel run in the ``with`` block (in this thread or
        context) is recorded on this tape, and on every tape entered before it that is
        still open. Returns the tape. A tape records one block at a time (a second
        ``with`` of the same open tape raises); exit nested tapes in reverse order."""
        if self._token is not None:
            where = "this thread" if self._owner == threading.get_ident() else "another thread"
            raise RuntimeError(
                f"Tape: this tape is already recording (its `with` block is open in {where}); "
                "a tape records one block at a time: use a new tv.Tape() for nested or "
                "concurrent recording"
            )
        self._owner = threading.get_ident()
        rec = recording.current()
        rec = recording.Recording((self,)) if rec is None else rec.with_tape(self)
        self._token = recording.enter(rec)
        return self

    def __exit__(self, *exc):
        """Stop recording (what was recorded stays for ``gradient``); exceptions propagate."""
        token = self._token
        if token is None or self._owner != threading.get_ident():
            where = "is not open" if token is None else "was opened in another thread"
            raise RuntimeError(f"Tape: exited, but its `with` block {where}")
        rec = recording.current()
        if rec is None or rec.tapes[-1:] != (self,):  # a tape entered later is still open
            raise RuntimeError(
                "Tape: exited while a tape entered after it is still recording; exit tapes in "
                "the reverse order they were entered (as nested `with` blocks do)"
            )
        self._token = None
        recording.leave(token)
        return False

    def watch(self, *tensors) -> None:
        """Mark tensors as sources (drawn as inputs). Any recorded floating tensor can be a
        source; an int or bool tensor has no gradient (its gradient would always be None), so
        watching one is a ``TypeError`` (PyTorch's ``requires_grad`` refuses it too)."""
        for t in flatten_tensors(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"Tape.watch: expected Tensors, got {type(t).__name__}")
            if t._shape_dtype()[1].kind != "f":
                raise TypeError(
                    f"Tape.watch: tensor {t._label()} is {t._shape_dtype()[1]}; only floating "
                    "tensors have gradients. Watch a float copy and compute with it: "
                    "x = tv.cast(x, 'float32')"
                )
            self.watched[t.id] = t
        touch(flatten_tensors(tensors))

    def record_node(self, prim, backend, inputs, outputs, attrs, grad, source, saved=None):
        """Record one run of ``prim`` as a forward node (``saved``: the ``(role, name,
        tensor)`` list a custom primitive chose; else ``grad``'s save plan decides)."""
        if saved is not None:
            saved = [SavedValue(r, n, own(t)) for r, n, t in saved]
        elif grad is None:
            saved = []
        elif grad.save_plan or grad.save_all_inputs:
            saved = _saved_by_config(grad, inputs, outputs)
        else:
            saved = []
        scope = recording.scope()  # new_node's work, inline: this runs once per forward op
        node_id = self._next_id
        self._next_id = node_id + 1
        node = Node(
            node_id, prim, backend, inputs, outputs, attrs, saved, grad,
            "/".join(scope) if scope else "", source,
        )  # fmt: skip
        self.nodes.append(node)
        producer = self._producer
        for o in outputs:
            producer[o.id] = node
        for t in inputs.values():
            if type(t) is not Tensor and isinstance(t, Variable) and t.trainable:
                self.watched.setdefault(t.id, t)
        return node

    def new_node(self, prim, backend, inputs, outputs, attrs, saved, grad, source, grad_of=None):
        """A ``Node`` with this tape's next id, in the name scope open here: how a backward
        pass (``core.autodiff.backward.BackwardPass``) makes its nodes; ``record_node`` does the same
        inline for forward nodes (the hot path)."""
        scope = recording.scope()
        node_id = self._next_id
        self._next_id = node_id + 1
        return Node(
            node_id, prim, backend, inputs, outputs, attrs, saved, grad,
            "/".join(scope) if scope else "", source, grad_of,
        )  # fmt: skip

    def producer(self, t: Tensor) -> Node | None:
        """The node that made ``t`` on this tape (None for inputs and constants)."""
        return self._producer.get(t.id)

    # --- reverse mode --------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """Gradients of ``target`` with respect to ``sources``.

        Args:
            target: a Tensor or a list of Tensors (their gradients are summed).
            sources: a Tensor, or a list/tuple/dict of Tensors; the result has that structure.
            output_gradients: ``dy`` for each target; needed when a target is not a scalar.
            unconnected_gradients: ``"none"`` (default) returns ``None`` for a source the
                target does not depend on; ``"zero"`` returns zeros.

        Returns:
            Gradients shaped like ``sources``.
        """
        if self._used and not self.persistent:
            raise RuntimeError(
                "Tape.gradient: a non-persistent tape can only compute one gradient; "
                "use Tape(persistent=True) to call gradient() again"
            )
        if TRACER.get() is not None:  # tv.jit: which tensors are differentiated, by identity
            touch(flatten_tensors((target, sources)))
        result = reverse(self, target, sources, output_gradients, unconnected_gradients)
        self._used = True
        if not self.persistent:
            self.release()
        return result

    def release(self) -> None:
        """Drop every saved value (their metadata stays for tapeviz)."""
        for node in self.nodes:
            for s in node.saved:
                s.release()

    @property
    def saved_nbytes(self) -> int:
        """Bytes currently held as saved-for-backward values."""
        seen, total = set(), 0
        for node in self.nodes:
            for s in node.saved:
                if s.tensor is not None and s.tensor.id not in seen:
                    seen.add(s.tensor.id)
                    total += s.nbytes
        return total

    def node(self, node_id: int) -> Node:
        """The forward or backward node with ``node_id``."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        for n in self.backward_nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"Tape.node: no node with id {node_id} (this tape has {self._next_id})")

    def __repr__(self):
        return (
            f"Tape({len(self.nodes)} nodes, {len(self.backward_nodes)} backward nodes, "
            f"saved {self.saved_nbytes} bytes, persistent={self.persistent})"
        )


def _saved_by_config(grad: GradConfig, inputs, outputs) -> list[SavedValue]:
    """What ``grad``'s save plan keeps of one run (one call per forward op: the hot path)."""
    try:
        if grad.save_all_inputs:
            saved = [SavedValue("input", k, own(t)) for k, t in inputs.items()]
            saved += [SavedValue("output", i, own(outputs[i])) for i in grad.outputs_to_save]
            return saved
        saved = []
        for is_input, key, readers in grad.save_plan:
            role, t = ("input", inputs[key]) if is_input else ("output", outputs[key])
            if readers is not None:
                for r in readers:
                    if type(inputs[r]) is not Constant:
                        break
                else:  # only constants' gradients read it
                    saved.append(SavedValue._unneeded(role, key, t))
                    continue
            saved.append(SavedValue(role, key, own(t) if type(t) is Foreign else t))
        return saved
    except (KeyError, IndexError) as e:  # the config names an input or output not there
        raise saved_key_error(grad.kernel_name, inputs, outputs, e) from None


def live_tapes() -> list[Tape]:
    return list(_LIVE_TAPES)
