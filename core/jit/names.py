"""Readable, unique Python names for the values of a traced program.

In order of preference: the tensor's own ``name`` (``tv.tensor(..., name="w")``, a
Variable's), the function's parameter name, ``d<name>`` for a gradient (from the tapes'
backward steps: which input of which forward node it is the gradient of), the variable a
forward op's source line assigns to (``h = tv.tanh(x @ w)`` names the tanh ``h``), and
otherwise ``t<n>`` (``c<n>`` for constants).
"""

from __future__ import annotations

import ast
import keyword
import linecache
import unicodedata

__all__ = ["assign_names", "identifier"]

_RESERVED = {"np", "read", "assign", "draw", "out", "asarray", "map"}  # the code's own names


def identifier(text: str) -> str:
    """``text`` as a Python identifier (``"W0:grad"`` -> ``W0_grad``, ``"σ²"`` -> ``σ2``).

    Python reads identifiers in NFKC form (``ℓ`` is ``l``, ``ｒｅａｄ`` is ``read``), so the
    name is normalized first: two names are the same in the generated code exactly when
    they are the same here, and uniqueness is decided on what Python will see."""
    s = unicodedata.normalize("NFKC", str(text))
    s = "".join(c if ("a" + c).isidentifier() else "_" for c in s).strip("_") or "t"
    if not s.isidentifier():  # starts with a digit or a mark that only continues a name
        s = "t" + s
    if keyword.iskeyword(s) or s in _RESERVED:
        s += "_"
    return s


def assign_names(program, tensor_names: dict, tapes) -> None:
    """Set ``name`` of every value of ``program`` (``tensor_names``: tensor id -> name)."""
    by_tensor: dict[int, list] = {}
    for v in _values(program):
        by_tensor.setdefault(v.tensor_id, []).append(v)
    taken: dict[str, int] = {}
    program.param_names = [_unique(identifier(n), taken) for n in program.arg_names]
    for v in program.args:
        v.name = program.param_names[v.index]
    hints = {}
    for tid, name in tensor_names.items():
        for v in by_tensor.get(tid, ()):
            if v.kind != "arg" and name:
                hints[id(v)] = name
    _line_hints(program.stmts, hints)
    _gradient_hints(tapes, by_tensor, hints)
    counter = 0
    outputs_first = [v for v in program.outputs if id(v) in hints and v.kind != "arg"]
    for v in outputs_first + list(_values(program)):  # a result gets the plain name (dx)
        if v.kind == "arg" or v.name:
            continue
        base = hints.get(id(v))
        if base is None:
            base = f"{'c' if v.kind == 'const' else 't'}{counter}"
            counter += 1
        v.name = _unique(identifier(base), taken)


def _unique(name: str, taken: dict) -> str:
    n = taken.get(name)
    if n is None:
        taken[name] = 0
        return name
    while True:
        n += 1
        candidate = f"{name}_{n}"
        if candidate not in taken:
            taken[name] = n
            taken[candidate] = 0
            return candidate


def _values(program):
    seen = set()
    for v in program.args:
        seen.add(id(v))
        yield v
    for s in program.stmts:
        for v in (*s.ins, *s.outs):
            if id(v) not in seen:
                seen.add(id(v))
                yield v


def _gradient_hints(tapes, by_tensor, hints) -> None:
    """``d<x>`` for the gradient flowing to forward input ``x`` (the tapes' backward steps)."""
    for tape in tapes:
        nodes = {n.id: n for n in tape.nodes}
        for step in tape.backward_steps:
            node = nodes.get(step.node_id)
            if node is None:
                continue
            for name, g in [*step.grads.items(), *step.accumulated.items()]:
                x = node.inputs.get(name)
                xs, gs = by_tensor.get(getattr(x, "id", None)), by_tensor.get(g.id)
                if not xs or not gs or id(gs[0]) in hints:
                    continue
                xv, gv = xs[0], gs[0]
                base = hints.get(id(xv)) or (xv.name if xv.kind == "arg" else None) or x.name
                if base is None and xv.kind == "const":
                    continue  # the gradient of a constant: nothing reads it
                if base is not None:
                    hints[id(gv)] = "d" + identifier(base)


def _line_hints(stmts, hints) -> None:
    """A forward op's output is named by the assignment on its source line when it is the
    last op of one execution of that line (``h = tv.tanh(x @ w)`` names the tanh, not the
    matmul; ``y = tv.tanh(y) * w`` in a loop names each iteration's product)."""
    runs, key, lasti = [], None, -1
    for s in stmts:
        if s.phase != "forward" or s.kind != "kernel" or not s.source or not s.site:
            continue
        k = (s.source[0], s.source[1], s.site[0])
        if k != key or s.site[1] <= lasti:
            runs.append(s)
        else:
            runs[-1] = s
        key, lasti = k, s.site[1]
    for s in runs:
        target = _target(*s.source[:2])
        if target and len(s.outs) == 1 and id(s.outs[0]) not in hints:
            hints[id(s.outs[0])] = target


_TARGETS: dict = {}


def _target(file: str, line: int) -> str | None:
    key = (file, line)
    if key not in _TARGETS:
        _TARGETS[key] = _parse_target(linecache.getline(file, line).strip())
    return _TARGETS[key]


def _parse_target(text: str) -> str | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        target = stmt.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None
