"""run_kernel and reverse mode on bad input: errors name the op, what was expected and what
came; a failing kernel or gradient leaves tapes and registries as they were."""

from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.registry.gradients import gradient_table
from tapeviz.core.registry.kernels import kernel_table
from tapeviz.core.tensors import recording


def test_shape_mismatch_names_the_op_and_both_shapes():
    a, b = core.tensor(np.ones((2, 3))), core.tensor(np.ones(4))
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4,\) cannot be broadcast"):
        a + b
    with pytest.raises(ValueError, match=r"mul: shapes \(2, 3\) and \(4,\)"):
        core.mul(a, b)
    with pytest.raises(ValueError, match=r"matmul: inner dimensions differ: \(2, 3\) @ \(4,\)"):
        a @ b
    with pytest.raises(ValueError, match=r"matmul: batch dimensions \(2,\) and \(3,\)"):
        core.matmul(np.ones((2, 2, 2)), np.ones((3, 2, 2)))
    with pytest.raises(ValueError, match=r"where: shapes \(4,\) and \(2, 3\)"):
        core.where(core.tensor(np.ones(4, bool)), a, 1.0)


def test_other_argument_errors_name_the_op():
    x = core.tensor(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"reshape: cannot reshape a tensor of shape \(2, 3\) into \(4,\)"):  # fmt: skip
        core.reshape(x, (4,))
    with pytest.raises(ValueError, match="sum: axis 2 is out of range for a tensor of rank 2"):
        core.sum(x, 2)
    with pytest.raises(ValueError, match=r"concat: tensor 1 has shape \(2, 2\)"):
        core.concat([x, core.tensor(np.ones((2, 2)))], 0)
    with pytest.raises(ValueError, match="max: cannot reduce a zero-size tensor"):
        core.max(core.tensor(np.ones((0, 3))))
    with pytest.raises(TypeError, match="exp: expected a floating tensor"):
        core.exp(core.tensor([1, 2]))
    with pytest.raises(ValueError, match="conv2d: x has 3 channels but the filters expect 2"):
        core.conv2d(np.ones((1, 4, 4, 3)), np.ones((2, 2, 2, 1)))
    with pytest.raises(IndexError, match=r"getitem: index .* is invalid for shape \(2, 3\)"):
        x[5]
    with pytest.raises(TypeError, match="cannot make a tensor from str|expected numbers"):
        core.tensor("abc")


def test_run_kernel_rejects_non_tensor_inputs():
    with pytest.raises(TypeError, match=r"Add: input 'b' must be a Tensor, got ndarray"):
        core.run_kernel("Add", {"a": core.tensor([1.0]), "b": np.ones(1)})


def test_disposed_input_is_named():
    x = core.tensor([1.0], name="x")
    x.dispose()
    with pytest.raises(core.DisposedError, match=r"Exp: input 'x' \('x' \(id \d+\)\) was disposed"):
        core.run_kernel("Exp", {"x": x})


@contextlib.contextmanager
def _tensors_made_here():
    """The ids of the tensors this thread makes in the block. Not the count of live tensors
    (``tv.memory()``): that counts every thread's tensors and every earlier test's garbage,
    so a tensor freed by the collector or made or dropped by another thread (a TrainingPlot
    timer or fit thread, a finalizer) in the block changed it, and the test depended on
    which tests ran before it."""
    module = sys.modules["tapeviz.core.tensors.tensor"]  # core.tensor is the function of that name
    ids, me, made = module._ids, threading.get_ident(), []

    class Watched:
        def __next__(self):
            i = next(ids)
            if threading.get_ident() == me:
                made.append(i)
            return i

    module._ids = Watched()
    try:
        yield made
    finally:
        module._ids = ids


def _state(tape, made):
    """What a user can see of a tape and the registries (``made``: tensors the tape made)."""
    return (
        [(n.id, n.kernel) for n in tape.nodes],
        [tape.producer(t) for t in made],
        dict(tape.watched),
        kernel_table(),
        gradient_table(),
        core.get_backend(),
    )


@pytest.mark.parametrize(
    "fn, error",
    [
        (lambda i, a: 1 / 0, ZeroDivisionError),
        (lambda i, a: np.ones(2) @ np.ones(3), ValueError),
        (lambda i, a: "not an array", TypeError),
        (lambda i, a: (i["x"], None), TypeError),
    ],
)
def test_failing_kernel_leaves_tape_and_registries_unchanged(fn, error):
    core.register_kernel("Broken", "numpy", fn)
    try:
        x = core.tensor([1.0, 2.0])
        with core.Tape() as outer, core.Tape() as tape:
            tape.watch(x)
            y = core.exp(x)
            before, outer_before = _state(tape, [x, y]), _state(outer, [x, y])
            with _tensors_made_here() as made:
                with pytest.raises(Exception) as err:
                    core.run_kernel("Broken", {"x": y}, {"k": 1})
            assert made == []  # the failed run made no tensor
            assert isinstance(err.value, (error, core.KernelError))
            assert "'Broken'" in str(err.value) and "numpy" in str(err.value)
            assert _state(tape, [x, y]) == before and _state(outer, [x, y]) == outer_before
            z = core.sum(y)  # the tape still works, numbering its nodes without a gap
        assert [n.id for n in tape.nodes] == [0, 1] and tape.producer(z).kernel == "Sum"
        assert tape.gradient(z, x).numpy().tolist() == pytest.approx(np.exp([1.0, 2.0]))
    finally:
        core.unregister_kernel("Broken", "numpy")


def test_kernel_error_names_kernel_backend_and_shapes():
    core.register_kernel("Broken", "numpy", lambda i, a: np.ones(2) @ np.ones(3))
    try:
        with pytest.raises(core.KernelError, match=r"kernel 'Broken' on backend 'numpy' failed for inputs \(x: \(2,\) float32\)"):  # fmt: skip
            core.run_kernel("Broken", {"x": core.tensor([1.0, 2.0])})
    finally:
        core.unregister_kernel("Broken", "numpy")


def _bad_grad(result):
    return lambda dy, saved, attrs: {"x": lambda: result(dy)}


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda dy: core.tensor(np.ones(3, np.float32)), r"expected shape \(2,\), got \(3,\)"),
        (lambda dy: core.cast(dy, "float64"), "expected dtype float32, got float64"),
        (lambda dy: "x", "expected a Tensor, got str"),
    ],
)
def test_wrong_gradient_names_the_node(make, message):
    x = core.tensor([0.5, 1.0])
    with core.Tape() as tape:
        tape.watch(x)
        with core.gradient_override("Tanh", _bad_grad(make)):
            y = core.sum(core.tanh(x))
    with pytest.raises(core.GradientError, match=rf"gradient of 'Tanh' \(node 0\) for input 'x': {message}"):  # fmt: skip
        tape.gradient(y, x)
    assert recording.current() is None  # the backward pass left no recorder behind


def test_gradient_fn_must_return_a_dict():
    x = core.tensor([0.5])
    with core.Tape() as tape:
        tape.watch(x)
        with core.gradient_override("Exp", lambda dy, s, a: [dy]):
            y = core.exp(x)
    with pytest.raises(core.GradientError, match="must return a dict"):
        tape.gradient(y, x)


def test_missing_gradient_names_kernel_and_fix():
    core.register_kernel("Cube", "numpy", lambda i, a: i["x"] ** 3)
    try:
        x = core.tensor([2.0])
        with core.Tape() as tape:
            tape.watch(x)
            y = core.run_kernel("Cube", {"x": x})
        with pytest.raises(core.GradientError, match=r"no gradient is registered for kernel 'Cube'.*register_gradient"):  # fmt: skip
            tape.gradient(y, x)
    finally:
        core.unregister_kernel("Cube", "numpy")


def test_gradient_targets_and_sources_must_be_tensors():
    x = core.tensor([1.0])
    with core.Tape() as tape:
        tape.watch(x)
        y = x * 2
    with pytest.raises(TypeError, match="Tape.gradient: expected Tensors, got float"):
        tape.gradient(y, [x, 1.0])


def test_integer_target_is_rejected():
    x = core.tensor([1.0])
    with core.Tape() as tape:
        tape.watch(x)
        y = core.cast(x, "int32")
    with pytest.raises(TypeError, match="target must be floating"):
        tape.gradient(y, x)


def test_python_scalars_take_the_tensor_dtype():
    x = core.tensor([1.0, 2.0])
    assert (x * 2).dtype == np.float32 and (2.5 - x).dtype == np.float32
    assert (core.tensor([1, 2]) + 1).dtype == np.int32
    assert (core.tensor([1, 2]) * 0.5).dtype == np.float32
    assert (x + core.tensor(np.ones(2))).dtype == np.float64  # numpy promotion


def test_a_primitive_records_on_every_active_tape():
    x = core.tensor([1.0])
    prim = core.Primitive("Custom", label="mine", kind="custom_grad")
    with core.Tape() as t1, core.Tape() as t2:
        nodes = core.record(prim, {"x": x}, (x,), saved=[("input", "x", x)])
    assert len(nodes) == 2 and t1.nodes[0].label == "mine" and t2.nodes[0].style == "custom_grad"
    assert t1.nodes[0].saved[0].role == "input" and t1.nodes[0].primitive is prim
