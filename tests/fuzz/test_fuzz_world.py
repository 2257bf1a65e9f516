"""The world fuzzer: ``tv.jit`` against eager tapeviz while the world changes between calls.

``fuzz_world`` draws, per seed, a program from the differential fuzzer's op tables and wraps
it in a world it perturbs between calls (rebound globals and closures behind every route,
closure tensors and their views and copies as arguments, ``copy`` inside the function,
``trainable`` flips, gradient overrides and re-registered kernels, backends, ``==``-equal
statics, Unicode names, many statics). ``fuzz_world_run`` runs each world eagerly and under
``tv.jit`` and compares every call bit for bit; a finding prints a standalone script.

``FUZZ_PROFILE=fast`` (``make test``: ``WORLD_FAST`` seeds, the classes in turn) or ``long``
(``make fuzz``: ``WORLD_LONG`` seeds from 100000, classes drawn); ``FUZZ_SEED`` and
``FUZZ_PROGRAMS`` pick another window.

Status: issue 33's tv.jit fixes have landed, so ``test_world_fast`` passes (88 of its 100
worlds reported a finding at c0e4053, before them), and each class test plants its defect
back (``PLANTS``: a context manager monkeypatching the fix out of ``core.jit``) and asserts
the fuzzer reports it on the seeds where c0e4053 showed it. Classes (issue 33's numbers;
seeds in ``SEEDED``, details in ``WORLD.md``): 1 alias (an argument merged with the closure
tensor it is), 2 rebinding behind nested jit / partial / callable / custom_grad / helpers
4-5 calls deep, 3 ``==`` closure numbers and statics (-0.0, NaN sign, ``(True,)``/``(1,)``),
4 ``copy.copy`` of an argument or a Variable, 5 ``trainable`` flips (``minimize``,
``jit(variable_grads)``, ``fit`` with a freezing callback), 6 each traced call's results
kept alive, 7 ``jit(hessian)`` of ``x ** 2`` refused, 8 names such as "σ²", "b₀", "ｒｅａｄ";
N1, ``jit(grad(f))`` refused where tapeviz's own gradient or tape code read a value
(cumprod, eigh, np.outer/np.cross with a constant, exp2, ``x ** 0``).

A new fix gets a new plant here, so the class test keeps proving the fuzzer finds it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from fuzz_world import CLASSES, Plan, draw_plan, program, world
from fuzz_world_run import Finding, compare, report, run_seed, same_bits, script, shrink

import tapeviz as tv

WORLD_FAST = 100  # seeds of the fast profile (10 per class; about 15 s on an idle 2-core machine)
WORLD_LONG = 3000


def window() -> tuple[str, range]:
    name = os.environ.get("FUZZ_PROFILE", "fast")
    n = int(os.environ.get("FUZZ_PROGRAMS") or (WORLD_LONG if name == "long" else WORLD_FAST))
    s0 = int(os.environ.get("FUZZ_SEED") or (100_000 if name == "long" else 0))
    return name, range(s0, s0 + n)


def run_window(name: str, seeds) -> tuple[list, float]:
    start, found = time.perf_counter(), []
    for seed in seeds:
        klass = CLASSES[seed % len(CLASSES)] if name == "fast" else None
        f = run_seed(seed, klass)
        if f is not None:
            found.append(f)
    return found, time.perf_counter() - start


def findings_text(found: list, limit: int = 4) -> str:
    by: dict = {}
    for f in found:
        by.setdefault(f.key() + (f.world.plan.route,), []).append(f)
    lines = [f"{k}: {len(v)} (seeds {[f.world.plan.seed for f in v][:8]})"
             for k, v in sorted(by.items())]  # fmt: skip
    firsts = {}
    for f in found:
        firsts.setdefault(f.key(), f)
    scripts = [report(f) for f in list(firsts.values())[:limit]]
    return "\n".join(lines) + "\n\n" + "\n\n".join(scripts)


def test_world_fast():
    """Every call of every world agrees bit for bit (fails on main until issue 33's tv.jit
    fixes land; see the module docstring for what it finds there)."""
    name, seeds = window()
    found, seconds = run_window(name, seeds)
    print(f"world fuzz {name}: {len(seeds)} worlds, {len(found)} findings in {seconds:.1f} s")
    assert not found, f"{len(found)} findings in {len(seeds)} worlds\n" + findings_text(found)


# --- each seeded class is found ---------------------------------------------------------------
def _never_stale():
    """Class 2/3: a compiled program is never stale (rebinding is not seen)."""
    from tapeviz.core.jit import compiled

    return _patched(compiled.Compiled, "stale", lambda self, fn, leaves: None)


def _raw_names():
    """Class 8: names go into the generated code as given."""
    from tapeviz.core.jit import names

    return _patched(names, "identifier", lambda text: str(text) or "t")


def _keep_results():
    """Class 6: every traced call's result is kept by the function."""
    from tapeviz.core.jit.function import JitFunction

    trace = JitFunction._trace

    def keeping(self, *a):
        out = trace(self, *a)
        self.__dict__.setdefault("_planted_kept", []).append(out)
        return out

    return _patched(JitFunction, "_trace", keeping)


@contextlib.contextmanager
def _merged_arguments():
    """Class 1: tensor arguments traced as themselves, programs not tied to them."""
    from tapeviz.core.jit import compiled, function

    def leaf(x, copies):
        return x if isinstance(x, tv.Tensor) else traced_leaf(x, copies)

    def no_aliases(self, leaves, traced):
        self.const_ids, self.copied, self.same = frozenset(), (), ()

    traced_leaf = function._traced_leaf
    with _patched(function, "_traced_leaf", leaf):
        with _patched(compiled.Compiled, "aliases", no_aliases):
            yield


def _equal_statics():
    """Class 3s: static values compared with ``==`` (0.0 is -0.0, 1 is 1.0 and True)."""
    from tapeviz.core.jit import pytree

    return _patched(pytree, "exact_key", lambda value: ("==", value))


def _baked_copies():
    """Class 4: ``copy.copy``/``deepcopy`` inside a trace make constants."""
    module = sys.modules["tapeviz.core.tensors.tensor"]  # (tapeviz.core.tensor is also a function)
    return _patched(module, "copied", lambda source, copy: copy)


def _flags_ignored():
    """Class 5: a program does not depend on its Variables' ``trainable`` flags."""
    from tapeviz.core.jit import compiled

    return _patched(compiled, "_flags", lambda stmts, traced: [])


@contextlib.contextmanager
def _reads_values():
    """Class 7 and N1: gradient code reads values under jit again (no constant folding, no
    kernel path, a Foreign tensor's copy made on its wrapped array)."""
    from tapeviz.core.jit import tracer
    from tapeviz.core.primitives import decomp, elementwise_binary, scan

    never = lambda t: False  # noqa: E731
    own = lambda self, t: setattr(t, "_data", t._data.copy())  # noqa: E731
    with contextlib.ExitStack() as stack:
        stack.enter_context(_patched(tracer, "FOLD_BYTES", -1))
        stack.enter_context(_patched(tracer.Tracer, "own", own))
        for module in (decomp, elementwise_binary, scan):
            stack.enter_context(_patched(module, "traced", never))
        yield


@contextlib.contextmanager
def _patched(obj, name, value):
    saved = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, saved)


# issue 33 class -> context manager factory that plants the defect (None: the defect is in
# today's code, nothing to plant; fill in when the fix lands). "3" is class 3 for closure
# and global numbers (the stale check), "3s" for static arguments (the cache key).
PLANTS = {"1": _merged_arguments, "2": _never_stale, "3": _never_stale, "3s": _equal_statics,
          "4": _baked_copies, "5": _flags_ignored, "6": _keep_results, "7": _reads_values,
          "8": _raw_names, "N1": _reads_values}  # fmt: skip
# issue 33 class -> (kind reported, [(world class, seed)] where main at c0e4053 shows it)
SEEDED = {
    "1": (None, [("alias", 14), ("alias", 17), ("alias", 0), ("alias", 3), ("alias", 34)]),
    "2": ("wrong", [("rebind", 0), ("rebind", 35), ("rebind", 26), ("rebind", 22),
                    ("rebind", 45), ("rebind", 41), ("rebind", 1)]),
    "3": ("wrong", [("rebind", 5), ("rebind", 32)]),
    "3s": ("wrong", [("static", 9), ("static", 27), ("static", 25), ("static", 43)]),
    "4": (None, [("copy", 3), ("copy", 0), ("copy", 15)]),  # (copy 1: deepcopy refused, N2)
    "5": ("wrong", [("trainable", 3), ("trainable", 0), ("trainable", 13)]),
    "6": ("memory", [("cache", 0), ("cache", 1)]),
    "7": ("refusal", [("hessian", 3), ("hessian", 0)]),
    "8": ("error", [("unicode", 10), ("unicode", 31), ("unicode", 25)]),
    "N1": ("refusal", [("rebind", 42), ("cache", 49)]),
}  # fmt: skip


@pytest.fixture
def planted():
    """``planted(c)``: the block runs with issue 33 class ``c``'s defect present."""

    def plant(c: str):
        make = PLANTS[c]
        return make() if make is not None else contextlib.nullcontext()

    return plant


@pytest.mark.parametrize("issue_class", sorted(SEEDED))
def test_seeded_class_is_found(issue_class, planted):
    """With class ``issue_class``'s defect present, the world fuzzer reports it on each of
    its seeds (a check that cannot fail is a defect: this is the plant)."""
    kind, worlds = SEEDED[issue_class]
    with planted(issue_class):
        found = [run_seed(s, klass, memory=kind == "memory") for klass, s in worlds]
    missed = [w for w, f in zip(worlds, found) if f is None or (kind and f.kind != kind)]
    assert not missed, f"class {issue_class} not reported on {missed}: {found}"


def test_planted_staleness_is_found_where_today_is_right():
    """The plant of class 2 on a world tv.jit gets right today (a global rebound 2.0 -> 3.0,
    read directly): without the plant no finding, with it the rebinding is reported."""
    prog = program(2)
    plan = Plan(2, "rebind", "direct", "values", "scale", (2.0, 3.0, 0.5))
    w = world(prog, plan)
    assert compare(w, memory=False) is None
    with _never_stale():
        f = compare(w, memory=False)
    assert f is not None and f.kind == "wrong" and f.step == 2, f


def test_planted_raw_names_are_found_where_today_is_right():
    """The plant of class 8 on names today's code turns into identifiers (spaces, a tab):
    without the plant no finding, with it the generated code breaks and that is reported."""
    names = ("my weight", "a b", "x\ty", "x one")
    w = world(program(2), Plan(2, "unicode", "direct", "grad", values=names, ref_kind="variable"))
    assert compare(w, memory=False) is None
    with _raw_names():
        f = compare(w, memory=False)
    assert f is not None and f.kind == "error" and "SyntaxError" in f.message, f


@pytest.mark.parametrize("klass", ["override", "backend", "rebind"])
def test_worlds_tv_jit_gets_right_today_agree(klass):
    """No false alarm: gradient overrides, re-registered kernels and gradients, backend
    switches, and rebinding read directly with values that are not ``==`` all agree today."""
    seeds = {"override": [0, 1, 2, 3, 5], "backend": [0, 1, 2], "rebind": [2, 6, 10]}[klass]
    for s in seeds:
        plan = draw_plan(s, klass)
        if klass == "rebind":
            plan = Plan(s, "rebind", "direct", plan.top, "scale", (2.0, 3.0, -1.5))
        f = compare(world(program(s), plan), memory=False)
        assert f is None, f.line()


def test_worlds_are_deterministic():
    for s in (0, 7, 23):
        a, b = world(program(s), draw_plan(s)), world(program(s), draw_plan(s))
        assert (a.setup, a.steps) == (b.setup, b.steps)


def test_same_bits():
    z, nz = np.array([0.0]), np.array([-0.0])
    assert same_bits(z, z) and not same_bits(z, nz)
    nan, neg_nan = np.array([np.nan]), -np.array([np.nan])
    assert same_bits(nan, np.array([float("nan")])) and not same_bits(nan, neg_nan)
    assert not same_bits(np.array([1.0], np.float32), np.array([1.0]))
    assert not same_bits(np.array([1], np.int32), np.array([True]))
    assert same_bits(np.array([1.5, np.inf]), np.array([1.5, np.inf]))


_STALE_PLANT = """import numpy as np
from tapeviz.core.jit import compiled
compiled.Compiled.stale = lambda self, fn, leaves: None  # the planted class-2 defect"""


def test_a_finding_shrinks_and_its_script_runs_standalone(tmp_path):
    """The reproducer of a class-2 finding is a script that imports only numpy and tapeviz
    and prints the differing call; the shrunk world keeps the class and the kind."""
    with _never_stale():
        f = run_seed(26, "rebind", memory=False)
        assert isinstance(f, Finding) and f.kind == "wrong"
        small = shrink(f)
    assert small.kind == "wrong" and len(small.world.steps) <= len(f.world.steps)
    path = tmp_path / "repro.py"
    path.write_text(script(small).replace("import numpy as np", _STALE_PLANT, 1))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "eager" in out.stdout and "same bits" in out.stdout, out.stdout
