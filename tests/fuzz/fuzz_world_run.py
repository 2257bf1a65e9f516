"""Run a world (``fuzz_world``) eagerly and under ``tv.jit``; compare every call bit for bit.

Each world runs twice from its source, in a fresh namespace: ``JIT = False`` (every ``jit``
in it is the identity, ``minimize(jit=False)``: eager tapeviz) and ``JIT = True``. After each
step the value of ``out`` is copied (``snapshot``): tensors as numpy arrays with their type,
containers as containers. Two calls agree when their snapshots have the same structure and
every array the same dtype, shape and bits (``same_bits``: ``-0.0`` is not ``0.0``; a NaN
equals a NaN of the same sign and quiet bit). A step that raises in one world and not in the
other is a finding, except a refusal (``ConcretizationError``, ``OpaqueFunctionError``) of a
program that ``tv.jit`` refuses without any change of the world too (the documented limit:
the base world, one plain call, refuses as well). After the last step the runner counts the
tensors that calls returned and the world still keeps alive once the caller dropped them:
eager keeps none, so a jitted function that keeps more is a finding (``memory``).
"""

from __future__ import annotations

import gc
import inspect
import warnings
import weakref
from dataclasses import dataclass, replace

import numpy as np
from fuzz_program import Program, sub_program
from fuzz_world import World, draw_plan, program, world

import tapeviz as tv

REFUSALS = ("ConcretizationError", "OpaqueFunctionError")


@dataclass
class Finding:
    world: World
    kind: str  # "wrong" (values or structure differ), "error", "refusal", "memory"
    step: int  # the step where eager and jit first disagree (-1: after the last)
    message: str

    def key(self) -> tuple:
        p = self.world.plan
        return (p.klass, self.kind)

    def line(self) -> str:
        p = self.world.plan
        return (f"[{p.klass}/{self.kind}] seed {p.seed} route {p.route} top {p.top} "
                f"variant {p.variant or '-'}: step {self.step}: {self.message}")  # fmt: skip


# --- snapshots and the bitwise comparison (pasted into every reproducer script) --------------
def snapshot(x, depth=0):
    """A copy of ``x``: tensors as ``(kind, array)``, containers recursively."""
    if depth > 8:
        return ("deep", type(x).__name__)
    if hasattr(x, "_data") and hasattr(x, "numpy"):  # a tapeviz Tensor or Variable
        kind = "Variable" if hasattr(x, "trainable") else "Tensor"  # (Foreign is a Tensor)
        return (kind, np.array(x.numpy(), copy=True))
    if isinstance(x, np.ndarray):
        return ("ndarray", np.array(x, copy=True))
    if isinstance(x, dict):
        items = [(str(k), snapshot(v, depth + 1)) for k, v in x.items()]
        return ("dict " + type(x).__name__, items)
    if isinstance(x, (list, tuple)):
        return ("seq " + type(x).__name__, [snapshot(v, depth + 1) for v in x])
    if isinstance(x, (int, float, bool, complex, str, type(None))):
        return ("py", type(x).__name__, np.array(x) if isinstance(x, float) else repr(x))
    return ("object", type(x).__name__)


def same_bits(a, b) -> bool:
    """The same dtype, shape and bits; NaNs equal when their sign and quiet bit are."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return a.tobytes() == b.tobytes()
    ua = a.view(f"u{a.dtype.itemsize}")
    ub = b.view(f"u{a.dtype.itemsize}")
    an, bn = np.isnan(a), np.isnan(b)
    if (an != bn).any():
        return False
    nbits = 8 * a.dtype.itemsize
    cls = np.array((1 << (nbits - 1)) | (1 << (np.finfo(a.dtype).nmant - 1)), ua.dtype)
    return bool((ua[~an] == ub[~an]).all() and ((ua[an] & cls) == (ub[an] & cls)).all())


def difference(e, j, where="out", close=False) -> str | None:
    """Where snapshots ``e`` (eager) and ``j`` (jit) first differ, or None (``close``: floats
    within 256 ulps count as the same, for a documented rounding difference)."""
    if e[0] != j[0] or len(e) != len(j):
        return f"{where}: eager gives {e[0]}, jit gives {j[0]}"
    if e[0] == "py":
        if e[1] != j[1] or not same_bits(e[2], j[2]):
            return f"{where}: eager {e[1]} {e[2]!r}, jit {j[1]} {j[2]!r}"
        return None
    if e[0] in ("Tensor", "Variable", "ndarray"):
        if not (same_bits(e[1], j[1]) or (close and _close(e[1], j[1]))):
            return (f"{where} ({e[0]}): eager {e[1].dtype}{list(e[1].shape)} {e[1]!r}, "
                    f"jit {j[1].dtype}{list(j[1].shape)} {j[1]!r}")  # fmt: skip
        return None
    if e[0].startswith(("dict", "seq")):
        if len(e[1]) != len(j[1]):
            return f"{where}: eager has {len(e[1])} items, jit {len(j[1])}"
        for k, (x, y) in enumerate(zip(e[1], j[1])):
            if e[0].startswith("dict"):
                if x[0] != y[0]:
                    return f"{where}: eager key {x[0]!r}, jit key {y[0]!r}"
                why = difference(x[1], y[1], f"{where}[{x[0]!r}]", close)
            else:
                why = difference(x, y, f"{where}[{k}]", close)
            if why:
                return why
        return None
    return None if e == j else f"{where}: eager {e!r}, jit {j!r}"


# --- running -------------------------------------------------------------------------------
def run_world(setup: str, steps: list, jit: bool) -> tuple[list, int]:
    """Run the world (``jit``: with ``JIT = True``): each step's outcome, and how many of the
    tensors the calls returned are alive after the last step once ``out`` is dropped."""
    ns = {"JIT": jit, "__name__": "world"}
    outcomes, refs = [], []
    backend = tv.get_backend()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(setup, "<world>", "exec"), ns)  # noqa: S102 - the fuzzer's own source
            for step in steps:
                outcomes.append(_step(step, ns, refs))
        except Exception as e:  # the setup itself failed (both worlds do the same)
            outcomes.append(("error", type(e).__name__, str(e)[:200]))
        finally:
            for undo in reversed(ns.get("CLEANUP", [])):
                undo()
            tv.set_backend(backend)
        alive = sum(r() is not None for r in refs)
        if alive:  # held in a reference cycle, or really kept? (a collection costs ~0.1 s)
            gc.collect()
            alive = sum(r() is not None for r in refs)
    return outcomes, alive


def _step(step: str, ns: dict, refs: list):
    try:
        exec(compile(step, "<step>", "exec"), ns)  # noqa: S102
    except Exception as e:
        return ("error", type(e).__name__, str(e)[:300])
    out = ns.pop("out", None)
    if out is None:
        return ("none",)
    refs += _weak_tensors(out)
    return ("ok", snapshot(out))


def _weak_tensors(x, depth=0) -> list:
    if isinstance(x, tv.Tensor):
        return [weakref.ref(x)] if type(x) is tv.Tensor else []
    if isinstance(x, dict) and depth < 8:
        return [r for v in x.values() for r in _weak_tensors(v, depth + 1)]
    if isinstance(x, (list, tuple)) and depth < 8:
        return [r for v in x for r in _weak_tensors(v, depth + 1)]
    return []


def compare(w: World, memory: bool = True) -> Finding | None:
    """Run ``w`` eagerly and jitted: the first disagreement, or None (``memory``: also
    compare how many returned tensors each world keeps alive)."""
    eager, e_alive = run_world(w.setup, w.steps, False)
    jitted, j_alive = run_world(w.setup, w.steps, True)
    for k, (e, j) in enumerate(zip(eager, jitted)):
        if e[0] == "error" and j[0] == "error":
            continue  # both refuse (messages may differ: tv.jit names itself)
        if j[0] == "error":
            if j[1] in REFUSALS and (_documented(w) or _base_refuses(w)):
                return None  # the program is beyond tv.jit whatever the world does
            kind = "refusal" if j[1] in REFUSALS else "error"
            return Finding(w, kind, k, f"eager runs, jit raises {j[1]}: {j[2]}")
        if e[0] == "error":
            return Finding(w, "error", k, f"jit runs, eager raises {e[1]}: {e[2]}")
        if e[0] == "ok":
            why = difference(e[1], j[1], close=_rounds(w))
            if why:
                return Finding(w, "wrong", k, why)
    if len(eager) != len(jitted):
        return Finding(w, "error", min(len(eager), len(jitted)) - 1, "the setup failed in one")
    if memory and j_alive > e_alive:
        return Finding(w, "memory", -1, f"after the calls, jit keeps {j_alive} returned "
                       f"tensor(s) alive that the caller dropped (eager {e_alive})")  # fmt: skip
    return None


def _close(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape or a.dtype.kind != "f":
        return False
    rtol = 256 * np.finfo(a.dtype).eps  # 5.7e-14 in float64, 3.1e-5 in float32
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True))


def _rounds(w: World) -> bool:
    """Whether the README lets jit round differently here: cumprod's gradient is the
    division-free product under tv.jit (eager divides when it can)."""
    return any(s.op.name == "cumprod" for s in w.prog.stmts)


_OUTSIDE_KERNELS = {"argmax", "argmin", "sort"}  # the README: "computed outside kernels"


def _documented(w: World) -> bool:
    """Whether the program differentiates an op whose gradient the README lists as a
    refusal under tv.jit ("the gradient of prod, and of pow with a tensor exponent"), or
    uses an op the README says is computed outside kernels (argmax, sort: refused on a
    traced value)."""
    return any(s.op.name in ("prod", *_OUTSIDE_KERNELS)
               or (s.op.name == "pow" and isinstance(s.args[1], str))
               for s in w.prog.stmts)  # fmt: skip


def _base_refuses(w: World) -> bool:
    """Whether tv.jit refuses this program in the plainest world (one direct call)."""
    base = world(w.prog, replace(w.plan, klass="rebind", route="direct", top="values",
                                 variant="ref", values=(2.0,)))  # fmt: skip
    out, _ = run_world(base.setup, base.steps[:1], True)
    return out[0][0] == "error" and out[0][1] in REFUSALS


def run_seed(seed: int, klass: str | None = None, memory: bool = True) -> Finding | None:
    """Draw the seed's program and plan (``klass``: that class) and compare."""
    return compare(world(program(seed), draw_plan(seed, klass)), memory)


# --- shrinking and the reproducer -------------------------------------------------------------
def shrink(f: Finding) -> Finding:
    """A smaller world failing the same way: fewer program statements, then fewer steps."""
    w = f.world
    progs = [Program(w.prog.seed, w.prog.leaves[:1])]
    progs += [sub_program(w.prog, upto=k) for k in range(1, len(w.prog.stmts))]
    for p in progs:
        if not hasattr(p, "values"):
            p.values = {leaf.name: leaf.value for leaf in p.leaves}
        g = _same_way(world(p, w.plan), f)
        if g is not None:
            f, w = g, g.world
            break
    steps = w.steps[: f.step + 1] if f.step >= 0 else w.steps
    g = _same_way(World(w.plan, w.prog, w.setup, steps), f)
    f, steps = (g, steps) if g is not None else (f, w.steps)
    k = 0
    while k < len(steps) - 1:
        fewer = steps[:k] + steps[k + 1 :]
        g = _same_way(World(w.plan, w.prog, w.setup, fewer), f)
        if g is not None:
            f, steps = g, fewer
        else:
            k += 1
    return f


def _same_way(w: World, f: Finding) -> Finding | None:
    try:
        g = compare(w, memory=f.kind == "memory")
    except Exception:
        return None
    return g if g is not None and g.kind == f.kind else None


def script(f: Finding) -> str:
    """A standalone script: the world's source, run eagerly and under tv.jit, compared."""
    w = f.world
    assert "'''" not in w.setup and all("'''" not in s for s in w.steps)  # noqa: S101
    steps = ",\n".join(f"    r'''{s}'''" for s in w.steps)
    head = f'"""tapeviz world-fuzz finding: {f.line()}"""'.replace("\\", "\\\\")
    helpers = "\n\n".join(inspect.getsource(fn) for fn in (snapshot, same_bits, difference))
    return f"""{head}
import numpy as np

WORLD = r'''{w.setup}'''

STEPS = [
{steps},
]


{helpers}

def run(jit):
    ns = {{"JIT": jit}}
    exec(WORLD, ns)
    outs = []
    try:
        for step in STEPS:
            try:
                exec(step, ns)
                outs.append(("ok", snapshot(ns.pop("out"))) if "out" in ns else ("none",))
            except Exception as e:
                outs.append(("error", f"{{type(e).__name__}}: {{e}}"))
    finally:
        for undo in reversed(ns["CLEANUP"]):
            undo()
        ns["tv"].set_backend("numpy")
    return outs


for k, (e, j) in enumerate(zip(run(False), run(True))):
    if e[0] == "ok" and j[0] == "ok":
        print(k, "->", difference(e[1], j[1]) or "same bits")
    elif e[0] != "none" or j[0] != "none":
        print(k, "eager:", e[1:], "jit:", j[1:])
"""


def report(f: Finding, limit: int = 6000) -> str:
    small = shrink(f)
    return f"{f.line()}\n--- minimal script ({small.line()}) ---\n{script(small)[:limit]}"


__all__ = ["Finding", "compare", "run_seed", "run_world", "shrink", "script", "report", "survey"]


def survey(seeds, klass: str | None = None, memory: bool = True) -> dict:
    """Findings of ``seeds`` grouped by (class, kind, route, variant): {group: [findings]}."""
    groups: dict = {}
    for seed in seeds:
        f = run_seed(seed, klass, memory)
        if f is not None:
            p = f.world.plan
            groups.setdefault((p.klass, f.kind, p.route, p.variant), []).append(f)
    return groups


if __name__ == "__main__":
    # python tests/fuzz/fuzz_world_run.py [class|all] [seeds] [seed0]: findings by group
    # python tests/fuzz/fuzz_world_run.py script CLASS SEED: the minimal reproducer script
    import os
    import sys

    if sys.argv[1:2] == ["script"]:
        f = run_seed(int(sys.argv[3]), sys.argv[2], memory=sys.argv[2] == "cache")
        print(script(shrink(f)) if f else "no finding")
        sys.exit(0)
    k = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "all" else None
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    s0 = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    mem = os.environ.get("WORLD_MEMORY", "1") == "1"
    for g, fs in sorted(survey(range(s0, s0 + n), k, mem).items()):
        print(g, len(fs), "seeds", [f.world.plan.seed for f in fs][:10], "|", fs[0].message[:200])
