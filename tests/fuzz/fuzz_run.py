"""Run fuzz programs in every mode against the oracles; profiles; the wrapper hook.

``WRAPPERS`` is the hook for program transformations: each entry maps a name to a function
applied to every program's tapeviz function before any mode runs it (``"eager"``: the
function itself). ``tv.jit`` (issue 26) joins as one more entry; the failure's script then
shows ``f = tv.jit(f)``. Select wrappers with ``FUZZ_WRAPPERS=eager,jit``.
"""

from __future__ import annotations

import os
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np
from fuzz_harness import HARNESS_TORCH, HARNESS_TV, MODES, ULPS, low, mismatch, rounding
from fuzz_mirrors import COMMON, NUMPY, TAPEVIZ, TORCH
from fuzz_program import Program, leaves_source, torch_source, tv_source

import tapeviz as tv

WRAPPERS = {"eager": ("", lambda f: f)}  # name -> (source line, function wrapper)
if hasattr(tv, "jit"):  # issue 26: the same programs, traced and run as straight-line code
    WRAPPERS["jit"] = ("f = tv.jit(f)", tv.jit)


@dataclass(frozen=True)
class Profile:
    name: str
    programs: int
    seed0: int = 0
    max_stmts: int = 4
    special: float = 0.35  # share of programs whose values include special points
    dtypes: dict = field(
        default_factory=lambda: {"float64": 0.7, "float32": 0.15, "float16": 0.04,
                                 "int32": 0.07, "bool": 0.04})  # fmt: skip
    variables: float = 0.3  # share of leaves that are Variables
    chain: float = 0.7  # chance an operand reuses an earlier value
    max_size: int = 64
    modes: tuple = MODES


PROFILES = {
    "fast": Profile("fast", programs=300),
    "long": Profile("long", programs=6000, seed0=100_000, max_stmts=6),
}


def profile_from_env(default: str = "fast") -> Profile:
    p = PROFILES[os.environ.get("FUZZ_PROFILE", default)]
    n = os.environ.get("FUZZ_PROGRAMS")
    seed0 = os.environ.get("FUZZ_SEED")
    if n or seed0:
        p = Profile(**{**p.__dict__, "programs": int(n or p.programs),
                       "seed0": int(seed0 or p.seed0)})  # fmt: skip
    return p


def wrappers_from_env() -> list[str]:
    names = os.environ.get("FUZZ_WRAPPERS", ",".join(WRAPPERS)).split(",")
    return [n for n in names if n]


@dataclass
class Failure:
    mode: str
    wrapper: str
    kind: str  # "wrong", "dtype", "crash", "mirror" (a harness error), "oracle"
    where: str
    message: str
    prog: Program

    def key(self) -> tuple:
        return (self.mode, self.kind, self.prog.signature())


_BASE: dict = {}


def _base(which: str) -> dict:
    if not _BASE:
        for name, text in [("tv", COMMON + TAPEVIZ + HARNESS_TV), ("np", COMMON + NUMPY),
                           ("th", COMMON + NUMPY + TORCH + HARNESS_TORCH)]:  # fmt: skip
            ns: dict = {}
            exec(text, ns)  # noqa: S102 - the fuzzer's own source text
            _BASE[name] = ns
    return _BASE[which]


def inputs(prog: Program):
    """The fixed random w (per float value), u (per float leaf) of a program."""
    rng = np.random.default_rng([prog.seed, 7])
    # each rounded to its value's (leaf's) dtype: tapeviz and PyTorch get the same numbers
    ws = [rng.uniform(0.5, 1.5, v.shape).astype(v.dtype).astype(np.float64)
          if v.dtype.kind == "f" else None
          for v in (prog.values[s.out] for s in prog.stmts)]  # fmt: skip
    us = [rng.uniform(-1, 1, prog.leaves[i].value.shape).astype(prog.leaves[i].value.dtype)
          .astype(np.float64) for i in prog.diff]  # fmt: skip
    return ws, us


def _loss_is_nan(prog: Program) -> bool:
    """Whether the loss the derivative modes differentiate (sum of each float output times
    its ``w``, in float64 from the numpy mirror's values) is NaN."""
    ws, _ = inputs(prog)
    with np.errstate(all="ignore"):
        total = sum(float(np.sum(np.asarray(prog.values[s.out], np.float64) * w))
                    for s, w in zip(prog.stmts, ws) if w is not None)  # fmt: skip
    return bool(np.isnan(total))


def _exec(text: str, base: str) -> dict:
    ns = dict(_base(base))
    exec(text, ns)  # noqa: S102
    return ns


def _dtype_maps(prog: Program):
    names = {str(v.dtype) for v in prog.values.values()}
    ref = {n: ("float64" if n in ("float16", "float32", "float64") else n) for n in names}
    est = {n: low(n) for n in names}
    return ref, est


def run_program(prog: Program, modes=MODES, wrapper: str = "eager") -> tuple[list, dict]:
    """Run ``prog`` in ``modes``; returns (failures, counts of outcomes)."""
    counts: dict = {}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(prog, modes, wrapper, counts), counts


def _run(prog, modes, wrapper, counts):
    failures = []
    tv_ns = _exec(leaves_source(prog) + "\n" + tv_source(prog), "tv")
    f = WRAPPERS[wrapper][1](tv_ns["f"])
    xs = [tv_ns[leaf.name] for leaf in prog.leaves]
    th_ns = _exec(torch_source(prog), "th")
    ws, us = inputs(prog)
    floats = prog.float_outputs
    last = floats[-1] if floats else None
    ref_dt, est_dt = _dtype_maps(prog)
    plain = [leaf.value for leaf in prog.leaves]
    ref = th_ns["th_modes"](th_ns["f_torch"], plain, prog.diff, ws, us, last, ref_dt)
    est = th_ns["th_modes"](th_ns["f_torch"], plain, prog.diff, ws, us, last, est_dt)
    ours = tv_ns["tv_modes"](f, xs, prog.diff, ws, us, last)
    for mode in modes:
        if mode != "value" and (not prog.diff or last is None):
            continue
        fail = lambda kind, where, msg: failures.append(  # noqa: E731
            Failure(mode, wrapper, kind, where, msg, prog)
        )
        try:
            want = ref[mode]() if mode != "value" else [prog.values[s.out] for s in prog.stmts]
        except Exception:
            counts["oracle refused"] = counts.get("oracle refused", 0) + 1
            continue
        try:
            got = ours[mode]()
        except Exception as e:
            kind = "refused" if mode == "value" and _clear(e) else "crash"
            counts[kind] = counts.get(kind, 0) + 1
            if kind == "crash":
                fail("crash", "", _exc_line(e))
            break  # later modes would repeat it
        try:
            lowp = est[mode]() if mode != "value" else None
        except Exception:
            lowp = None
        counts["compared"] = counts.get("compared", 0) + 1
        _compare(prog, mode, got, want, lowp, ref if mode == "value" else None, fail)
    return failures


def _clear(e: Exception) -> bool:
    """A refusal that names what is wrong (tapeviz's errors for unsupported input)."""
    return isinstance(e, (TypeError, ValueError, NotImplementedError, tv.KernelError,
                          tv.NumpyDispatchError)) and not isinstance(e, AttributeError)  # fmt: skip


def _exc_line(e: Exception) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    here = next((f"{fr.filename.split('/')[-1]}:{fr.lineno}" for fr in reversed(tb)
                 if "/core/" in fr.filename), "?")  # fmt: skip
    return f"{type(e).__name__}: {str(e)[:300]} [{here}]"


def _compare(prog, mode, got, want, lowp, ref, fail):
    if mode == "value":
        labels = [s.out for s in prog.stmts]
        dtypes = [s.dtype for s in prog.stmts]
        try:
            th = ref["value"]() if ref is not None else None
        except Exception:  # PyTorch refuses what numpy computes: only the mirror check is lost
            th = None
    elif mode == "jvp":
        labels, dtypes = (
            [prog.stmts[prog.float_outputs[-1]].out],
            [prog.stmts[prog.float_outputs[-1]].dtype],
        )
    else:
        labels = [prog.leaves[i].name for i in prog.diff]
        dtypes = [prog.leaves[i].value.dtype for i in prog.diff]
    floats = [v.dtype for v in prog.values.values() if v.dtype.kind == "f"]
    all64 = all(d == np.float64 for d in floats)
    # a program that rounds to float32 or float16 anywhere is judged at that precision
    lowest = max(floats, key=lambda d: np.finfo(d).eps) if floats else np.dtype(np.float64)
    nan_loss = mode not in ("value", "jvp") and _loss_is_nan(prog)
    for k, (g, w, dt, name) in enumerate(zip(got, want, dtypes, labels)):
        g = np.asarray(g)
        if g.dtype != dt:
            fail("dtype", name, f"dtype {g.dtype}, expected {dt}")
            return
        prec = lowest if dt.kind == "f" and np.finfo(lowest).eps > np.finfo(dt).eps else dt
        err = None
        if mode != "value" and lowp is not None:
            err = rounding(lowp[k], w, prec, np.dtype(low(prec)) if all64 else prec)
        if mode == "value" and th is not None and dt.kind == "f":
            err = rounding(w, th[k], prec, prec) if not all64 else None
            if all64 and (why := mismatch(w, th[k], dt)):  # the mirrors disagree
                fail("mirror", name, f"numpy mirror vs PyTorch mirror: {why}")
                return
        dt = prec
        nan_ok = mode != "value" and "nan-sign" in prog.tags
        if mode == "jvp":  # where the value is NaN (no value), its derivative may be NaN too
            nan_ok = nan_ok | np.isnan(np.asarray(prog.values[name], np.float64))
        elif mode != "value":  # at a NaN or infinite input element: no derivative, nor
            # anywhere when the loss itself is NaN (the formulas differ in what they make of
            # a NaN: PyTorch's elu passes dy through it, as if it were positive)
            nan_ok = nan_ok | ~np.isfinite(np.asarray(prog.leaves[prog.diff[k]].value, float))
            nan_ok = nan_ok | nan_loss
        ulps = max(s.op.ulps for s in prog.stmts) if prog.stmts else ULPS
        why = mismatch(g, w, dt, err, nan_ok=nan_ok, ulps=ulps,
                       number_ok=mode != "value" and "exact-limit" in prog.tags)  # fmt: skip
        if why:
            fail("wrong", name, why)
            return
