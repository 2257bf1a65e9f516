"""The tape: recording, saved values, release, accumulation, multi-output, higher order,
unconnected sources, output_gradients and per-thread recording; misuse (re-entering, exiting
out of order or from another thread) is a named error."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.tensors import recording


def test_nodes_record_kernel_inputs_outputs_and_saved_values():
    x = core.tensor([0.5, -1.0], name="x")
    with core.Tape() as tape:
        tape.watch(x)
        y = core.tanh(x)
        z = y * x
    n0, n1 = tape.nodes
    assert (n0.kernel, n0.backend, n0.style, n0.label) == ("Tanh", "numpy", "builtin", "Tanh")
    assert n0.inputs == {"x": x} and n0.outputs == (y,)
    assert [(s.role, s.name, s.shape, s.dtype, s.nbytes) for s in n0.saved] == [
        ("output", 0, (2,), np.float32, 8)
    ]
    assert [(s.role, s.name) for s in n1.saved] == [("input", "a"), ("input", "b")]
    assert tape.producer(z) is n1 and tape.producer(x) is None
    assert n0.source[0] == __file__ and n0.source[2] == "test_nodes_record_kernel_inputs_outputs_and_saved_values"  # fmt: skip
    assert tape.saved_nbytes == 8 + 8  # y and x, each once
    assert tape.node(1) is n1


def test_source_line_can_be_switched_off():
    core.settings.record_source = False
    try:
        with core.Tape() as tape:
            core.exp(core.tensor([1.0]))
    finally:
        core.settings.record_source = True
    assert tape.nodes[0].source is None


def test_non_persistent_tape_releases_saved_values_keeps_metadata():
    x = core.tensor([0.5, 2.0])
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.exp(x) * x)
    tape.gradient(y, x)
    saved = [s for n in tape.nodes for s in n.saved]
    assert saved and all(s.released and s.tensor is None for s in saved)
    assert [s.shape for s in saved] == [(2,), (2,), (2,)]
    assert all(s.dtype == np.float32 and s.nbytes == 8 for s in saved)
    assert tape.saved_nbytes == 0
    with pytest.raises(RuntimeError, match="non-persistent tape can only compute one gradient"):
        tape.gradient(y, x)


def test_persistent_tape_keeps_saved_values_until_release():
    x = core.tensor([0.5, 2.0])
    with core.Tape(persistent=True) as tape:
        tape.watch(x)
        y = core.sum(core.exp(x))
    g1 = tape.gradient(y, x)
    g2 = tape.gradient(y, x)
    np.testing.assert_allclose(g1.numpy(), g2.numpy())
    assert tape.saved_nbytes == 8
    tape.release()
    assert tape.saved_nbytes == 0 and tape.nodes[0].saved[0].nbytes == 8
    with pytest.raises(RuntimeError, match="released by an earlier gradient"):
        tape.gradient(y, x)


def test_reused_tensor_accumulates_and_steps_show_it():
    x = core.tensor([3.0])
    with core.Tape() as tape:
        tape.watch(x)
        y = x * x + x  # x used three times
    g = tape.gradient(y, x)
    assert g.numpy().tolist() == [7.0]
    mul_step = [s for s in tape.backward_steps if s.node_id == 0][0]
    assert set(mul_step.grads) == {"a", "b"} and "b" in mul_step.accumulated
    assert mul_step.backward_node_ids
    assert all(tape.node(i).grad_of == 0 for i in mul_step.backward_node_ids)
    assert [s.node_id for s in tape.backward_steps] == [1, 0]  # reverse order


def test_backward_nodes_are_recorded_with_grad_of():
    x = core.tensor([0.5])
    with core.Tape() as tape:
        tape.watch(x)
        y = core.tanh(x)
    tape.gradient(y, x)
    assert tape.backward_nodes and all(n.grad_of == 0 for n in tape.backward_nodes)
    assert all(n.style == "gradient" for n in tape.backward_nodes)
    assert {n.id for n in tape.backward_nodes}.isdisjoint({n.id for n in tape.nodes})


def test_multi_output_split_with_one_output_unused():
    x = core.tensor([1.0, 2.0, 3.0, 4.0])
    with core.Tape() as tape:
        tape.watch(x)
        a, b = core.split(x, 2)
        y = core.sum(b * b)
    node = tape.nodes[0]
    assert node.kernel == "Split" and node.outputs == (a, b)
    assert tape.producer(b) is node
    assert tape.gradient(y, x).numpy().tolist() == [0.0, 0.0, 6.0, 8.0]
    step = [s for s in tape.backward_steps if s.node_id == node.id][0]
    assert step.dy[0] is None and step.dy[1].numpy().tolist() == [6.0, 8.0]  # d(b*b)/db


def test_nested_tapes_give_second_and_third_order():
    x = core.tensor(np.array([0.7]))
    with core.Tape() as t3:
        t3.watch(x)
        with core.Tape() as t2:
            t2.watch(x)
            with core.Tape() as t1:
                t1.watch(x)
                y = x**4
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    np.testing.assert_allclose([g1.item(), g2.item(), g3.item()], [4 * 0.7**3, 12 * 0.49, 24 * 0.7])
    assert len(t2.nodes) > len(t1.nodes)  # the outer tape recorded the gradient ops


def test_unconnected_sources_none_or_zero():
    x, z = core.tensor([1.0]), core.tensor([[2.0, 3.0]])
    with core.Tape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2
    gx, gz = tape.gradient(y, [x, z])
    assert gx.item() == 2.0 and gz is None
    gz = tape.gradient(y, {"z": z}, unconnected_gradients="zero")["z"]
    assert gz.shape == (1, 2) and gz.numpy().tolist() == [[0.0, 0.0]]
    with pytest.raises(ValueError, match="unconnected_gradients must be 'none' or 'zero'"):
        tape.gradient(y, x, unconnected_gradients="nan")


def test_output_gradients_and_non_scalar_target():
    x = core.tensor([1.0, 2.0])
    with core.Tape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"target has shape \(2,\), not a scalar"):
        tape.gradient(y, x)
    g = tape.gradient(y, x, output_gradients=core.tensor([1.0, 10.0]))
    assert g.numpy().tolist() == [2.0, 40.0]
    with pytest.raises(ValueError, match=r"output_gradients\[0\] has shape \(3,\)"):
        tape.gradient(y, x, output_gradients=core.tensor([1.0, 1.0, 1.0]))


def test_list_of_targets_sums_their_gradients():
    x = core.tensor([2.0])
    with core.Tape() as tape:
        tape.watch(x)
        a, b = x * 3, x * x
    assert tape.gradient([a, b], x).item() == 7.0


def test_trainable_variables_are_watched_and_constants_not():
    w = core.variable([1.0, 2.0], name="w")
    frozen = core.variable([1.0, 1.0], trainable=False)
    with core.Tape() as tape:
        y = core.sum(w * frozen)
    assert w.id in tape.watched and frozen.id not in tape.watched
    gw, gf = tape.gradient(y, [w, frozen])
    assert gw.numpy().tolist() == [1.0, 1.0] and gf.numpy().tolist() == [1.0, 2.0]


def test_stop_gradient_and_no_grad():
    x = core.tensor([2.0])
    with core.Tape(persistent=True) as tape:
        tape.watch(x)
        y = core.stop_gradient(x * x) * x
        with core.no_grad():
            z = core.exp(x)
    assert tape.gradient(y, x).item() == 4.0  # only the outer x
    assert tape.gradient(z, x) is None
    assert [n.kernel for n in tape.nodes] == ["Mul", "StopGradient", "Mul"]


def test_no_grad_inside_then_tape_opened_inside_records():
    x = core.tensor([2.0])
    with core.no_grad():
        with core.Tape() as tape:
            tape.watch(x)
            y = x * x
    assert tape.gradient(y, x).item() == 4.0


def test_integer_paths_are_not_differentiated():
    x = core.tensor([1.5, 2.5])
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(core.cast(core.cast(x, "int32"), "float32") * x)
    assert tape.gradient(y, x).numpy().tolist() == [1.0, 2.0]


def test_name_scope_is_recorded():
    with core.Tape() as tape:
        with core.name_scope("block"):
            with core.name_scope("inner"):
                core.exp(core.tensor([1.0]))
        core.exp(core.tensor([1.0]))
    assert [n.scope for n in tape.nodes] == ["block/inner", ""]
    with pytest.raises(ValueError, match="name_scope"):
        with core.name_scope("a/b"):
            pass


def test_tapes_are_per_thread():
    barrier = threading.Barrier(2)
    results, errors = {}, []

    def work(kind):
        try:
            x = core.tensor(np.full(3, 0.5, np.float32))
            with core.Tape() as tape:
                tape.watch(x)
                y = x
                for _ in range(200):
                    y = core.tanh(y) if kind == "tanh" else core.sin(y)
                    if _ == 5:
                        barrier.wait(timeout=10)
            results[kind] = ({n.kernel for n in tape.nodes}, len(tape.nodes))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in ("tanh", "sin")]
    with core.Tape() as main_tape:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    assert results["tanh"] == ({"Tanh"}, 200) and results["sin"] == ({"Sin"}, 200)
    assert main_tape.nodes == []


def test_tape_repr_and_node_lookup_error():
    with core.Tape() as tape:
        core.exp(core.tensor([1.0]))
    assert "1 nodes" in repr(tape) and "Exp" in repr(tape.nodes[0])
    with pytest.raises(KeyError, match="no node with id 7"):
        tape.node(7)


def test_watch_rejects_non_tensors():
    with core.Tape() as tape:
        with pytest.raises(TypeError, match="Tape.watch: expected Tensors, got int"):
            tape.watch([core.tensor([1.0]), 3])


# --- misuse of a tape is a named error (issue 12, class 9) -----------------------------
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
