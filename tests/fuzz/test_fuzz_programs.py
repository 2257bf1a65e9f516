"""The differential fuzzer: random programs over the public API against numpy and PyTorch
in every mode (value and dtype, gradient, HVP reverse-over-reverse and forward-over-reverse,
jvp), for every wrapper (``fuzz_run.WRAPPERS``).

``FUZZ_PROFILE=fast`` (the default, in ``make test``) or ``long`` (``make fuzz``);
``FUZZ_SEED`` / ``FUZZ_PROGRAMS`` pick another window of seeds. A failure prints, per class,
the minimal standalone script that reproduces it.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import warnings

import fuzz_ops
import fuzz_ops_more  # noqa: F401 - fills fuzz_ops.OPS
import numpy as np
import pytest
from fuzz_gen import Generator
from fuzz_program import Leaf, Program, Stmt
from fuzz_run import profile_from_env, run_program, wrappers_from_env
from fuzz_shrink import report, script, shrink, summarize

import tapeviz as tv

PROFILE = profile_from_env()
OPS = fuzz_ops.OPS


def run_profile(profile, ops=OPS, wrappers=None, shrink_limit=12):
    """Every program of ``profile`` under every wrapper: (failures, counts, seconds)."""
    gen = Generator(ops, profile)
    failures, counts, start = [], {"programs": 0}, time.perf_counter()
    for seed in range(profile.seed0, profile.seed0 + profile.programs):
        prog = gen.program(seed)
        for wrapper in wrappers or wrappers_from_env():
            found, c = run_program(prog, profile.modes, wrapper)
            failures += found
            counts["programs"] += 1
            for k, v in c.items():
                counts[k] = counts.get(k, 0) + v
    return failures, counts, time.perf_counter() - start


def _failure_text(failures, counts, seconds, limit=8) -> str:
    seen, parts = set(), []
    for f in failures:
        small = shrink(f)
        key = (small.mode, small.kind, small.prog.signature())
        if key not in seen and len(parts) < limit:
            seen.add(key)
            parts.append(report(f))
    return (f"{len(failures)} failures in {counts} ({seconds:.0f} s)\n{summarize(failures)}\n\n"
            + "\n\n".join(parts))  # fmt: skip


def test_programs_agree_with_numpy_and_pytorch():
    failures, counts, seconds = run_profile(PROFILE)
    print(f"fuzz profile {PROFILE.name}: {counts} in {seconds:.1f} s")
    assert counts.get("compared", 0) > PROFILE.programs, counts  # the modes really ran
    assert not failures, _failure_text(failures, counts, seconds)


def test_every_op_and_form_is_drawn():
    """The generator reaches every op of the table in every call form (over 3000 seeds)."""
    from fuzz_run import Profile

    gen = Generator(OPS, Profile("coverage", programs=0))
    drawn = set()
    for seed in range(3000):
        drawn |= {(s.op.name, s.form) for s in gen.program(seed).stmts}
    missing = {(op.name, k) for op in OPS for k in range(len(op.forms))} - drawn
    assert not missing, f"never drawn: {sorted(missing)}"


def _one(op_name, *leaves, **params):
    op = next(o for o in OPS if o.name == op_name)
    prog = Program(0, [Leaf(f"x{i}", np.asarray(v)) for i, v in enumerate(leaves)])
    stmt = Stmt("v9", op, 0, [leaf.name for leaf in prog.leaves], params, np.dtype("float64"))
    prog.stmts.append(stmt)
    prog.values = {leaf.name: leaf.value for leaf in prog.leaves}
    prog.values["v9"] = np.asarray(eval(op.np.format(a="x0", b="x1"), {"np": np, **prog.values}))
    stmt.cdtype = "float64"
    return prog


def test_a_planted_wrong_gradient_is_found_in_every_mode():
    """A check that cannot fail is a defect: a wrong Exp gradient fails grad, both HVPs
    and jvp; the failure shrinks to the one statement and its script runs standalone."""

    def wrong(dy, saved, attrs):
        (y,) = saved
        return {"x": lambda: dy * y * 1.5}

    prog = _one("exp", np.array([0.3, -1.2, 2.0]))
    before = {f.mode for f in run_program(prog)[0]}  # hvp_tape: issue 22 class 8 until fixed
    assert before <= {"hvp_tape"}, before
    with tv.gradient_override("Exp", wrong):
        found, _ = run_program(prog)
    assert {f.mode for f in found} == {"grad", "hvp_rr", "hvp_fr", "hvp_tape", "jvp"}, found
    assert all(f.kind == "wrong" for f in found)


@contextlib.contextmanager
def _planted_kernel(name, fn):
    saved = tv.get_kernel(name, "numpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tv.register_kernel(name, "numpy", fn)
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tv.register_kernel(name, "numpy", saved.fn, delegates_to=saved.delegates_to)


def test_a_wrong_forward_value_and_dtype_are_found():
    prog = _one("exp", np.array([1.0, 2.0]))
    assert run_program(prog, ("value",))[0] == []
    with _planted_kernel("Exp", lambda i, a: np.exp(i["x"]) * 1.001):
        (f,) = run_program(prog, ("value",))[0]
    assert f.kind == "wrong" and f.where == "v9", f
    with _planted_kernel("Exp", lambda i, a: np.exp(i["x"]).astype(np.float32)):
        (f,) = run_program(prog, ("value",))[0]
    assert f.kind == "dtype" and "float32, expected float64" in f.message, f


def test_a_failure_script_runs_standalone(tmp_path):
    """The script of a failure imports nothing from the tests and shows both answers."""
    prog = _one("mul", np.array([[0.5, -1.0]]), np.array([2.0, 3.0]))
    (f,) = [x for x in run_program(prog)[0] if x.mode == "grad"] or [None]
    assert f is None  # a right program: the script must print "agree"
    from fuzz_run import Failure

    text = script(shrink(Failure("grad", "eager", "wrong", "x0", "planted", prog)))
    path = tmp_path / "repro.py"
    path.write_text(text)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("-> agree") == 2, out.stdout


@pytest.mark.parametrize("op_name", ["maximum", "pow"])
def test_python_scalar_on_either_side_is_drawn(op_name):
    """Operands of every kind: the scalar comes first in some programs (``2.0 - x``)."""
    gen = Generator([o for o in OPS if o.name == op_name], PROFILE)
    firsts = set()
    for seed in range(200):
        for s in gen.program(seed).stmts:
            firsts.add(type(s.args[0]).__name__)
    assert firsts == {"str", "Const"}
