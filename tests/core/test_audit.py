"""audit(tape): one planted wrong gradient among 100+ ordinary ops is named, node by node."""

import json
import warnings

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.registry import kernel_names as K

RNG = np.random.default_rng(3)
LAYERS = [tv.tensor(RNG.standard_normal((8, 8)).astype(np.float32) / 3) for _ in range(12)]


def _block(h):
    return tv.tanh(h) * 0.9 + tv.sin(h) * 0.1 + h * h * 0.01


def _model(x, odd_layer=None, odd=None):
    """12 layers of matmul + 8 elementwise ops each (100+ nodes); layer ``odd_layer`` uses
    ``odd(h)`` instead of the usual block."""
    h = x
    for i, w in enumerate(LAYERS):
        h = h @ w
        h = odd(h) if i == odd_layer else _block(h)
    return tv.sum(tv.softmax(h) * h)


def _record(**kw):
    x = tv.tensor(RNG.standard_normal((4, 8)).astype(np.float32))
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        _model(x, **kw)
    return tape


def test_correct_model_passes_and_non_differentiable_nodes_are_listed():
    tape = _record(odd_layer=3, odd=lambda h: tv.where(h > 0, h, h * 0.1))
    assert len(tape.nodes) > 100
    report = tv.audit(tape)
    assert report.passed and report.failures == [] and len(report.nodes) > 100
    skipped = {s["kernel"]: s["reason"] for s in report.skipped}
    assert "not differentiable" in skipped[K.GREATER]


def test_audit_names_the_one_overridden_gradient_among_a_hundred_ops():
    def wrong_sigmoid(dy, saved, attrs):
        (y,) = saved
        return {"x": lambda: dy * y * (1 - y) * 1.5}

    def odd(h):
        with tv.gradient_override(K.SIGMOID, wrong_sigmoid):
            return tv.sigmoid(h)

    tape = _record(odd_layer=7, odd=odd)
    planted = [n.id for n in tape.nodes if n.kernel == K.SIGMOID]
    report = tv.audit(tape)
    assert len(tape.nodes) > 100 and len(planted) == 1
    assert report.failed_node_ids == planted
    (bad,) = report.failures
    assert bad.kernel == K.SIGMOID and bad.style == "override" and bad.failure == "value mismatch"
    assert bad.source[0] == __file__
    check = bad.report.checks[0]
    assert check.arg == "x" and check.kind == "entries" and not check.passed_mask.any()
    assert report[planted[0]] is bad


def test_audit_finds_a_wrong_registered_gradient_of_a_custom_kernel():
    tv.register_kernel("AuditCube", "numpy", lambda i, a: i["x"] ** 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tv.register_gradient("AuditCube", lambda dy, s, a: {"x": lambda: dy * s[0] * s[0] * 2},
                             inputs_to_save=("x",))  # fmt: skip  # 2x^2, should be 3x^2
    try:
        tape = _record(odd_layer=5, odd=lambda h: tv.run_kernel("AuditCube", {"x": h * 0.5}))
        report = tv.audit(tape)
        (bad,) = report.failures
        assert bad.kernel == "AuditCube"
        assert bad.node_id == next(n.id for n in tape.nodes if n.kernel == "AuditCube")
    finally:
        tv.unregister_gradient("AuditCube")
        tv.unregister_kernel("AuditCube", "numpy")


def test_audit_classifies_a_gradient_that_ignores_dy():
    def odd(h):
        with tv.gradient_override(K.TANH, lambda dy, s, a: {"x": lambda: 1 - s[0] * s[0]}):
            return tv.tanh(h)

    report = tv.audit(_record(odd_layer=2, odd=odd))
    (bad,) = report.failures
    assert bad.kernel == K.TANH and bad.failure == "not scaled by dy"


def test_audit_checks_custom_primitives_that_can_rerun_their_forward():
    x = tv.tensor(RNG.standard_normal(5))
    my_sin = tv.Primitive("MySin", label="my_sin", kind="custom_grad", forward=tv.sin)
    opaque = tv.Primitive("NoForward", label="opaque", kind="custom_grad")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        y = tv.tensor(np.sin(x.numpy()))
        for grad in (lambda dy: dy * tv.cos(x), lambda dy: dy * tv.sin(x)):
            vjp = tv.GradConfig("MySin", lambda dy, saved, attrs, g=grad: {"x": lambda: g(dy)})
            (node,) = tv.record(my_sin, {"x": x}, (y,), grad=vjp)
        tv.record(opaque, {"x": x}, (y,), grad=tv.GradConfig("NoForward", None))
    report = tv.audit(tape)
    good, bad = report.nodes
    assert good.passed and not bad.passed and report.failed_node_ids == [bad.node_id]
    assert report.skipped[0]["reason"] == (
        "primitive 'opaque' has no kernel and no forward (no way to re-run it)"
    )


def test_released_tape_is_refused_with_a_clear_message():
    x = tv.tensor([1.0, 2.0])
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.sum(tv.exp(x))
    tape.gradient(y, x)
    with pytest.raises(ValueError, match="persistent=True"):
        tv.audit(tape)


def test_audit_report_plain_data_and_html():
    def odd(h):
        with tv.gradient_override(K.TANH, lambda dy, s, a: {"x": lambda: dy * 2.0}):
            return tv.tanh(h)

    report = tv.audit(_record(odd_layer=1, odd=odd))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["passed"] is False and data["failed_node_ids"] == report.failed_node_ids
    assert "FAIL" in report._repr_html_() and "Tanh" in report.summary()


@tv.custom_grad
def _square_wrong(x, save):
    save([x])
    return {"value": x * x, "grad_func": lambda dy, saved: dy * saved[0] * 3.0}  # 2x is right


@tv.custom_grad
def _square_right(x, save):
    save([x])
    return {"value": x * x, "grad_func": lambda dy, saved: dy * saved[0] * 2.0}


class _Cube(tv.DifferentiableFunction):
    def __init__(self, factor):
        super().__init__(save_inputs_for_backward=True)
        self.factor = factor

    def forward(self, X):
        return X**3

    def backward(self, dLdY, compute_gradients, X):
        return dLdY * self.factor * X**2  # 3 is right


@pytest.mark.parametrize(
    "right,wrong,style",
    [
        (_square_right, _square_wrong, "custom_grad"),
        (_Cube(3.0), _Cube(2.0), "DifferentiableFunction"),
    ],
)
def test_audit_names_a_wrong_custom_gradient_of_each_style(right, wrong, style):
    def odd(h):
        return wrong(right(h * 0.5))

    tape = _record(odd_layer=4, odd=odd)
    customs = [n for n in tape.nodes if n.style == style]
    report = tv.audit(tape)
    assert len(customs) == 2 and len(tape.nodes) > 100
    assert report.failed_node_ids == [customs[1].id]
    assert report.failures[0].style == style and report.failures[0].failure == "value mismatch"


def test_audit_flags_nothing_across_many_op_families():
    img = tv.tensor(RNG.uniform(-1, 1, (2, 6, 6, 3)).astype(np.float32))
    filt = tv.tensor(RNG.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32) / 3)
    with tv.Tape(persistent=True) as tape:
        tape.watch([img, filt])
        h = tv.relu(tv.conv2d(img, filt, padding="same"))
        h = tv.avg_pool2d(h, 2) + tv.max_pool2d(h, 2)
        flat = tv.reshape(h, (2, -1))
        parts = tv.split(flat, 2, axis=1)
        z = tv.concat([parts[1], tv.exp(parts[0] * 0.1)], axis=1)[:, 3:]
        z = tv.pad(z, ((0, 0), (1, 1))) + tv.cast(
            tv.sigmoid(tv.cast(z[:, :1], "float64")), "float32"
        )
        z = tv.where(z > 0.2, z, z * z) / (tv.abs(z) + 1.0)
        loss = tv.sum(tv.log_softmax(z) * tv.softmax(z)) + tv.sum(tv.sqrt(tv.square(z) + 1) ** 1.5)
    report = tv.audit(tape, mode="full")
    assert report.passed, report.summary()
    assert len(report.nodes) >= 20 and {n.kernel for n in report.nodes} >= {
        K.CONV2D,
        K.MAX_POOL,
        K.AVG_POOL,
        K.SPLIT,
        K.CONCAT,
        K.PAD,
        K.CAST,
        K.SELECT,
        K.POW,
    }
    assert loss.dtype == np.float32
