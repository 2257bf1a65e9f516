"""The tracer: what ``tv.jit`` hangs in ``core.tensors.tracing.TRACER`` while a function runs once.

It sees every kernel ``run_kernel`` runs (forward and backward alike: gradients are ops),
every random draw and every ``Variable.assign``, and writes them as ``ir.Stmt``s over
``ir.Value``s. A tensor it has not seen is a constant, unless its array is a traced
value's (a custom op re-wrapping an output: the same value) or part of one (refused). Traced
arrays are ``TracedArray``s until ``finish``, so value reads outside kernels raise.
"""

from __future__ import annotations

import numpy as np

from ..tensors import recording
from ..tensors.arrays import to_array
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor, new_id
from ..tensors.tracing import TRACER
from .errors import JitError, concretization_error, opaque_error
from .ir import Stmt, Value, user_site
from .traced_array import TracedArrays, plain

__all__ = ["Tracer", "Aliased"]


FOLD_BYTES = 1 << 16  # a kernel of constants with outputs up to this size is folded


def _small(outputs) -> bool:
    return sum(t._data.nbytes for t in outputs if t._data is not None) <= FOLD_BYTES


class Aliased(BaseException):  # not an Exception: user code's ``except Exception`` must
    """The traced function used argument ``index``'s original tensor by identity (it also
    reads it from its closure): trace again with the original itself."""  # not swallow it

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


class Tracer:
    """Records one run of a function (``with tracer: ...``), then ``finish()``."""

    def __init__(self, fn_name: str, display=None):
        self.fn_name = fn_name
        self.stmts: list[Stmt] = []
        self.values: dict[int, Value] = {}  # tensor id -> Value
        self.producer: dict[int, Stmt] = {}  # id(Value) -> the Stmt that made it
        self.var_args: dict[int, int] = {}  # Variable id -> argument index
        self.tapes: dict[int, object] = {}  # the tapes that recorded while tracing
        self.display = display  # a Tape that records the forward kernels (show_code)
        self.start_id = new_id()
        self.arrays = TracedArrays()  # which arrays are traced values (wrapped until finish)
        self.tensor_names: dict[int, str] = {}  # tensor id -> its name when tracing ended
        self._nodes: dict = {}  # id(tape) -> {node id: node}
        self.originals: dict[int, int] = {}  # tensor id of a copied argument's original -> index
        self.touched: set = set()  # ids of tensors used by identity (watched, differentiated)
        self.undo: list = []  # (Variable, array, version) before each assign (for an abort)
        self._token = None

    def __enter__(self):
        self._token = TRACER.set(self)
        return self

    def __exit__(self, *exc):
        TRACER.reset(self._token)
        return False

    # --- arguments ------------------------------------------------------------------------
    def add_arg(self, t: Tensor, index: int) -> None:
        """Argument ``index`` is ``t`` (a Variable argument is read where it is first used)."""
        if isinstance(t, Variable):
            self.var_args[t.id] = index
            return
        v = Value("arg", t.shape, t.dtype, index=index, tensor_id=t.id)
        self.values[t.id] = v
        self._track(t, v)

    # --- the engine's hook ----------------------------------------------------------------
    def unwrap(self, arrays: dict) -> dict:
        """The kernel's inputs as plain arrays (a kernel runs as in eager mode)."""
        return {k: plain(a) for k, a in arrays.items()}

    def kernel(self, prim, backend, config, inputs, outputs, attrs, out) -> None:
        """``run_kernel`` ran ``config`` on ``inputs``: record it."""
        ins = [self.lookup(t) for t in inputs.values()]
        self._check_attrs(prim.name, attrs)
        if all(v.kind == "const" for v in ins) and _small(outputs):  # x ** 2's b - 1
            return self._fold(prim, config, inputs, outputs, attrs)
        outs = []
        for t in outputs:
            v = Value("op", *t._shape_dtype(), tensor_id=t.id)
            self.values[t.id] = v
            self._track(t, v)
            outs.append(v)
        seq = out if type(out) is tuple or type(out) is list else (out,)
        stmt = Stmt("kernel", ins, outs, prim=prim, config=config, keys=tuple(inputs))
        stmt.attrs = attrs
        stmt.many = seq is out
        stmt.scalars = tuple(i for i, o in enumerate(seq) if type(o) is not np.ndarray)
        self._place(stmt, inputs, outputs)
        self._emit(stmt)

    def _fold(self, prim, config, inputs, outputs, attrs) -> None:
        """A kernel of constants only: its outputs are constants too (kernels are pure; random
        draws and Variable reads are never constants), computed once, here; only small ones
        (``FOLD_BYTES``), so a program never keeps a large array that a kernel could make."""
        for t in outputs:
            data = plain(t._data)
            self.values[t.id] = Value("const", data.shape, data.dtype, array=data, tensor_id=t.id)
        if self.display is not None:  # show_code's graph still shows the op
            self._place(
                Stmt("kernel", [], [], prim=prim, config=config, attrs=attrs), inputs, outputs
            )

    def _place(self, stmt: Stmt, inputs=None, outputs=None) -> None:
        """Phase, the forward statement it differentiates, source line; note the tapes."""
        rec = recording.current()
        if rec is not None:
            for tape in rec.tapes:
                self.tapes.setdefault(id(tape), tape)
            if rec.backward:
                bw = rec.backward[-1]
                self.tapes.setdefault(id(bw.tape), bw.tape)
                stmt.phase = "backward"
                stmt.grad_of = self._forward_stmt(bw.tape, bw.grad_of)
        stmt.source, stmt.site = user_site()
        if self.display is not None and stmt.phase == "forward" and inputs is not None:
            prim = stmt.prim
            node = self.display.record_node(
                prim, stmt.config.backend_name, inputs, outputs, stmt.attrs, prim.grad, stmt.source
            )
            stmt.node = (self.display, node.id)

    def _forward_stmt(self, tape, node_id):
        nodes = self._nodes.get(id(tape))
        if nodes is None or node_id not in nodes:
            nodes = self._nodes[id(tape)] = {n.id: n for n in tape.nodes}
        node = nodes.get(node_id)
        if node is None or not node.outputs:
            return None
        v = self.values.get(node.outputs[0].id)
        return self.producer.get(id(v)) if v is not None else None

    def _emit(self, stmt: Stmt) -> None:
        self.stmts.append(stmt)
        for v in stmt.outs:
            self.producer[id(v)] = stmt

    # --- values -----------------------------------------------------------------------------
    def lookup(self, t: Tensor) -> Value:
        """The Value of tensor ``t``: traced, a Variable read now, an alias, or a constant."""
        v = self.values.get(t.id)
        if v is not None:
            return v
        if t.id in self.originals:
            raise Aliased(self.originals[t.id])
        if isinstance(t, Variable):
            return self._read(t)
        data = t._data
        if data is None:
            t._array  # noqa: B018 - raises DisposedError naming the tensor
        v = self._alias(data)
        if v is None:
            v = Value("const", data.shape, data.dtype, array=plain(data), tensor_id=t.id)
            if t.name:
                self.tensor_names[t.id] = t.name
        self.values[t.id] = v
        return v

    def _read(self, var: Variable) -> Value:
        index = self.var_args.get(var.id)
        v = Value("var", var.shape, var.dtype, tensor_id=var.id)
        stmt = Stmt("read", [], [v], var=var if index is None else index, var_arg=index is not None)
        self._place(stmt)
        self._emit(stmt)
        self.values[var.id] = v
        self._track(var, v)
        return v

    def copied(self, source: Tensor, copy: Tensor) -> None:
        """``copy`` is ``copy.copy``/``deepcopy`` of ``source``: the same value (a Variable's
        as read now), computed on every call instead of baked in."""
        if not self.traced(source):
            return
        v = self.lookup(source)
        self.values[copy.id] = v
        self._track(copy, v)

    def own(self, t: Tensor) -> None:
        """Give ``t`` a copy of its array of its own; a traced value stays traced."""
        t._data = plain(t._data).copy()
        v = self.values.get(t.id)
        if v is not None:
            self._track(t, v)

    def _track(self, t: Tensor, v: Value) -> None:
        self.arrays.track(t, v)

    def _alias(self, data) -> Value | None:
        """The traced Value whose array ``data`` is, None for an array of its own; a part of
        a traced array made outside kernels is refused."""
        v = self.arrays.value_of(data)
        if v is False:
            self.escape("a view of a traced value made outside kernels")
        return v

    def _check_attrs(self, kernel: str, attrs) -> None:
        """Refuse attrs holding a traced array or a view of one (``x[i]`` with ``i`` a
        traced tensor: its value would be baked into the program)."""
        if self.arrays.held_in(attrs):
            self.escape(f"an attribute of kernel {kernel!r} holding a traced value")

    # --- random draws and assignments ---------------------------------------------------
    def random(self, t: Tensor, draw) -> None:
        """``t`` holds a fresh ``draw()``: the program draws again on every call."""
        v = Value("random", t.shape, t.dtype, tensor_id=t.id)
        stmt = Stmt("random", [], [v], draw=draw)
        self._place(stmt)
        self._emit(stmt)
        self.values[t.id] = v
        self._track(t, v)

    def assign(self, var: Variable, value) -> Variable:
        """``var.assign(value)`` while tracing: done now, and again by the program."""
        if var.id > self.start_id and var.id not in self.var_args:
            raise JitError(
                f"tv.jit({self.fn_name}): Variable {var._label()} is created and assigned "
                "inside the jitted function; the program would carry its value from one call "
                "to the next. Create it outside the function (and pass it in or close over it)"
            )
        if isinstance(value, Tensor):
            v, array = self.lookup(value), plain(value._array)
        else:
            array = to_array(value, where=f"Variable {var._label()}.assign")
            v = Value("const", array.shape, array.dtype, array=array)
        self.undo.append((var, plain(var._data), var._version))
        token = TRACER.set(None)
        try:
            var.assign(array)
        finally:
            TRACER.reset(token)
        index = self.var_args.get(var.id)
        stmt = Stmt("assign", [v], [], var=var if index is None else index)
        stmt.var_arg = index is not None
        self._place(stmt)
        self._emit(stmt)
        self.values.pop(var.id, None)  # the next use reads the new value
        return var

    def check(self, check, tensors) -> None:
        """``check(*arrays)`` runs now and, as a statement, on every call of the program."""
        ins = [self.lookup(t) for t in tensors]
        check(*[plain(t._array) for t in tensors])
        stmt = Stmt("check", ins, [], draw=check)
        self._place(stmt)
        self._emit(stmt)

    def traced(self, t) -> bool:
        """True when ``t``'s value is the trace's (not a constant)."""
        if isinstance(t, Variable):
            return True
        v = self.values.get(t.id)
        return v is not None and v.kind != "const"

    def touch(self, t) -> None:
        """``t`` is used by identity (a tape watches or differentiates it)."""
        if t.id in self.originals:
            raise Aliased(self.originals[t.id])
        self.touched.add(t.id)

    def rollback(self) -> None:
        """Undo the assigns of an aborted trace (newest first)."""
        for var, data, version in reversed(self.undo):
            var._data, var._version = data, version
        self.undo.clear()

    # --- refusals ---------------------------------------------------------------------------
    def concrete(self, t, what: str) -> None:
        """Raise if ``t``'s value is traced (a Variable's always is)."""
        v = self.values.get(t.id)
        if isinstance(t, Variable) or (v is not None and v.kind != "const"):
            raise concretization_error(self.fn_name, what, t)

    def escape(self, what: str) -> None:
        raise concretization_error(self.fn_name, what, None)

    def opaque(self, kind: str, name: str) -> None:
        raise opaque_error(self.fn_name, kind, name)

    # --- the end ----------------------------------------------------------------------------
    def finish(self) -> None:
        """Give every traced tensor its plain array back; forget the arrays."""
        self.arrays.release(self.tensor_names)
