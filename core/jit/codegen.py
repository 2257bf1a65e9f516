"""From a traced ``Program`` to a Python function: straight-line kernel calls.

Kernels whose outputs nothing uses are dropped (assignments and random draws stay: they are
effects); every array is deleted right after its last use, so large intermediates are freed
as early as hand-written numpy frees them. Each kernel call is the backend's own function
with the traced attrs (``fn({"x": x}, attrs)``), in the traced order: the same kernels on
the same inputs give eager's results bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..tensors.tensor import DisposedError
from .names import identifier

__all__ = ["prune", "last_uses", "compile_program", "read", "assign"]


def read(var):
    """A Variable's array at call time (the compiled program's variable read)."""
    d = var.peek()
    if d is None:
        raise DisposedError(f"variable {var._label()} was disposed and cannot be used")
    return d


def assign(var, array) -> None:
    """``var.assign(array)`` from the compiled program (shape and dtype were checked when
    tracing and cannot change)."""
    var.assign(array)


def prune(stmts: list, outputs: list) -> list:
    """The statements the outputs and the effects (assignments, random draws) need."""
    live = {id(v) for v in outputs}
    kept = []
    for s in reversed(stmts):
        if s.kind in ("assign", "random", "check") or any(id(v) in live for v in s.outs):
            kept.append(s)
            live.update(id(v) for v in s.ins)
    kept.reverse()
    return kept


def last_uses(stmts: list, outputs: list) -> dict:
    """``id(Value) -> index of the last statement reading it`` (``len(stmts)``: returned)."""
    last = {}
    for i, s in enumerate(stmts):
        for v in s.ins:
            last[id(v)] = i
        for v in s.outs:  # an output nothing reads is freed where it is made
            last.setdefault(id(v), i)
    for v in outputs:
        last[id(v)] = len(stmts)
    return last


class _Globals:
    """The names the generated source refers to: kernels, attrs, constants, variables."""

    def __init__(self):
        self.ns = {"read": read, "assign": assign, "asarray": np.asarray}
        self._ids: dict = {}

    def ref(self, obj, prefix: str) -> str:
        key = (prefix, id(obj))
        name = self._ids.get(key)
        if name is None:
            name = self._ids[key] = f"_{prefix}{len(self._ids)}"
            self.ns[name] = obj
        return name


def _expr(v, g: _Globals) -> str:
    if v.kind == "const":
        return g.ref(v.array, "c")
    return v.name


def _line(s, g: _Globals, params) -> str:
    outs = ", ".join(v.name for v in s.outs)
    if s.kind == "kernel":
        ins = ", ".join(f"{k!r}: {_expr(v, g)}" for k, v in zip(s.keys, s.ins))
        call = f"{g.ref(s.config.fn, 'k')}({{{ins}}}, {g.ref(s.attrs, 'a')})"
        if s.many:
            return f"{outs}, = {call}" if len(s.outs) == 1 else f"{outs} = {call}"
        return f"{outs} = {call}"
    if s.kind == "fused":
        return f"{outs} = {g.ref(s.config, 'f')}({', '.join(_expr(v, g) for v in s.ins)})"
    if s.kind == "read":
        return f"{outs} = read({params[s.var] if s.var_arg else g.ref(s.var, 'v')})"
    if s.kind == "assign":
        var = params[s.var] if s.var_arg else g.ref(s.var, "v")
        return f"assign({var}, {_expr(s.ins[0], g)})"
    if s.kind == "random":
        return f"{outs} = {g.ref(s.draw, 'r')}()"
    if s.kind == "check":
        return f"{g.ref(s.draw, 'check')}({', '.join(_expr(v, g) for v in s.ins)})"
    raise AssertionError(s.kind)


def source_lines(program, stmts) -> tuple[list, _Globals]:
    """The body of the generated function (one entry per statement, then frees)."""
    g = _Globals()
    last = last_uses(stmts, program.outputs)
    dying: dict[int, list] = {}
    for v in _locals(program, stmts):
        dying.setdefault(last.get(id(v), -1), []).append(v.name)
    lines = []
    for i, s in enumerate(stmts):
        lines.append(_line(s, g, program.param_names))
        scalar = [s.outs[k].name for k in s.scalars]
        if scalar:
            lines.append(f"{', '.join(scalar)}, = map(asarray, ({', '.join(scalar)},))")
        if dying.get(i):
            lines.append(f"del {', '.join(dying[i])}")
    return lines, g


def _locals(program, stmts):
    """Values held in local names (arguments are deleted too, once used)."""
    seen = set()
    for v in program.args:
        seen.add(id(v))
        yield v
    for s in stmts:
        for v in s.outs:
            if id(v) not in seen:
                seen.add(id(v))
                yield v


def compile_program(program, stmts) -> tuple[str, object]:
    """(source, function): ``function(*args)`` returns the outputs' arrays as a tuple."""
    lines, g = source_lines(program, stmts)
    params = ", ".join(program.param_names)
    rets = ", ".join(_expr(v, g) for v in program.outputs)
    body = "\n".join("    " + line for line in lines)
    name = f"_jit_{identifier(program.name)}"
    src = f"def {name}({params}):\n{body}\n    return ({rets}{',' if program.outputs else ''})\n"
    code = compile(src, f"<tv.jit {program.name}>", "exec")
    exec(code, g.ns)
    return src, g.ns[name]
