"""A new kind of primitive, added in one module (this one): a JAX-style ``custom_vjp``.

Nothing else in tapeviz is told about it: reverse mode, higher order, the batched replay of
``check_grads``, ``audit``, the graph and the stepper all read the ``Primitive`` its nodes
point at. The builder is written here as a user would write it.
"""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv


def custom_vjp(fwd, bwd, name):
    """``fwd(x) -> (y, residuals)``; ``bwd(residuals, dy) -> dx``, written with ops.

    Residuals that are the input itself are saved as the input (so a second derivative
    through ``bwd`` is right); others are memory values.
    """
    prim = tv.Primitive("CustomVJP", label=name, kind="custom_vjp", forward=lambda x: fwd(x)[0])

    def op(x):
        with tv.no_grad():
            y, res = fwd(x)
        y = tv.tensor(y.numpy())  # a fresh output, made by this node
        saved = [("input", "x", r) if r is x else ("memory", f"r{i}", r) for i, r in enumerate(res)]
        vjp = tv.GradConfig("CustomVJP", lambda dy, s, attrs: {"x": lambda: bwd(s, dy)})
        tv.record(prim, {"x": x}, (y,), {"residuals": len(res)}, vjp, saved)
        return y

    return op


my_sin = custom_vjp(lambda x: (tv.sin(x), [x]), lambda s, dy: dy * tv.cos(s[0]), "my_sin")
wrong_sin = custom_vjp(lambda x: (tv.sin(x), [x]), lambda s, dy: dy * tv.sin(s[0]), "wrong_sin")
X = np.linspace(-1.5, 2.0, 5)


def _tape(fn):
    x = tv.tensor(X)
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        y = tv.sum(fn(x) * x)
    return tape, x, y


def test_reverse_mode_and_higher_order_read_the_primitive():
    x = tv.tensor(X)
    g = tv.grad(lambda t: tv.sum(my_sin(t)))(x)
    np.testing.assert_allclose(g.numpy(), np.cos(X), rtol=1e-12)
    h = tv.hessian(lambda t: tv.sum(my_sin(t)))(x)  # bwd is ops on the saved input
    np.testing.assert_allclose(h.numpy(), np.diag(-np.sin(X)), atol=1e-12)


def test_check_grads_and_audit_rerun_it_through_its_forward():
    assert tv.check_grads(my_sin, X).passed
    with pytest.raises(tv.GradientCheckError, match="value mismatch"):
        tv.check_grads(wrong_sin, X)
    tape, _, _ = _tape(wrong_sin)
    report = tv.audit(tape)
    (bad,) = report.failures
    assert bad.label == "wrong_sin" and bad.style == "custom_vjp"
    tape, _, _ = _tape(my_sin)
    assert tv.audit(tape).passed and not tv.audit(tape).skipped


def test_the_graph_and_the_stepper_draw_it_with_its_kind():
    tape, x, y = _tape(my_sin)
    node = tape.nodes[0]
    assert (node.kernel, node.label, node.style) == ("CustomVJP", "my_sin", "custom_vjp")
    assert [(s.role, s.name) for s in node.saved] == [("input", "x")]
    tape.gradient(y, x)
    dot = tv.show_graph(tape, backward="both").to_dot()
    assert "my_sin" in dot and "custom_vjp" in dot  # its label, and its kind written on it
    from tapeviz.widgets.stepper.data import step_data

    steps = [step_data(tape, i) for i in range(len(tape.backward_steps))]
    (mine,) = [s for s in steps if s["label"] == "my_sin"]
    assert mine["style"] == "custom_vjp" and mine["saved"][0]["role"] == "input"
    np.testing.assert_allclose(np.asarray(mine["grads"]["x"]), X * np.cos(X), rtol=1e-12)
    tv.BackpropStepper(tape)  # the widget opens on it


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_it_runs_on_every_backend(backend):
    if backend not in tv.list_backends():
        pytest.skip("numba is not installed")
    with tv.backend(backend):
        g = tv.grad(lambda t: tv.sum(my_sin(t)))(tv.tensor(X))
    np.testing.assert_allclose(g.numpy(), np.cos(X), rtol=1e-12)


def test_details_say_when_a_gradient_is_differentiable_once_only():
    from tapeviz.graph import extract
    from tapeviz.graph.details import node_details

    class Cube(tv.DifferentiableFunction):  # backward on numpy: not differentiable again
        def __init__(self):
            super().__init__(save_inputs_for_backward=True)

        def forward(self, x):
            return x**3

        def backward(self, dy, compute_gradients, x):
            return dy * 3 * x**2

    x = tv.tensor(X)
    with tv.Tape() as tape:
        tape.watch(x)
        tv.sum(my_sin(Cube()(x)))
    data = extract(tape)
    rows = {n: dict(map(tuple, node_details(tape, data, n)["rows"])) for n in ("n0", "n1")}
    assert rows["n0"]["gradient"].startswith("differentiable once only")  # Cube
    assert "gradient" not in rows["n1"]  # my_sin's VJP is ops: differentiable again
