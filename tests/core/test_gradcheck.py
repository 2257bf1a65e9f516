"""check_grads: correct gradients pass, each failure class is produced on purpose and named."""

import json
import warnings

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core.check.differences import jacobians_per_element
from tapeviz.core.check.function_problem import FunctionProblem
from tapeviz.core.registry import kernel_names as K

RNG = np.random.default_rng(0)
X3 = np.array([0.3, -0.7, 1.2])


def _r(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


W = tv.tensor(_r(5, 4) / 2)
IMG = _r(2, 5, 5, 3)
FILT = _r(3, 3, 3, 2) / 3

# (name, f, args): correct built-in gradients across families, shapes and broadcasts
CASES = [
    ("tanh", lambda x: tv.tanh(x), [_r(3)]),
    ("exp", lambda x: tv.exp(x), [_r(2, 3)]),
    ("log", lambda x: tv.log(x), [_r(4, lo=0.5, hi=2)]),
    ("sqrt", lambda x: tv.sqrt(x), [_r(4, lo=0.5, hi=2)]),
    ("rsqrt", lambda x: tv.rsqrt(x), [_r(4, lo=0.5, hi=2)]),
    ("sigmoid", lambda x: tv.sigmoid(x), [_r(3, 2)]),
    ("softplus", lambda x: tv.softplus(x), [_r(5)]),
    ("gelu", lambda x: tv.gelu(x), [_r(5)]),
    ("elu", lambda x: tv.elu(x), [_r(5)]),
    ("sin_cos", lambda x: tv.sin(x) * tv.cos(x), [_r(4)]),
    ("reciprocal", lambda x: tv.reciprocal(x), [_r(3, lo=0.5, hi=2)]),
    ("add_broadcast", lambda a, b: a + b, [_r(2, 3), _r(3)]),
    ("mul_broadcast", lambda a, b: a * b, [_r(2, 1), _r(1, 3)]),
    ("div", lambda a, b: a / b, [_r(3), _r(3, lo=0.5, hi=2)]),
    ("pow", lambda a, b: a**b, [_r(3, lo=0.5, hi=2), _r(3)]),
    ("scalar_out", lambda x: tv.sum(x * x), [_r(2, 2)]),
    ("sum_axis", lambda x: tv.sum(x, axis=1), [_r(3, 4)]),
    ("mean_keepdims", lambda x: tv.mean(x, axis=0, keepdims=True), [_r(3, 4)]),
    ("prod", lambda x: tv.prod(x, axis=1), [_r(2, 3)]),
    ("softmax", lambda x: tv.softmax(x), [_r(2, 4)]),
    ("log_softmax", lambda x: tv.log_softmax(x, axis=0), [_r(3, 2)]),
    ("logsumexp", lambda x: tv.logsumexp(x, axis=1), [_r(2, 3)]),
    ("matmul_vec", lambda x: tv.matmul(W, x), [_r(4)]),
    ("matmul_batched", lambda a, b: a @ b, [_r(2, 3, 4), _r(4, 2)]),
    ("reshape_transpose", lambda x: tv.transpose(tv.reshape(x, (3, 2))), [_r(2, 3)]),
    ("concat", lambda a, b: tv.concat([a, b], axis=1), [_r(2, 2), _r(2, 3)]),
    ("split", lambda x: tv.split(x, 2, axis=0)[1] * 2, [_r(4, 2)]),
    ("getitem", lambda x: x[1:, ::2], [_r(3, 4)]),
    ("gather_index", lambda x: x[np.array([0, 2, 2])], [_r(3, 2)]),
    ("pad", lambda x: tv.pad(x, ((1, 0), (0, 2))), [_r(2, 2)]),
    ("tile", lambda x: tv.tile(x, (2, 1)), [_r(2, 3)]),
    ("broadcast_to", lambda x: tv.broadcast_to(x, (3, 2)), [_r(2)]),
    ("where", lambda a, b: tv.where(a > 0, a, b), [_r(4), _r(4)]),
    ("conv2d", lambda x, w: tv.conv2d(x, w, padding="same"), [IMG, FILT]),
    ("avg_pool", lambda x: tv.avg_pool2d(x, 2), [IMG]),
    ("max_pool", lambda x: tv.max_pool2d(x, 2), [IMG]),
]


@pytest.mark.parametrize("mode", ["full", "fast"])
@pytest.mark.parametrize("name,f,args", CASES, ids=[c[0] for c in CASES])
def test_correct_gradients_are_never_flagged(name, f, args, mode):
    report = tv.check_grads(f, *args, mode=mode)
    assert report.passed and report.failures == []
    kinds = {c.kind for c in report.checks}
    # forward mode through core.jvp was checked too (max_pool: MaxPoolGrad has no gradient,
    # so jvp cannot run, and the report says so)
    assert "forward" in kinds or any("MaxPoolGrad" in n for n in report.notes)


def test_forward_mode_that_cannot_run_is_reported_not_hidden():
    # the gradient is right but made by a kernel without a gradient: jvp cannot run
    tv.register_kernel("GcScale", "numpy", lambda i, a: i["dy"] * (1 - np.tanh(i["x"]) ** 2))

    def grad_fn(dy, s, a):
        return {"x": lambda: tv.run_kernel("GcScale", {"dy": dy, "x": s[0]})}

    try:
        with tv.gradient_override(K.TANH, grad_fn, inputs_to_save=("x",), outputs_to_save=()):
            report = tv.check_grads(lambda x: tv.tanh(x), X3)
    finally:
        tv.unregister_kernel("GcScale", "numpy")
    assert report.passed and [c.kind for c in report.checks] == ["entries"]
    assert any("forward mode not checked" in n and "GcScale" in n for n in report.notes)


def test_forward_mode_error_is_a_finding():
    def grad_fn(dy, s, a):  # a gradient whose own gradient crashes
        return {"x": lambda: tv.run_kernel("GcBadGrad", {"dy": dy})}

    tv.register_kernel("GcBadGrad", "numpy", lambda i, a: i["dy"] * 2.0)
    tv.register_gradient("GcBadGrad", lambda g, s, a: {"dy": lambda: 1 / 0})
    try:
        report = _override(grad_fn, f=lambda x: tv.tanh(x))
    finally:
        tv.unregister_gradient("GcBadGrad")
        tv.unregister_kernel("GcBadGrad", "numpy")
    assert set(report.failures) == {"value mismatch", "forward-mode error"}
    assert "division by zero" in report.errors[0]["message"]


SECOND_ORDER = ["tanh", "exp", "log", "softmax", "mul_broadcast", "matmul_vec", "conv2d"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order_of_correct_gradients_passes(name):
    f, args = next((f, a) for n, f, a in CASES if n == name)
    report = tv.check_grads(f, *args, order=2)
    assert report.passed
    assert any(c.order == 2 and isinstance(c.arg, tuple) for c in report.checks)


def _tanh_sum(x):
    return tv.sum(tv.tanh(x) * 2.0)


def _override(grad_fn, f=_tanh_sum, args=(X3,), kernel=K.TANH, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tv.gradient_override(kernel, grad_fn):
            return tv.check_grads(f, *args, raise_on_failure=False, **kw)


def test_checker_catches_a_wrong_gradient_and_names_the_element():
    bump = np.array([1.0, 1.0, 1.5])  # wrong only at element 2
    report = _override(lambda dy, s, a: {"x": lambda: dy * (1 - s[0] * s[0]) * bump})
    assert not report.passed and report.failure == "value mismatch"
    check = report.checks[0]
    assert check.worst_index == (2,) and check.passed_mask.tolist() == [True, True, False]
    worst = check.worst_elements(1)[0]
    expected = 2 * (1 - np.tanh(1.2) ** 2)
    assert worst["numerical"] == pytest.approx(expected, rel=1e-6)
    assert worst["analytic"] == pytest.approx(1.5 * expected, rel=1e-9)
    assert worst["band"] == pytest.approx(check.atol + check.rtol * abs(expected))
    with pytest.raises(tv.GradientCheckError) as err:
        with tv.gradient_override(K.TANH, lambda dy, s, a: {"x": lambda: dy * bump}):
            tv.check_grads(_tanh_sum, X3)
    assert err.value.report.checks[0].failure == "value mismatch"
    assert "arg 0" in str(err.value) and "(2,)" in str(err.value)


def test_gradient_not_scaled_by_dy():
    # correct when dy is all ones, which is what sum feeds tanh: only doubling dy shows it
    report = _override(lambda dy, s, a: {"x": lambda: (1 - s[0] * s[0]) * 2.0})
    assert report.checks[0].failure == "not scaled by dy"
    assert np.allclose(report.checks[0].analytic, report.checks[0].numerical)
    assert "not 2" in report.checks[0].detail


def test_nondeterministic_backward():
    noise = np.random.default_rng(5)
    report = _override(
        lambda dy, s, a: {"x": lambda: dy * (1 - s[0] * s[0]) + noise.normal(0, 1e-9, 3)}
    )
    assert report.checks[0].failure == "nondeterministic backward"
    assert report.checks[0].passed_mask.all()  # within tolerance, yet not reentrant


def test_wrong_shape_names_the_node():
    report = _override(lambda dy, s, a: {"x": lambda: tv.sum(dy)}, f=lambda x: tv.sum(tv.tanh(x)))
    assert report.failure == "wrong shape"
    (err,) = report.errors
    assert "Tanh" in err["message"] and "(node 0)" in err["message"]
    assert err["node_id"] == 0  # f's first op, the tanh


def test_wrong_dtype():
    report = _override(lambda dy, s, a: {"x": lambda: tv.cast(dy * (1 - s[0] * s[0]), "float32")})
    assert report.failure == "wrong dtype" and "float32" in report.errors[0]["message"]


def test_missing_gradient():
    tv.register_kernel("GcCube", "numpy", lambda i, a: i["x"] ** 3)
    try:
        f = lambda x: tv.sum(tv.run_kernel("GcCube", {"x": x}))  # noqa: E731
        report = tv.check_grads(f, X3, raise_on_failure=False)
        assert report.failure == "missing gradient" and "GcCube" in report.errors[0]["message"]
    finally:
        tv.unregister_kernel("GcCube", "numpy")


def test_gradient_that_ignores_an_input():
    report = _override(
        lambda dy, s, a: {"a": lambda: dy * s[1]},
        f=lambda x, y: tv.sum(x * y),
        args=(X3, X3[::-1].copy()),
        kernel=K.MUL,
    )
    first, second = report.checks[:2]
    assert first.passed and second.failure == "ignores input"
    assert "no path" in second.detail  # the tape itself has no gradient for it


def test_numpy_escape_is_caught_by_direct_calls():
    # the tape sees a constant; finite differences of the real function do not
    f = lambda x: tv.sum(tv.tensor(np.sin(x.numpy())) + x)  # noqa: E731
    report = tv.check_grads(f, X3, raise_on_failure=False)
    check = report.checks[0]
    assert check.failure == "value mismatch" and check.strategy == "per element"
    assert np.allclose(check.numerical, np.cos(X3) + 1, atol=1e-6)


def test_forward_mode_mismatch_when_gradient_leaves_ops():
    # right values, but computed outside ops: the double-VJP that core.jvp uses sees no dy
    def grad_fn(dy, s, a):
        return {"x": lambda: tv.tensor(dy.numpy() * (1 - s[0].numpy() ** 2))}

    report = _override(grad_fn, f=lambda x: tv.tanh(x) * 2.0)
    assert report.checks[0].passed
    assert report.failures == ["forward-mode mismatch"]


def test_second_order_catches_a_gradient_that_is_right_only_at_first_order():
    report = _override(lambda dy, s, a: {"x": lambda: dy * tv.stop_gradient(1 - s[0] * s[0])},
                       order=2)  # fmt: skip
    first = [c for c in report.checks if c.order == 1]
    second = [c for c in report.checks if c.order == 2]
    assert [c.passed for c in first if c.kind == "reverse"] == [True]
    # the second derivative is zero where finite differences are not
    assert second[0].arg == (0, 0) and second[0].failure == "ignores input"


def test_fast_mode_passes_with_projections_and_falls_back_to_find_the_element():
    W100 = tv.tensor(_r(100, 100) / 10)
    f = lambda x: tv.sum(tv.tanh(W100 @ x))  # noqa: E731
    x = _r(100)
    fast = tv.check_grads(f, x, mode="fast")
    assert fast.checks[0].kind == "projection" and fast.checks[0].analytic.shape == ()
    bump = np.ones(100)
    bump[37] = 1.3
    report = _override(lambda dy, s, a: {"x": lambda: dy * (1 - s[0] * s[0]) * bump},
                       args=(x,), mode="fast")  # fmt: skip
    check = report.checks[0]
    assert check.kind == "reverse" and check.worst_index == (37,)
    assert any("fast mode" in n for n in report.notes)


def test_float32_inputs_are_checked_in_float64_with_a_note():
    report = tv.check_grads(lambda x: tv.sum(tv.tanh(x)), X3.astype(np.float32))
    assert report.checks[0].analytic.dtype == np.float64
    assert any("float32" in n and "float64" in n for n in report.notes)


def test_function_computing_in_float32_gets_float32_tolerances():
    f = lambda x: tv.sum(tv.tanh(tv.cast(x, "float32")))  # noqa: E731
    report = tv.check_grads(f, X3)
    assert report.eps == 1e-3 and any("returned float32" in n for n in report.notes)


def test_batched_replay_matches_one_call_per_element():
    def f(x, w):
        h = tv.tanh(tv.reshape(x, (2, 3)) @ w)
        parts = tv.split(tv.concat([h, h * h], axis=1), 2, axis=1)
        return tv.softmax(tv.pad(parts[0][:, 1:], ((0, 1), (1, 0))), axis=0) * tv.sum(h)

    args = [_r(6), _r(3, 3)]
    p = FunctionProblem(f, args, [0, 1], "f")
    for k in range(2):
        report = tv.check_grads(f, *args)
        assert report.checks[k].strategy == "batched replay"
        reference = jacobians_per_element(p, k, 1e-6)[0]
        np.testing.assert_allclose(report.checks[k].jacobian, reference, atol=1e-8)


def test_kinks_accept_a_one_sided_derivative_but_not_a_wrong_one():
    x = _r(1, 2, 2, 1)
    x[0, 0, 0, 0] = x[0, 1, 1, 0] = 2.0  # a tie for the maximum: a kink of max_pool
    report = tv.check_grads(lambda t: tv.max_pool2d(t, 2), x, forward=False)
    check = report.checks[0]
    assert report.passed and check.kinks is not None and check.kinks.sum() == 2
    assert "2 element(s) on a kink" in check.line()  # said on the line it concerns
    relu_at_zero = np.array([0.0, 0.5, -0.5])
    assert tv.check_grads(tv.relu, relu_at_zero).passed
    bad = _override(lambda dy, s, a: {"x": lambda: dy * 2.0}, f=tv.relu, args=(relu_at_zero,),
                    kernel=K.RELU)  # fmt: skip
    assert bad.checks[0].passed_mask.tolist() == [False, False, False]


def test_numerical_jacobian():
    jac = tv.numerical_jacobian(lambda x: x * x, [np.array([1.0, 2.0])], 0)
    np.testing.assert_allclose(jac, np.diag([2.0, 4.0]), atol=1e-6)


def test_eps_sweep_verdicts():
    healthy = tv.check_grads(_tanh_sum, X3).eps_sweep()
    assert 1.7 < healthy.slope_truncation < 2.3 and healthy.verdict.startswith("healthy")
    assert healthy.error.shape == healthy.eps.shape == healthy.truncation_line.shape
    assert healthy.dominant in ("truncation", "rounding") and 1e-8 < healthy.best_eps < 1e-2
    bad = _override(lambda dy, s, a: {"x": lambda: dy * (1 - s[0] * s[0]) * 1.01}).eps_sweep()
    assert "analytic gradient is wrong" in bad.verdict
    quad = tv.check_grads(lambda x: tv.sum(x * x), X3).eps_sweep()
    assert quad.verdict.startswith("rounding error dominates")
    json.dumps(healthy.to_dict())


def test_report_html_and_plain_data():
    report = _override(lambda dy, s, a: {"x": lambda: dy * (1 - s[0] * s[0]) * 1.5})
    html = report._repr_html_()
    assert "FAIL" in html and "same factor" in html and "1.5 ×" in html and "<table>" in html
    data = json.loads(json.dumps(report.to_dict()))
    assert data["passed"] is False and data["checks"][0]["failure"] == "value mismatch"
    assert data["checks"][0]["verdict"].startswith("off by the same factor")
    assert data["checks"][0]["worst"]["index"] == list(report.checks[0].worst_index)
    assert "PASS" in tv.check_grads(_tanh_sum, X3)._repr_html_()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="mode"):
        tv.check_grads(_tanh_sum, X3, mode="quick")
    with pytest.raises(ValueError, match="no floating argument"):
        tv.check_grads(lambda i: tv.sum(tv.cast(i, "float64")), np.array([1, 2]))
