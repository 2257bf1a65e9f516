"""Issue 12, classes 9 and 11: no internal errors where a named one belongs, and arguments
that would produce NaN weights are rejected by name."""

import threading

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.nn import optim
from tapeviz.core.tensors import recording


def _recorded():
    x = core.tensor([1.0, 2.0])
    tape = core.Tape(persistent=True)
    with tape:
        tape.watch(x)
        y = core.sum(x * x)
    return tape, x, y


def _errors_in_a_thread_inside(tape, fn) -> list:
    """The RuntimeError messages of ``fn()`` run in another thread while ``tape`` is open."""
    errors = []

    def other():
        try:
            fn()
        except RuntimeError as e:
            errors.append(str(e))

    with tape:
        t = threading.Thread(target=other)
        t.start()
        t.join()
    return errors


def test_reentering_a_tape_is_a_named_error_and_the_tape_still_works():
    tape, x, y = _recorded()
    x2 = core.tensor([3.0])
    with tape:
        with pytest.raises(RuntimeError, match="Tape: this tape is already recording.*this thread"):
            with tape:
                pass
        tape.watch(x2)
        z = x2 * x2
    assert recording.current() is None  # nothing left recording
    assert tape.gradient(z, x2).numpy().tolist() == [6.0]
    with tape:  # one block after another is fine
        w = x2 * 2.0
    assert tape.gradient(w, x2).numpy().tolist() == [2.0]


def test_a_second_thread_entering_an_open_tape_gets_a_named_error():
    tape = core.Tape()

    def enter():
        with tape:
            pass

    errors = _errors_in_a_thread_inside(tape, enter)
    assert len(errors) == 1 and "another thread" in errors[0]
    assert tape._token is None


def test_exiting_a_tape_that_is_not_open_is_a_named_error():
    """Not contextvars' "expected an instance of Token, got None"."""
    tape = core.Tape()
    with pytest.raises(RuntimeError, match="Tape: exited, but its `with` block is not open"):
        tape.__exit__(None, None, None)
    with tape:
        pass
    with pytest.raises(RuntimeError, match="is not open"):
        tape.__exit__(None, None, None)
    assert recording.current() is None


def test_exiting_tapes_out_of_order_is_a_named_error_and_leaks_no_recorder():
    """Before: the outer tape's exit reset the recorders, the inner one's restored the outer
    tape, which then recorded every later op of the session."""
    a, b = core.Tape(), core.Tape()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="a tape entered after it is still recording"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert recording.current() is None


def test_exiting_a_tape_from_another_thread_is_a_named_error():
    tape = core.Tape()
    errors = _errors_in_a_thread_inside(tape, lambda: tape.__exit__(None, None, None))
    assert errors == ["Tape: exited, but its `with` block was opened in another thread"]
    assert recording.current() is None


def test_audit_report_iterates_over_node_audits():
    tape, _, _ = _recorded()
    report = core.audit(tape)
    items = list(report)
    assert [a.node_id for a in items] == [n.node_id for n in report.nodes]
    assert len(items) == len(report) == 2 and all(a.passed for a in items)


def test_tape_node_finds_forward_nodes_recorded_after_a_gradient():
    x = core.tensor([1.0, 2.0])
    with core.Tape(persistent=True) as tape:
        tape.watch(x)
        y = core.sum(x * x)
        tape.gradient(y, x)  # its backward nodes take ids 2..k
        z = y * 2.0
    last = tape.nodes[-1]
    assert last.id > len(tape.nodes) and tape.node(last.id) is last
    assert tape.producer(z) is last
    with pytest.raises(KeyError, match="no node with id 999"):
        tape.node(999)


@pytest.mark.parametrize(
    "cls, kwargs, arg",
    [
        (optim.Adam, {"beta1": 1.0}, "beta1"),
        (optim.Adam, {"beta1": -0.1}, "beta1"),
        (optim.Adam, {"beta2": 1.0}, "beta2"),
        (optim.Adam, {"epsilon": -1e-7}, "epsilon"),
        (optim.Adam, {"learning_rate": float("inf")}, "learning_rate"),
        (optim.SGD, {"learning_rate": float("nan")}, "learning_rate"),
        (optim.SGD, {"learning_rate": -0.1}, "learning_rate"),
        (optim.SGD, {"learning_rate": 0.0}, "learning_rate"),
        (optim.Momentum, {"momentum": 1.0}, "momentum"),
        (optim.RMSProp, {"decay": 1.5}, "decay"),
        (optim.RMSProp, {"epsilon": float("inf")}, "epsilon"),
        (optim.Adam, {"epsilon": 0.0}, "epsilon"),
        (optim.RMSProp, {"epsilon": 0.0}, "epsilon"),
    ],
)
def test_optimizers_reject_arguments_that_give_nan_weights(cls, kwargs, arg):
    with pytest.raises(ValueError, match=rf"{cls.__name__}: {arg} must be a finite number"):
        cls(**kwargs)


@pytest.mark.parametrize("cls", [optim.Adam, optim.RMSProp])
def test_epsilon_zero_is_rejected_because_a_zero_gradient_gives_a_nan_weight(cls):
    """PyTorch accepts eps=0; its step for a weight whose gradient is 0 is then 0 / 0."""
    with pytest.raises(ValueError, match=r"epsilon .* \(0, inf\), got 0\.0 \(.*0 / 0 = NaN"):
        cls(0.1, epsilon=0.0)
    w = core.variable([1.0, 2.0])
    opt = cls(0.1, epsilon=1e-12)  # the smallest sensible: finite where the gradient is 0
    opt.minimize(lambda: core.sum(w * core.tensor([0.0, 1.0])))
    assert np.isfinite(w.numpy()).all() and w.numpy()[0] == 1.0


def test_a_learning_rate_changed_between_steps_is_checked_at_the_step():
    w = core.variable([3.0])
    opt = optim.SGD(0.1)
    opt.learning_rate = float("inf")
    with pytest.raises(ValueError, match="SGD: learning_rate must be a finite number"):
        opt.minimize(lambda: core.sum(w * w))
    assert w.numpy().tolist() == [3.0]  # not -inf


def test_optimizer_edge_values_that_are_valid_still_work():
    w = core.variable([3.0])
    opt = optim.Adam(0.1, beta1=0.0, epsilon=1e-12)
    for _ in range(5):
        opt.minimize(lambda: core.sum(w * w))
    assert np.isfinite(w.numpy()).all() and abs(w.item()) < 3.0
    with pytest.raises(TypeError, match="Momentum: momentum must be a number"):
        optim.Momentum(momentum="fast")


def test_load_weights_from_a_npy_file_says_it_expects_an_npz(tmp_path):
    model = core.nn.Sequential([core.nn.Dense(2)]).build_for((3,))
    path = tmp_path / "w.npy"
    np.save(path, np.zeros(3))
    with pytest.raises(
        ValueError, match=r"load_weights: .*w\.npy.*single array.*expected an \.npz"
    ):
        model.load_weights(path)
