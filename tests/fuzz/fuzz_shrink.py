"""Shrink a failing program and write it out as a standalone script a user can paste.

Shrinking tries each statement alone (its operands' values become the leaves), then each
prefix of the program; the first that still fails the same way is the minimal case. The
script holds only the helpers the program names, the exact leaves, and the check.
"""

from __future__ import annotations

import ast
import inspect

import numpy as np
from fuzz_harness import HARNESS_TORCH, HARNESS_TV, _first, mismatch
from fuzz_mirrors import COMMON, NUMPY, TAPEVIZ, TORCH
from fuzz_program import (
    Program,
    array_literal,
    leaves_source,
    np_source,
    sub_program,
    torch_source,
    tv_source,
)
from fuzz_run import WRAPPERS, Failure, _dtype_maps, inputs, run_program


def shrink(fail: Failure) -> Failure:
    """The smallest sub-program of ``fail.prog`` failing the same mode the same way."""
    prog = fail.prog
    candidates = [sub_program(prog, only=k) for k in range(len(prog.stmts))]
    candidates += [sub_program(prog, upto=k) for k in range(1, len(prog.stmts))]
    for sub in candidates:
        try:
            found, _ = run_program(sub, ("value", fail.mode), fail.wrapper)
        except Exception:  # noqa: S112 - a candidate the harness cannot run is no smaller case
            continue
        for f in found:
            if f.mode == fail.mode and f.kind == fail.kind:
                return f
    return fail


def prune(prelude: str, used: str) -> str:
    """``prelude`` without the functions and constants that ``used`` never reaches."""
    tree = ast.parse(prelude)
    lines = prelude.splitlines()
    defs = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.Expr)):  # `X = ...`; `X(...)` belongs to X
            ctx = ast.Store if isinstance(node, ast.Assign) else ast.Load
            names = [t.id for t in ast.walk(node) if isinstance(t, ast.Name)
                     and isinstance(t.ctx, ctx)][:1 if ctx is ast.Load else None]  # fmt: skip
        else:
            names = []
        start = node.lineno - 1 - len(getattr(node, "decorator_list", []))
        defs[node] = (names, "\n".join(lines[start : node.end_lineno]))
    keep, text, changed = set(), used, True
    while changed:
        changed = False
        for node, (names, src) in defs.items():
            if node not in keep and (not names or any(_mentions(text, n) for n in names)):
                keep.add(node)
                text += "\n" + src
                changed = True
    out = []
    for node, (_names, src) in defs.items():
        if node in keep:
            gap = "\n\n" if isinstance(node, ast.FunctionDef) or (
                out and out[-1][0]) else ""  # fmt: skip
            out.append((isinstance(node, ast.FunctionDef), gap + src))
    return "\n".join(src for _, src in out).strip() + "\n"


def _mentions(text: str, name: str) -> bool:
    import re

    return re.search(rf"(?<![\w.]){re.escape(name)}\b", text) is not None


def script(fail: Failure) -> str:
    """A standalone script reproducing ``fail`` (tapeviz, numpy, scipy and torch only)."""
    prog, mode = fail.prog, fail.mode
    ws, us = inputs(prog)
    floats = prog.float_outputs
    last = floats[-1] if floats else None
    ref_dt, _ = _dtype_maps(prog)
    uses_torch = mode != "value"
    body = [leaves_source(prog), "", tv_source(prog)]
    if WRAPPERS[fail.wrapper][0]:
        body.append(WRAPPERS[fail.wrapper][0])
    body += ["", np_source(prog) if mode == "value" else torch_source(prog), ""]
    body += [f"ws = [{', '.join('None' if w is None else array_literal(w) for w in ws)}]",
             f"us = [{', '.join(array_literal(u) for u in us)}]",
             f"xs = [{', '.join(leaf.name for leaf in prog.leaves)}]",
             "plain = [x.numpy() for x in xs]",
             f"got = tv_modes(f, xs, {prog.diff}, ws, us, {last})[{mode!r}]()"]  # fmt: skip
    if uses_torch:
        body.append(f"want = th_modes(f_torch, plain, {prog.diff}, ws, us, {last}, {ref_dt})"
                    f"[{mode!r}]()")  # fmt: skip
        labels = [prog.leaves[i].name for i in prog.diff] if mode != "jvp" else ["J @ us"]
    else:
        body.append("want = f_np(*plain)")
        labels = [s.out for s in prog.stmts]
    body += [f"for name, g, w in zip({labels}, got, want):",
             "    print(name, 'tapeviz:', g, 'dtype', np.asarray(g).dtype)",
             "    print(name, 'oracle: ', w)",
             "    print(name, '->', mismatch(g, w, np.asarray(g).dtype) or 'agree')"]  # fmt: skip
    main = "\n".join(body)
    harness = HARNESS_TV + (HARNESS_TORCH if uses_torch else "")
    used = main + harness + inspect.getsource(mismatch)
    preludes = COMMON + TAPEVIZ + (TORCH if uses_torch else NUMPY)
    head = (f'"""tapeviz fuzz failure: {mode} ({fail.kind}) of {fail.where}: '
            f'{fail.message}\n(program seed {prog.seed}; wrapper {fail.wrapper})"""\n')  # fmt: skip
    checks = inspect.getsource(mismatch) + "\n\n" + inspect.getsource(_first)
    checks = checks.replace("ulps=ULPS", "ulps=16")
    return "\n".join([head, prune(preludes, used), harness, checks, "", main, ""])


def report(fail: Failure, limit: int = 4000) -> str:
    """One failure: its line and the minimal script."""
    small = shrink(fail)
    text = script(small)
    return (f"[{small.mode}/{small.kind}] seed {fail.prog.seed}: {small.where}: {small.message}\n"
            f"--- minimal script ---\n{text[:limit]}")  # fmt: skip


def summarize(failures: list[Failure]) -> str:
    by: dict = {}
    for f in failures:
        by.setdefault((f.mode, f.kind), []).append(f)
    return "\n".join(f"{m}/{k}: {len(v)} (seeds {sorted({f.prog.seed for f in v})[:8]})"
                     for (m, k), v in sorted(by.items()))  # fmt: skip


__all__ = ["shrink", "script", "report", "summarize", "Program", "np"]
