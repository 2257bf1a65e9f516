"""Object semantics under random programs: copies, pickles, aliasing, same names, threads.

Each property runs over fuzz programs (``fuzz_gen``) with one float leaf, whose gradient is
first checked against PyTorch; the property then says what a copy, a pickle, a no-op form,
a second variable of the same name or another thread must not change.
"""

from __future__ import annotations

import copy
import pickle
import threading

import fuzz_ops
import fuzz_ops_more  # noqa: F401 - fills fuzz_ops.OPS
import numpy as np
import pytest
from fuzz_gen import Generator
from fuzz_program import leaves_source, tv_source
from fuzz_run import Profile, _exec, inputs, profile_from_env, run_program

import tapeviz as tv

N = {"fast": 24, "long": 400}[profile_from_env().name]
SMOOTH = [op for op in fuzz_ops.OPS if op.diff and op.group in ("elementwise", "reduce", "linalg")]
ONE = Profile("semantics", programs=0, special=0.0, dtypes={"float64": 1.0}, max_stmts=3)


def programs(n=N, seed0=7_000):
    """(program, tapeviz function, its loss of one float leaf) for programs PyTorch agrees
    with in value and gradient."""
    gen, out, seed = Generator(SMOOTH, ONE), [], seed0
    while len(out) < n:
        prog, seed = gen.program(seed), seed + 1
        if len(prog.diff) != 1 or not prog.float_outputs:
            continue
        if run_program(prog, ("value", "grad"))[0]:
            continue  # a wrong program is the program test's finding, not this one's
        ns = _exec(leaves_source(prog) + "\n" + tv_source(prog), "tv")
        ws, _ = inputs(prog)
        xs = [ns[leaf.name] for leaf in prog.leaves]
        loss = ns["tv_loss"](ns["f"], xs, prog.diff, ws)
        out.append((prog, xs[prog.diff[0]], loss))
    return out


CASES = programs()


def _grad(loss, x):
    return tv.grad(loss)(x).numpy()


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_a_copied_variable_is_a_new_variable_on_every_tape(how):
    """Class: object identity. A copy has its own id, so a loss of both gets both gradients
    (teacher/student): d/dv [L(v) + 2 L(c)] = L'(v), d/dc = 2 L'(c)."""
    make = {"copy": copy.copy, "deepcopy": copy.deepcopy,
            "pickle": lambda v: pickle.loads(pickle.dumps(v))}[how]  # fmt: skip
    for prog, x, loss in CASES:
        v = tv.variable(x.numpy())
        c = make(v)
        assert c is not v and c.id != v.id, (how, prog.seed)
        with tv.Tape() as tape:
            tape.watch([v, c])
            total = loss(v) + 2.0 * loss(c)
        gv, gc = tape.gradient(total, [v, c])
        want = _grad(loss, x)
        np.testing.assert_allclose(gv.numpy(), want, rtol=1e-12, err_msg=f"{how} {prog.seed}")
        np.testing.assert_allclose(gc.numpy(), 2 * want, rtol=1e-12, err_msg=f"{how} {prog.seed}")


def test_unpickled_tensors_never_share_an_id_with_live_ones():
    blobs = [pickle.dumps(tv.tensor(np.arange(3.0) + i)) for i in range(5)]
    live = [tv.tensor([float(i)]) for i in range(50)]
    back = [pickle.loads(b) for b in blobs]
    assert not {t.id for t in back} & {t.id for t in live}


def test_a_deep_copied_model_is_trained_apart_from_the_original():
    student = tv.nn.Sequential([tv.nn.Dense(3, activation="tanh"), tv.nn.Dense(1)])
    x = tv.tensor(np.linspace(-1, 1, 8).reshape(2, 4))
    student(x)
    teacher = copy.deepcopy(student)
    ids = {p.id for p in student.parameters()}
    assert not ids & {p.id for p in teacher.parameters()}
    value, grads = tv.variable_grads(lambda: tv.sum(student(x) - teacher(x)),
                                     student.parameters())  # fmt: skip
    assert value.item() == 0.0
    assert all(np.abs(g.numpy()).sum() > 0 for g in grads.values() if g is not None)


NO_OPS = {
    "np.copy": lambda v: np.copy(v),
    "astype": lambda v: v.astype(v.dtype),
    "cast": lambda v: tv.cast(v, v.dtype),
    "reshape": lambda v: tv.reshape(v, v.shape),
    "method reshape": lambda v: v.reshape(v.shape),
    "identity": lambda v: tv.identity(v),
    "tensor": lambda v: tv.tensor(v),
    "ellipsis": lambda v: v[...],
    "broadcast_to": lambda v: tv.broadcast_to(v, v.shape),
    "squeeze": lambda v: tv.squeeze(v),
    "stop_gradient": lambda v: tv.stop_gradient(v),
    "atleast_1d": lambda v: tv.atleast_1d(v),
    "np.asarray copy": lambda v: np.array(v),
}


@pytest.mark.parametrize("form", NO_OPS)
def test_a_no_op_form_of_a_variable_is_a_snapshot(form):
    """Class: aliasing. numpy's rule: a copy is a copy; changing the variable later (an
    optimizer step) must not change what was taken from it."""
    for prog, x, _loss in CASES[:6]:
        v = tv.variable(x.numpy())
        before = v.numpy().copy()
        snap = NO_OPS[form](v)
        assert snap is not v, (form, prog.seed)
        # what the form gives on the value itself (squeeze drops a size-1 axis of some cases)
        want = np.asarray(NO_OPS[form](tv.tensor(before)))
        np.testing.assert_array_equal(np.asarray(snap), want, err_msg=f"{form} {prog.seed}")
        v.assign(before * 2 + 1)
        np.testing.assert_array_equal(np.asarray(snap), want, err_msg=f"{form} {prog.seed}")


def test_variables_with_the_same_name_keep_both_gradients():
    """Class: same names. variable_grads must not key gradients by name alone."""
    for prog, x, loss in CASES[:6]:
        a, b = tv.variable(x.numpy(), name="w"), tv.variable(x.numpy() * 0.5, name="w")
        value, grads = tv.variable_grads(lambda: loss(a) + 3.0 * loss(b), [a, b])
        assert len(grads) == 2, (prog.seed, list(grads))
        got = sorted(np.abs(g.numpy()).sum() for g in grads.values())
        want = sorted([np.abs(_grad(loss, a)).sum(), 3 * np.abs(_grad(loss, b)).sum()])
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_programs_differentiated_in_threads_match_the_serial_answers():
    serial = [_grad(loss, x) for _, x, loss in CASES]
    results: dict = {}

    def work(k):
        for i in range(k, len(CASES), 4):
            _, x, loss = CASES[i]
            results[i] = _grad(loss, x)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, want in enumerate(serial):
        np.testing.assert_array_equal(results[i], want, err_msg=f"program {CASES[i][0].seed}")


def test_a_gradient_override_stays_in_its_thread():
    """Class: context. An override is as thread-local as the tape: another thread, running
    while the override is in force, gets the built-in gradient."""
    x = tv.tensor([0.5, -1.0, 2.0])
    want = tv.grad(lambda x: tv.sum(tv.exp(x)))(x).numpy()
    ready, done, seen = threading.Event(), threading.Event(), []

    def other():
        ready.wait()
        seen.append(tv.grad(lambda x: tv.sum(tv.exp(x)))(x).numpy())
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with tv.gradient_override("Exp", lambda dy, saved, attrs: {"x": lambda: dy * 0.0}):
        ready.set()
        done.wait(60)
    t.join()
    np.testing.assert_array_equal(seen[0], want)
