"""detect_anomaly: the first NaN/Inf, forward or backward, names its node, kernel and line."""

import inspect

import numpy as np
import pytest

import tapeviz as tv
import tapeviz.core.tensors.recording as recording
from tapeviz.core.registry import kernel_names as K


def _line_of(text, fn):
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(src) if text in line)


def test_nan_born_in_forward_names_node_kernel_line_and_input_stats():
    def model(x):
        h = tv.tanh(x) * 2.0
        bad = tv.log(h - 1.0)  # h - 1 < 0 for some elements: NaN here
        return tv.sum(bad * 3.0)

    x = tv.tensor(np.array([0.1, 2.0, 3.0]))
    with tv.Tape() as tape:
        tape.watch(x)
        with pytest.raises(tv.AnomalyError) as err, tv.detect_anomaly():
            model(x)
    e = err.value
    log_node = next(n for n in tape.nodes if n.kernel == K.LOG)
    assert e.phase == "forward" and e.kind == "nan" and e.kernel == K.LOG
    assert e.node is log_node and e.node_id == log_node.id and log_node is tape.nodes[-1]
    assert e.source[0] == __file__ and e.source[1] == _line_of("bad = tv.log", model)
    (stats,) = e.input_stats.values()
    assert stats["min"] == pytest.approx(2 * np.tanh(0.1) - 1) and stats["nan"] is False
    assert f"node {log_node.id} (Log)" in str(e) and f":{e.source[1]}" in str(e)


def test_inf_born_in_backward_names_the_forward_node_whose_gradient_made_it():
    def model(x):
        r = tv.sqrt(x)  # finite at 0, but its gradient 1/(2 sqrt(x)) is not
        return tv.sum(r * 2.0)

    x = tv.tensor(np.array([0.0, 1.0, 4.0]))
    with tv.detect_anomaly():
        with tv.Tape() as tape:
            tape.watch(x)
            y = model(x)
        assert np.isfinite(y.numpy())  # nothing in forward
        with pytest.raises(tv.AnomalyError) as err:
            tape.gradient(y, x)
    e = err.value
    sqrt_node = next(n for n in tape.nodes if n.kernel == K.SQRT)
    assert e.phase == "backward" and e.kind == "inf"
    assert e.forward_node is sqrt_node and e.node.grad_of == sqrt_node.id
    assert e.node in tape.backward_nodes and e.kernel == e.node.kernel
    assert e.source[1] == _line_of("r = tv.sqrt", model)
    assert e.forward_input_stats["x"]["min"] == 0.0
    assert f"gradient of node {sqrt_node.id} (Sqrt" in str(e)


def test_without_a_tape_the_kernel_and_user_line_are_still_named():
    with pytest.raises(tv.AnomalyError) as err, tv.detect_anomaly():
        tv.exp(tv.tensor(np.array([1.0, 1000.0])))  # overflow to inf
    e = err.value
    line = inspect.currentframe().f_lineno - 2
    assert e.node is None and e.kernel == K.EXP and e.kind == "inf"
    assert e.source[0] == __file__ and e.source[1] == line


def test_phases_can_be_selected_and_nothing_is_checked_outside():
    with np.errstate(invalid="ignore"):
        y = tv.log(tv.tensor(np.array([-1.0])))  # no context: a NaN is just a value
    assert np.isnan(y.numpy()).all()
    with tv.detect_anomaly(forward=False):
        tv.log(tv.tensor(np.array([-1.0])))
    x = tv.tensor(np.array([0.0]))
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.sum(tv.sqrt(x))
    with tv.detect_anomaly(backward=False):
        tape.gradient(y, x)
    assert recording.anomaly_hook() is None


def test_hook_is_removed_after_an_error():
    with pytest.raises(tv.AnomalyError), tv.detect_anomaly():
        tv.log(tv.tensor(np.array([-1.0])))
    assert recording.anomaly_hook() is None


def test_finite_computations_pass_untouched():
    x = tv.tensor(np.array([0.5, 1.5]))
    with tv.detect_anomaly():
        g = tv.grad(lambda t: tv.sum(tv.tanh(t) * t))(x)
    assert np.isfinite(g.numpy()).all()


class _BadBackward(tv.DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, X):
        return X * 2.0

    def backward(self, dLdY, compute_gradients, X):
        return dLdY * 2.0 / (X - X)  # numpy: NaN/Inf made outside any kernel


def test_nan_from_a_custom_backward_outside_kernels_names_the_custom_node():
    fn = _BadBackward()
    x = tv.tensor(np.array([1.0, 2.0]))
    with tv.detect_anomaly():
        with tv.Tape() as tape:
            tape.watch(x)
            y = tv.sum(fn(x))  # the custom node
        with pytest.raises(tv.AnomalyError) as err, np.errstate(all="ignore"):
            tape.gradient(y, x)
    e = err.value
    assert e.phase == "backward" and e.forward_node.style == "DifferentiableFunction"
    assert e.source[0] == __file__ and "gradient function of node" in str(e)
