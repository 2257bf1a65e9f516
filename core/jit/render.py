"""The compiled program as a person reads it: ``show_code``'s text, one row per statement.

Each kernel call is written ``Tanh(x)`` / ``TanhGrad(dy=t5, y=h)`` with its attrs as keywords
(the generated source calls the same backend function with an input dict); a forward op
carries a comment with its source line; the backward pass is grouped under the forward op
each step differentiates (``# ∂ Tanh  (In [3], line 2)``); ``del`` lines show where
intermediates are freed; after the code, its guards (what a call must match to run it) and,
after a retrace, why. Rows keep the statement and the tape node they stand for, so a view
can link a line to its node in the graph. The one printer of a compiled program: its text
(``Compiled.code``, ``print(tv.show_code(...))``) and ``show_code``'s highlighted lines are
these rows.
"""

from __future__ import annotations

import linecache

import numpy as np

from ..engine.source_location import cell_number
from .codegen import last_uses

__all__ = ["rows", "text", "where"]

_PLAIN_KEYS = {("x",), ("a", "b")}
CODE_WIDTH = 44


def text(rows_: list) -> str:
    """The readable program: the text of ``rows``, one line each."""
    return "\n".join(r["text"] for r in rows_)


def rows(program, stmts, nodes=None, guards=(), retraced="") -> list:
    """``[{"text", "kind", "node", "phase", "stmt"}, ...]``: ``kind`` is ``def``,
    ``section``, ``group`` (a backward group's header), ``fused`` (what a numba loop computes),
    ``op``, ``free`` or ``return``;
    ``node`` the graph node id (``"n3"``) of the op, from ``nodes`` (``id(Value) -> id``).
    ``guards`` (``Compiled.guards()``) and ``retraced`` (why the last trace ran) follow the
    code as comments."""
    nodes = nodes or {}
    params = ", ".join(program.param_names)
    out = [_row(f"def {program.name}({params}):", "def")]
    consts = _constants(stmts)
    for name, v in consts.items():
        out.append(_row(f"    # {name}: {v.dtype} {v.shape} constant", "section"))
    last = last_uses(stmts, program.outputs)
    phase, group = None, None
    dying = _dying(program, stmts, last)
    for i, s in enumerate(stmts):
        if s.phase != phase:
            phase = s.phase
            out.append(_row(f"    # {phase}", "section"))
        if phase == "backward" and s.grad_of is not group:
            group = s.grad_of
            out.append(_row(f"    # \u2202 {_group_title(group)}", "group"))
        if s.kind == "fused":  # what the loop computes, per element
            out.append(_row(f"    # {s.note}:", "fused", None, s.phase, i))
            for part in s.parts:
                out.append(_row(f"    #   {_stmt(part, consts)}", "fused", None, s.phase, i))
        code = "    " + _stmt(s, consts)
        comment = _comment(s) if s.kind != "fused" else ""
        line = f"{code:<{CODE_WIDTH}}  # {comment}" if comment else code
        node = nodes.get(id(s.outs[0])) if s.outs else None
        out.append(_row(line, "op", node, s.phase, i))
        if dying.get(i):
            out.append(_row(f"    del {', '.join(dying[i])}", "free", None, s.phase, i))
    rets = ", ".join(_arg(v, consts) for v in program.outputs)
    out.append(_row(f"    return ({rets}{',' if len(program.outputs) == 1 else ''})", "return"))
    return out + _guard_rows(guards, retraced)


def _guard_rows(guards, retraced: str) -> list:
    """Rows after the code: what the program assumed (its guards) and why it last retraced."""
    if not guards and not retraced:
        return []
    out = [_row("", "section")]
    if retraced:
        out.append(_row(f"# traced again because: {retraced}", "group"))
    out.append(_row("# guards: a call runs this program only while", "section"))
    return out + [_row(f"#   {g}", "section") for g in guards]


def _row(text, kind, node=None, phase=None, stmt=None) -> dict:
    return {"text": text, "kind": kind, "node": node, "phase": phase, "stmt": stmt}


def _dying(program, stmts, last) -> dict:
    made = {id(v) for s in stmts for v in s.outs} | {id(v) for v in program.args}
    dying: dict[int, list] = {}
    values = list(program.args) + [v for s in stmts for v in s.outs]
    seen = set()
    for v in values:
        if id(v) in seen or id(v) not in made:
            continue
        seen.add(id(v))
        i = last.get(id(v), -1)
        if 0 <= i < len(stmts):
            dying.setdefault(i, []).append(v.name)
    return dying


def _constants(stmts) -> dict:
    """Named constants (not 0-d: those are written as numbers)."""
    out = {}
    for s in stmts:
        for v in s.ins:
            if v.kind == "const" and v.array.ndim and v.name not in out:
                out[v.name] = v
    return out


def _arg(v, consts) -> str:
    if v.kind == "const" and v.name not in consts:
        return _number(v.array)
    return v.name


def _number(a) -> str:
    x = a.item() if isinstance(a, np.ndarray) and a.size == 1 else a
    return repr(x) if not isinstance(x, np.ndarray) else f"array(shape={a.shape})"


def _stmt(s, consts) -> str:
    outs = ", ".join(v.name for v in s.outs)
    ins = [_arg(v, consts) for v in s.ins]
    if s.kind == "kernel":
        args = ins if tuple(s.keys) in _PLAIN_KEYS else [f"{k}={a}" for k, a in zip(s.keys, ins)]
        args += [f"{k}={_attr(a)}" for k, a in s.attrs.items()]
        return f"{outs} = {s.kernel}({', '.join(args)})"
    if s.kind == "fused":
        return f"{outs} = fused({', '.join(ins)})"
    if s.kind == "read":
        return f"{outs} = read({_var_name(s)})"
    if s.kind == "assign":
        return f"assign({_var_name(s)}, {ins[0]})"
    if s.kind == "random":
        return f"{outs} = {_func_name(s.draw)}()"
    if s.kind == "check":
        return f"check({', '.join(ins)})"
    return f"{outs} = {s.kind}({', '.join(ins)})"


def _var_name(s) -> str:
    if s.var_arg:
        return f"<argument {s.var}>"
    return repr(s.var.name) if s.var.name else f"<variable id {s.var.id}>"


def _func_name(fn) -> str:
    return getattr(fn, "__qualname__", "draw").split(".<locals>")[0]


def _attr(a) -> str:
    if isinstance(a, np.dtype):
        return repr(str(a))
    if isinstance(a, np.ndarray):
        return f"array(shape={a.shape}, dtype={a.dtype})"
    text = repr(a)
    return text if len(text) <= 40 else text[:37] + "..."


def _comment(s) -> str:
    if s.note:
        return s.note
    if s.kind == "random":
        return "fresh values on every call"
    if s.kind == "read":
        return "read when the program runs"
    if s.kind == "assign":
        return "assigned on every call"
    if s.kind == "check":
        return f"{_func_name(s.draw)} runs on every call"
    if s.phase != "forward" or not s.source:
        return ""
    return _source_text(s.source)


def where(source) -> str:
    """``In [3], line 2`` in a notebook, ``train.py:12`` for a file."""
    file, line = source[0], source[1]
    cell = cell_number(file)
    return f"In [{cell}], line {line}" if cell is not None else f"{file.rsplit('/', 1)[-1]}:{line}"


def _source_text(source) -> str:
    code = linecache.getline(source[0], source[1]).strip()
    if len(code) > 60:
        code = code[:57] + "..."
    return f"{where(source)}: {code}" if code else where(source)


def _group_title(stmt) -> str:
    if stmt is None:
        return "(the seed)"
    return f"{stmt.kernel}" + (f"  ({where(stmt.source)})" if stmt.source else "")
