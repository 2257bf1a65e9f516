"""numba: runs of elementwise arithmetic fused into one compiled loop, where it measurably wins.

On the numba backend, a run of consecutive kernel statements that are ``Add``, ``Sub``,
``Mul``, ``Div``, ``Neg``, ``Square`` or ``Abs`` on float arrays of one shape and dtype (or
0-d constants) becomes one ``@njit`` loop that reads each input once and writes only the
values used after the run. These operations are exact in IEEE arithmetic and the loop is
compiled without fast-math (no contraction into fused multiply-adds), so the fused loop gives
the separate kernels' results bit for bit. Transcendentals (exp, tanh, ...) are not fused:
numba calls scalar libm for them (llvmlite from PyPI has no SVML), slower than numpy's loops
and not bit-identical to them.

Whether to fuse is measured, per run, when the program is generated: the separate kernels and
the fused loop are timed on arrays of the run's shape (best of several), and the loop is
kept only when it is at least ``MIN_GAIN`` times faster. The decision, with the measured
ratio, is written as the statement's comment (``show_code`` shows it).
"""

from __future__ import annotations

import time

import numpy as np

from ..registry import kernel_names as K
from .ir import Stmt

__all__ = ["fuse", "MIN_GAIN"]

MIN_GAIN = 1.1  # the fused loop must be this much faster than the separate kernels
_OPS = {
    K.ADD: "{a} + {b}",
    K.SUB: "{a} - {b}",
    K.MUL: "{a} * {b}",
    K.DIV: "{a} / {b}",
    K.NEG: "-{x}",
    K.SQUARE: "{x} * {x}",
    K.ABS: "abs({x})",
}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_COMPILED: dict = {}  # loop source -> numba dispatcher
_DECIDED: dict = {}  # (loop source, shape, dtype) -> (fuse?, measured ratio)


def fuse(stmts: list, outputs: list) -> list:
    """``stmts`` with each fusable run that measures faster replaced by one ``fused`` Stmt."""
    out, run = [], []
    for s in stmts + [None]:
        if s is not None and _fusable(s) and (not run or _same_block(run[0], s)):
            run.append(s)
            continue
        out.extend(_decide(run, stmts, outputs) if len(run) > 1 else run)
        run = [s] if s is not None and _fusable(s) else []
        if s is not None and not run:
            out.append(s)
    return out


def _fusable(s) -> bool:
    if s.kind != "kernel" or s.prim.name not in _OPS or s.config.backend_name != "numba":
        return False
    o = s.outs[0]
    if len(s.outs) != 1 or o.dtype not in _FLOATS or not o.shape or 0 in o.shape:
        return False
    return all(v.dtype == o.dtype and v.shape in (o.shape, ()) for v in s.ins)


def _same_block(first, s) -> bool:
    return s.outs[0].shape == first.outs[0].shape and s.outs[0].dtype == first.outs[0].dtype


def _decide(run, stmts, outputs) -> list:
    made = {id(v) for s in run for v in s.outs}
    ins = []
    for s in run:
        for v in s.ins:
            if id(v) not in made and all(v is not w for w in ins):
                ins.append(v)
    after = stmts[stmts.index(run[-1]) + 1 :]
    used = {id(v) for s in after for v in s.ins} | {id(v) for v in outputs}
    outs = [v for s in run for v in s.outs if id(v) in used]
    if not outs:
        return run
    source = _loop_source(run, ins, outs)
    shape, dtype = run[0].outs[0].shape, run[0].outs[0].dtype
    key = (source, shape, dtype)
    if key not in _DECIDED:
        kernel = _compile(source)
        call = _caller(kernel, [v.shape == () for v in ins], shape, dtype, len(outs))
        _DECIDED[key] = _measure(run, ins, call, shape, dtype)
    wins, ratio = _DECIDED[key]
    if not wins:
        run[0].note = f"numba: not fused; {len(run)} kernels measured {ratio:.2f}x a fused loop"
        return run
    call = _caller(_compile(source), [v.shape == () for v in ins], shape, dtype, len(outs))
    kernels = ", ".join(s.kernel for s in run)
    note = f"numba loop fusing {kernels}: measured {ratio:.2f}x faster than separate kernels"
    fused = Stmt("fused", ins, outs, config=call, phase=run[0].phase, source=run[0].source)
    fused.grad_of, fused.parts, fused.note = run[0].grad_of, list(run), note
    return [fused]


def _loop_source(run, ins, outs) -> str:
    names = {id(v): f"x{i}" for i, v in enumerate(ins)}
    scalars = [f"    x{i} = in{i}[0]" for i, v in enumerate(ins) if v.shape == ()]
    body = [f"        x{i} = in{i}[i]" for i, v in enumerate(ins) if v.shape != ()]
    for k, s in enumerate(run):
        names[id(s.outs[0])] = f"y{k}"
        operands = dict(zip(s.keys, (names[id(v)] for v in s.ins)))
        body.append(f"        y{k} = {_OPS[s.prim.name].format(**operands)}")
    body += [f"        out{j}[i] = {names[id(v)]}" for j, v in enumerate(outs)]
    params = [f"in{i}" for i in range(len(ins))] + [f"out{j}" for j in range(len(outs))]
    return "\n".join(
        [f"def loop({', '.join(params)}):", *scalars, "    for i in range(out0.shape[0]):"] + body
    )


def _compile(source: str):
    kernel = _COMPILED.get(source)
    if kernel is None:
        import numba

        ns: dict = {}
        exec(compile(source, "<tv.jit fused loop>", "exec"), ns)
        # error_model numpy: x / 0 is inf or nan (as numpy), not ZeroDivisionError
        kernel = _COMPILED[source] = numba.njit(error_model="numpy", nogil=True)(ns["loop"])
    return kernel


def _caller(kernel, scalar, shape, dtype, n_out):
    """The fused loop on arrays: flat contiguous views in, fresh arrays of ``shape`` out."""

    def fused(*arrays):
        flat = [
            a.reshape(1) if s else np.ascontiguousarray(a).reshape(-1)
            for a, s in zip(arrays, scalar)
        ]
        outs = [np.empty(shape, dtype) for _ in range(n_out)]
        kernel(*flat, *[o.reshape(-1) for o in outs])
        return outs[0] if n_out == 1 else tuple(outs)

    fused.__qualname__ = "fused"
    return fused


def _measure(run, ins, call, shape, dtype) -> tuple:
    """(fuse?, separate time / fused time) on arrays of the run's shape, best of 5."""
    rng = np.random.default_rng(0)
    arrays = {id(v): rng.uniform(0.5, 1.5, v.shape).astype(dtype) for v in ins}
    args = [arrays[id(v)] for v in ins]

    def separate():
        vals = dict(arrays)
        for s in run:
            vals[id(s.outs[0])] = s.config.fn(
                {k: vals[id(v)] for k, v in zip(s.keys, s.ins)}, s.attrs
            )

    call(*args)  # compile
    times = [_best(separate), _best(lambda: call(*args))]
    ratio = times[0] / times[1]
    return ratio >= MIN_GAIN, ratio


def _best(fn, budget=0.02) -> float:
    fn()
    start, n = time.perf_counter(), 0
    while time.perf_counter() - start < budget / 5 or n < 3:
        fn()
        n += 1
    per = max((time.perf_counter() - start) / n, 1e-9)
    reps = max(1, int(budget / 5 / per))
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t) / reps)
    return best
