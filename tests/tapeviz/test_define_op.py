"""A new op from one definition (``tv.define_op``), and every part of tapeviz working on it.

The op, softsign ``x / (1 + |x|)``, is defined once below: its numpy kernel, its VJP written
with ops (so it differentiates again), what the VJP saves, its formula, its batching rule
and its decomposition for the lesson graph. Nothing else is registered anywhere; reverse
mode, forward mode, the Hessian, the audit, check_grads, the graph, the lesson graph and the
stepper then work on it. PyTorch is the independent judge of the numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapeviz as tv
from tapeviz.core.registry import batching

X = np.array([-2.0, -0.5, 0.0, 0.25, 3.0])


def _softsign_kernel(ins, attrs):
    x = ins["x"]
    return x / (1 + np.abs(x))


def _define(name="SoftSignT", vjp_power=2):
    """softsign, defined once; ``vjp_power`` other than 2 gives a wrong VJP on purpose."""
    return tv.define_op(
        name,
        kernels={"numpy": _softsign_kernel},
        vjp=lambda dy, saved, attrs: {"x": lambda: dy / (1 + tv.abs(saved[0])) ** vjp_power},
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{(1 + |{x}|)^2}"},
        batch=batching.elementwise,
        decomposition=lambda ins, attrs: ins["x"] / (1 + tv.abs(ins["x"])),
        doc="softsign: x / (1 + |x|)",
    )


@pytest.fixture
def softsign():
    op = _define()
    yield op
    tv.remove_op("SoftSignT")


@pytest.fixture
def wrong_softsign():
    op = _define("SoftSignWrong", vjp_power=1)
    yield op
    tv.remove_op("SoftSignWrong")


def _torch_softsign_derivatives(x):
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.nn.functional.softsign(t).sum(), t, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), t)
    return torch.nn.functional.softsign(t).detach().numpy(), g.detach().numpy(), h.numpy()


def test_forward_reverse_jvp_and_hessian_agree_with_pytorch(softsign):
    y_ref, g_ref, h_ref = _torch_softsign_derivatives(X)
    x = tv.tensor(X)
    np.testing.assert_allclose(softsign(x).numpy(), y_ref, rtol=1e-15)
    np.testing.assert_allclose(tv.grad(lambda t: tv.sum(softsign(t)))(x).numpy(), g_ref, rtol=1e-14)
    _, tangent = tv.jvp(softsign, (x,), (tv.tensor(np.ones_like(X)),))
    np.testing.assert_allclose(tangent.numpy(), g_ref, rtol=1e-14)
    hess = tv.hessian(lambda t: tv.sum(softsign(t)))(x).numpy()
    # |x|'s derivative at 0 is taken as 0 by both (sign(0) = 0)
    np.testing.assert_allclose(np.diag(hess), h_ref, rtol=1e-13, atol=1e-15)
    assert not np.any(hess - np.diag(np.diag(hess)))


def test_check_grads_and_audit_pass_it_and_catch_a_wrong_vjp(softsign, wrong_softsign):
    assert tv.check_grads(softsign, X).passed
    with pytest.raises(tv.GradientCheckError):
        tv.check_grads(wrong_softsign, X)
    for op, ok in ((softsign, True), (wrong_softsign, False)):
        x = tv.tensor(X)
        with tv.Tape() as tape:
            tape.watch(x)
            tv.sum(op(x) * x)
        report = tv.audit(tape)
        assert report.passed is ok and not report.skipped
        if not ok:
            (bad,) = report.failures
            assert bad.kernel == "SoftSignWrong"


def test_the_graph_the_lesson_and_the_stepper_show_it(softsign):
    from tapeviz.graph.lesson import lesson_data
    from tapeviz.widgets.stepper.data import step_data

    x = tv.tensor(X)
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        y = tv.sum(softsign(x))
    tape.gradient(y, x)
    (node,) = [n for n in tape.nodes if n.kernel == "SoftSignT"]
    assert node.primitive is softsign.primitive and [s.name for s in node.saved] == ["x"]
    assert "SoftSignT" in tv.show_graph(tape, backward="both").to_dot()
    step = next(
        s for s in (step_data(tape, i) for i in range(len(tape.backward_steps)))
        if s["label"] == "SoftSignT"
    )  # fmt: skip
    assert step["formula"] == "SoftSignT: ∂y/∂x = 1/((1 + |x|)^2)"  # from its LaTeX
    np.testing.assert_allclose(np.asarray(step["grads"]["x"]), 1 / (1 + np.abs(X)) ** 2)
    kernels = [op["kernel"] for op in lesson_data(tape, unfuse=True)["ops"]]
    assert kernels == ["Abs", "Add", "RealDiv", "Sum"]  # its decomposition, not SoftSignT
    tv.BackpropStepper(tape)  # the widget opens on it


def test_bad_definitions_and_calls_are_named_errors(softsign):
    with pytest.raises(ValueError, match="already exists"):
        _define()
    with pytest.raises(ValueError, match="inputs_to_save names"):
        tv.define_op("Bad", kernels={"numpy": _softsign_kernel}, inputs_to_save=("y",))
    assert "Bad" not in tv.core.registry.kernels.PRIMITIVES  # nothing half-registered
    with pytest.raises(TypeError, match="SoftSignT: expected 1 input"):
        softsign(tv.tensor(X), tv.tensor(X))
    if "numba" in tv.list_backends():
        with tv.backend("numba"), pytest.raises(KeyError, match="'SoftSignT' is not registered"):
            softsign(tv.tensor(X))
    no_grad = tv.define_op("NoGradT", kernels={"numpy": _softsign_kernel})
    try:
        with pytest.raises(tv.NotDifferentiableError, match="NoGradT"):
            tv.grad(lambda t: tv.sum(no_grad(t)))(tv.tensor(X))
    finally:
        tv.remove_op("NoGradT")
    with pytest.raises(KeyError, match="no op named"):
        tv.remove_op("NoGradT")
    with pytest.raises(KeyError, match="did not make"):
        tv.remove_op("Exp")  # a built-in stays
    np.testing.assert_allclose(tv.exp(tv.tensor([0.0])).numpy(), [1.0])
