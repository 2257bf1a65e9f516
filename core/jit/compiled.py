"""``Compiled``: one traced signature of a jitted function, and how it runs.

Made by ``build`` from a finished trace: the program (statements over values), its names,
the pruned statements, the generated function, what to check before each call (the
kernels and gradients it was traced with, the closure and globals the function read), and
how to turn the generated function's arrays back into the function's kind of result.
"""

from __future__ import annotations

import numpy as np

from ..registry.gradients import OVERRIDES, grad_in_force
from ..registry.kernels import EDITS, PRIMITIVES
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor
from .bindings import Bindings
from .codegen import compile_program, prune
from .ir import Program
from .names import assign_names
from .pytree import unflatten

__all__ = ["Compiled", "build"]


class Compiled:
    """A compiled signature. ``source`` is the Python that runs; ``stmts`` its statements;
    ``tapes`` the tapes that recorded while tracing; ``display`` a tape of the forward ops
    (``JitFunction.trace`` only); ``first_result`` what the traced call returned."""

    def __init__(self, program, stmts, source, fn, checks, bindings, result):
        self.program, self.stmts, self.source, self.fn = program, stmts, source, fn
        self.checks, self.bindings = checks, bindings
        self.out_struct, self.specs, self.kinds = result
        self.tapes, self.display, self.first_result = [], None, None
        self.values: dict = {}  # tensor id -> Value (traces made for display only)
        self.flags: list = []  # (Variable or argument index, trainable when traced)
        self.backend, self.signature, self.arg_names = "", [], []
        self.edits, self.overrides = EDITS[0], OVERRIDES.get()  # registry state when traced
        self.const_ids, self.copied, self.same = frozenset(), (), ()
        self.backward = False  # whether it runs a backward pass (reverse mode)

    def stale(self, fn, leaves) -> str | None:
        """Why this program cannot run for ``fn`` on ``leaves`` now (None: it can)."""
        if EDITS[0] != self.edits or OVERRIDES.get() is not self.overrides:
            why = self._kernels_changed()
            if why is not None:
                return why
            if OVERRIDES.get() is self.overrides:
                self.edits = EDITS[0]  # unrelated registrations: the fast path again
        ids = self.const_ids
        for i in self.copied:  # an argument traced as a copy must not be a tensor it reads
            x = leaves[i]
            if type(x) is not np.ndarray and x.id in ids:
                return f"tensor argument {i} is also a tensor the function reads by itself"
        for i, x in self.same:
            if leaves[i] is not x:
                return f"tensor argument {i} is not the tensor the function also reads"
        for var, trainable in self.flags:
            now = leaves[var] if type(var) is int else var
            if now.trainable is not trainable:
                return f"Variable {now._label()}.trainable changed to {now.trainable}"
        return self.bindings.changed(fn)

    def aliases(self, leaves, traced) -> None:
        """Note which tensor arguments were traced as copies (``copied``: a later call must
        not pass a tensor the program reads as a constant or by identity there) and which as
        themselves (``same``: the function reaches them by identity too; only they fit)."""
        pairs = [(i, x) for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        self.copied = tuple(i for i, x in pairs if x is not traced[i])
        self.same = tuple(
            (i, x) for i, x in pairs if x is traced[i] and not isinstance(x, Variable)
        )

    def _kernels_changed(self) -> str | None:
        for prim, backend, config, grad in self.checks:
            if prim.kernels.get(backend) is not config or grad_in_force(prim) is not grad:
                return f"kernel or gradient {prim.name!r} was registered again or overridden"
            if PRIMITIVES.get(prim.name) is not prim:
                return f"kernel {prim.name!r} was unregistered"
        return None

    def guards(self) -> list[str]:
        """What this program assumed when it was traced, one line each: what a call must
        match to run it (``tv.show_code`` lists them)."""
        lines = [f"backend: {self.backend}", *self.signature]
        for v, t in self.flags:
            name = f"argument {self.arg_names[v]}" if type(v) is int else v._label()
            lines.append(f"Variable {name}: trainable is {t}")
        plain = sorted({prim.name for prim, _b, _c, g in self.checks if g is prim.grad})
        if plain:
            lines.append(f"kernels and gradients as registered when traced: {', '.join(plain)}")
        for prim, _backend, _config, grad in self.checks:
            if grad is not prim.grad:
                lines.append(f"gradient of {prim.name!r}: the override in force when traced")
        return lines + self.bindings.describe()

    def run(self, leaves):
        """Run the generated function on the arguments' arrays; the function's result."""
        arrays = [
            x if k == "v" else x._data if isinstance(x, Tensor) else x
            for x, k in zip(leaves, self.kinds)
        ]
        made = self.fn(*arrays)
        out = []
        for kind, payload, name in self.specs:
            if kind == "new":
                out.append(Tensor(made[payload], name))
            elif kind == "leaf":
                x = leaves[payload]
                out.append(x if isinstance(x, Tensor) else Tensor(x, name))
            elif kind == "value":
                x = leaves[payload]
                out.append(Tensor(x._data if isinstance(x, Tensor) else x, name))
            else:
                out.append(payload)
        return unflatten(self.out_struct, iter(out))

    @property
    def tape(self):
        """The tape to draw: the one that ran a backward pass with most steps, else the
        display tape of the forward ops."""
        with_backward = [t for t in self.tapes if t.backward_nodes]
        if with_backward:
            return max(with_backward, key=lambda t: len(t.nodes) + len(t.backward_nodes))
        return self.display

    @property
    def code(self) -> str:
        """The program as a person reads it (``render``): forward, backward, its guards."""
        from .render import text  # loaded when code is first shown: import tapeviz stays light

        return text(self.rows())

    def rows(self, retraced: str = "") -> list:
        """``render.rows`` of the program, linked to the nodes of ``tape``, with its guards
        and ``retraced`` (why it was traced again) after the code."""
        from .render import rows  # loaded when code is first shown

        nodes = self.node_ids(self.tape)
        return rows(self.program, self.stmts, nodes, self.guards(), retraced)

    def name_tensors(self) -> None:
        """Give the unnamed tensors of the drawn tapes the code's names (``h``, ``dh``), so
        the graph and the code say the same (display traces only: these tensors are the
        trace's own)."""
        for tape in {id(t): t for t in (*self.tapes, self.display) if t is not None}.values():
            for node in list(tape.nodes) + list(tape.backward_nodes):
                for t in (*node.inputs.values(), *node.outputs):
                    v = self.values.get(t.id)
                    if t.name is None and v is not None and v.name and v.kind != "const":
                        t.name = v.name

    def node_ids(self, tape) -> dict:
        """``id(Value) -> "n<node id>"`` for the nodes of ``tape`` (forward and backward)."""
        if tape is None or not self.values:
            return {}
        out = {}
        for node in list(tape.nodes) + list(tape.backward_nodes):
            for o in node.outputs:
                v = self.values.get(o.id)
                if v is not None:
                    out.setdefault(id(v), f"n{node.id}")
        return out


def build(jitfn, fn, tracer, traced, kinds, names, result) -> Compiled:
    """The ``Compiled`` program of a finished trace (``kinds``: per argument leaf ``"t"`` a
    tensor, ``"a"`` a numpy array; ``result``: the result's structure, its tensor leaves and
    their Values)."""
    out_struct, out_leaves, out_values = result
    args = []
    for i, t in enumerate(traced):
        is_var = isinstance(t, Variable)
        if is_var:
            kinds[i] = "v"
        v = tracer.values.get(t.id) if not is_var else None
        if v is not None and v.index == i:
            args.append(v)
    specs, outputs = _result_specs(traced, out_leaves, out_values)
    program = Program(jitfn.name, tracer.stmts, args, outputs, names)
    program.var_args = {i for i, k in enumerate(kinds) if k == "v"}
    assign_names(program, tracer.tensor_names, list(tracer.tapes.values()))
    stmts = prune(program.stmts, outputs)
    if any(s.kind == "kernel" and s.config.backend_name == "numba" for s in stmts):
        from .fusion import fuse  # 8 ms of import: only when numba kernels are fused

        stmts = fuse(stmts, outputs)
    source, run = compile_program(program, stmts)
    checks = _checks(program.stmts)  # all traced kernels: a pruned one still chose the backward
    compiled = Compiled(
        program, stmts, source, run, checks, Bindings(fn), (out_struct, specs, kinds)
    )
    compiled.flags = _flags(program.stmts, traced)
    compiled.backward = any(s.phase == "backward" for s in program.stmts)
    consts = {v.tensor_id for s in program.stmts for v in s.ins if v.kind == "const"}
    compiled.const_ids = frozenset((consts | tracer.touched) - {None})  # used by identity
    compiled.arg_names = names
    if tracer.display is not None:  # kept for show_code only: a cached program keeps no tape
        compiled.tapes = list(tracer.tapes.values())
        compiled.display = tracer.display
        compiled.values = dict(tracer.values)
    else:
        program.stmts = stmts  # the pruned program: no statement holds a dropped constant
    return compiled


def _flags(stmts, traced) -> list:
    """``(Variable or argument index, trainable)`` for each Variable the program reads or
    assigns: a tape watches trainable ones, so a flipped flag changes the program."""
    out, seen = [], set()
    for s in stmts:
        var = getattr(s, "var", None)
        if s.kind in ("read", "assign") and id(var) not in seen:
            seen.add(id(var))
            obj = traced[var] if type(var) is int else var
            out.append((var, obj.trainable))
    return out


def _result_specs(traced, out_leaves, out_values) -> tuple:
    """How each tensor of the result is made on a call: ``("new", k, name)`` from the
    program's k-th output, ``("leaf", i, name)`` the i-th argument itself, ``("value", i,
    name)`` a new tensor of its value (a copy of it), ``("object", t, None)`` a Variable the
    function closed over; and the program's outputs."""
    specs, outputs, slot = [], [], {}
    leaf_of = {id(t): i for i, t in reversed(list(enumerate(traced)))}
    for t, v in zip(out_leaves, out_values):
        if v is None or v.kind == "arg":
            i = leaf_of.get(id(t))
            if i is None and v is not None:  # another tensor of an argument's value (a copy)
                specs.append(("value", v.index, t.name))
            else:
                specs.append(("leaf", i, t.name) if i is not None else ("object", t, None))
            continue
        if id(v) not in slot:
            slot[id(v)] = len(outputs)
            outputs.append(v)
        specs.append(("new", slot[id(v)], t.name))
    return specs, outputs


def _checks(stmts) -> tuple:
    seen = {}
    for s in stmts:
        if s.kind == "kernel":
            key = (id(s.prim), s.config.backend_name)
            seen.setdefault(key, (s.prim, s.config.backend_name, s.config, grad_in_force(s.prim)))
    return tuple(seen.values())
