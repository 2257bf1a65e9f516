"""Issue 22, the checker checked (and issue 27's check_grads outputs and audit text):
no false alarm on a correct built-in, at random and special points, and no miss of a planted
wrong VJP (order 1 and 2, the three custom styles). The reference for "correct" is HIPS
autograd: the oracle cases (tests/core/oracle_cases_*.py) are the points where tapeviz and
autograd agree."""

from __future__ import annotations

import importlib
import pathlib
import re
import warnings

import autograd
import autograd.numpy as anp
import autograd.numpy.random as npr
import numpy as np
import pytest

import tapeviz as tv
import tapeviz.core as core

_HERE = pathlib.Path(__file__).parent
CASES = [
    c
    for p in sorted(_HERE.glob("oracle_cases_*.py"))
    for c in importlib.import_module(p.stem).CASES
]
# Where the checker still reports FAIL although tapeviz, autograd and PyTorch agree, each
# examined: at a tie the gradient of maximum/minimum shares dy, and its derivative (order 2)
# is not a limit of Hessians on either side, which finite differences see (a finding about
# second derivatives at ties, not the checker); sort at ties returns the stable permutation,
# a limiting Jacobian that no single-coordinate one-sided difference reaches.
KNOWN = {"maximum[tie]", "minimum[tie]", "sort[ties]"}


def _args(case):
    return [np.asarray(a, np.float64) for a in case.args]


def _recorded(case, args):
    xs = [core.tensor(a) for a in args]
    with np.errstate(all="ignore"), core.Tape(persistent=True) as tape:
        tape.watch([xs[i] for i in case.argnums])
        case.tv_fn(*xs)
    return tape


@pytest.mark.parametrize("case", [c for c in CASES if c.id not in KNOWN], ids=lambda c: c.id)
def test_no_false_alarm_on_any_builtin_at_random_and_special_points(case):
    args = _args(case)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # none may leak
        report = core.check_grads(case.tv_fn, *args, wrt=list(case.argnums),
                                  order=2 if case.hvp else 1, raise_on_failure=False)  # fmt: skip
        audit = core.audit(_recorded(case, args))
    assert report.passed, report.summary()
    assert audit.passed, audit.summary()


def _wrong(kernel, scale=1.5, shift=0.25):
    orig = core.get_gradient(kernel)

    def grad_fn(dy, saved, attrs):
        return {
            n: (lambda t=t: t() * scale + shift) for n, t in orig.grad_fn(dy, saved, attrs).items()
        }

    return grad_fn


def _kernel(case) -> str:
    return case.kernels[0] if isinstance(case.kernels, (list, tuple)) else case.kernels


def _replaceable(case) -> bool:
    """A case whose first kernel has a plain registered gradient to plant a wrong one in."""
    g = core.get_gradient(_kernel(case))
    return g is not None and not g.wants_needed and all(np.size(a) for a in case.args)


PLANTED = [c for c in CASES if c.args and _replaceable(c)][::3]


@pytest.mark.parametrize("case", PLANTED, ids=lambda c: c.id)
def test_a_planted_wrong_vjp_is_never_missed(case):
    kernel = _kernel(case)
    args = _args(case)
    right = _gradients(case, args)
    with core.gradient_override(kernel, _wrong(kernel)):
        tape = _recorded(case, args)
        report = core.check_grads(case.tv_fn, *args, wrt=list(case.argnums), raise_on_failure=False)
        planted = _gradients(case, args)
    audit = core.audit(tape)
    if all(np.allclose(a, b, equal_nan=True) for a, b in zip(right, planted)):
        return  # the wrong VJP does not reach the gradient (behind a stop_gradient, times 0)
    assert not report.passed, report.summary()
    assert not audit.passed, audit.summary()


def _gradients(case, args):
    with np.errstate(all="ignore"):
        gs = core.grads(lambda *xs: core.sum(case.tv_fn(*xs) * 1.0))(*args)
    return [gs[i].numpy() for i in case.argnums]


def _sin_first_order_only(dy, saved, attrs):
    (x,) = saved  # right value, but built on a constant: its derivative is lost
    return {"x": lambda: dy * core.cos(core.stop_gradient(x))}


def test_a_vjp_wrong_only_at_order_2_fails_at_order_2():
    x = np.array([0.3, -1.2, 2.0])
    with core.gradient_override("Sin", _sin_first_order_only, inputs_to_save=["x"]):
        first = core.check_grads(lambda t: core.sin(t), x, forward=False, raise_on_failure=False)
        second = core.check_grads(lambda t: core.sin(t), x, order=2, forward=False,
                                  raise_on_failure=False)  # fmt: skip
    assert first.passed and not second.passed
    bad = [c for c in second.checks if not c.passed]
    assert bad and all(c.order == 2 and "Confirmed" in c.line() for c in bad)


def _custom_styles(wrong: bool):
    k = 3.5 if wrong else 3.0

    @core.custom_grad
    def cube(x, save):
        save([x])
        return x**3, lambda dy, saved: dy * k * saved[0] ** 2

    class Cube(core.DifferentiableFunction):
        def __init__(self):
            super().__init__(save_inputs_for_backward=True)

        def forward(self, x):
            return x**3

        def backward(self, dy, compute_gradients, x):
            return dy * k * x**2

    def g(x, dy):
        return dy * k * x * x

    layer = core.CompiledLayer(lambda x: x * x * x, gradient=g)
    return {"custom_grad": cube, "DifferentiableFunction": Cube(), "CompiledLayer": layer}


@pytest.mark.parametrize("style", ["custom_grad", "DifferentiableFunction", "CompiledLayer"])
def test_the_three_custom_styles_pass_when_right_and_fail_when_wrong(style):
    x = np.array([0.5, -1.5, 2.0])
    for wrong in (False, True):
        op = _custom_styles(wrong)[style]
        report = core.check_grads(op, x, raise_on_failure=False)
        t = core.tensor(x)
        with core.Tape(persistent=True) as tape:
            tape.watch(t)
            core.sum(op(t) * 2.0)
        audit = core.audit(tape)
        assert report.passed != wrong and audit.passed != wrong, (style, report.summary())
        if wrong:
            assert audit.failures[0].style == style


def test_custom_grad_wrong_only_at_order_2_fails_at_order_2():
    @core.custom_grad
    def cube(x, save):
        save([x])  # the gradient is right, but built on a constant: its derivative is lost
        return x**3, lambda dy, saved: dy * 3 * core.stop_gradient(saved[0]) ** 2

    x = np.array([0.5, -1.5, 2.0])
    assert core.check_grads(cube, x, forward=False, raise_on_failure=False).passed
    assert not core.check_grads(cube, x, order=2, forward=False, raise_on_failure=False).passed


# --- the examples of the issue ------------------------------------------------------------
def _quiet_audit(tape):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return core.audit(tape)


def test_audit_of_a_constant_exponent_at_a_negative_base():
    v = core.variable([-1.0, 2.0, -3.5])
    with core.Tape(persistent=True) as tape:
        core.sum(v**2)
    report = _quiet_audit(tape)
    assert report.passed, report.summary()
    assert [c.label for c in report.nodes[0].report.checks] == ["input 'a'"]  # not the 2


def test_audit_at_sqrt_0_says_what_it_could_not_check():
    x = core.variable([0.0, 4.0])
    with core.Tape(persistent=True) as tape:
        core.sum(core.sqrt(x))
    report = _quiet_audit(tape)
    assert report.passed, report.summary()
    line = report.nodes[0].report.checks[0].line()
    assert "1 element(s) not checkable" in line and "sqrt at 0" in line


def test_the_readme_ten_lines_pass_everywhere():
    x = core.tensor([0.5, -1.0, 2.0], name="x")
    w = core.variable([[0.5, -0.3], [0.1, 0.8], [-0.6, 0.2]], name="w")
    with core.Tape(persistent=True) as tape:
        core.sum(core.tanh(x @ w) ** 2)
    assert _quiet_audit(tape).passed
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for order in (1, 2):
            assert core.check_grads(lambda x: core.tanh(x) * x, x, order=order).passed
            assert core.check_grads(lambda x, w: core.sum(core.tanh(x @ w) ** 2), x, w,
                                    order=order).passed  # fmt: skip


def _hips_pinv_draw():
    """HIPS autograd's test_pinv draws (tests/test_linalg.py), with seed 42: the stacked
    (2, 5, 5) matrix of the low-rank loop at M = 5."""
    npr.seed(42)
    n, d = 5, 2
    for m in range(n // 2, n + n // 2 + 1):
        npr.randn(n, m), npr.randn(d, n, m)
    for m in range(n // 2, n + 1):
        npr.randn(n, m)
        mat = npr.randn(d, n, m)
    return mat


def test_order_2_confirms_a_failure_before_reporting_it():
    mat = _hips_pinv_draw()
    T = lambda x: core.swapaxes(x, -1, -2)  # noqa: E731
    # HIPS autograd's draw, where its own finite differences of pinv miss: a pass, whether
    # the first difference misses on this machine's LAPACK or only the extrapolation agrees
    assert core.check_grads(lambda x: core.linalg.pinv(T(x) @ x), mat, order=2).passed
    # a miss on every machine (float64 rounding alone, no LAPACK): near 1e8, a step of 1e-6
    # is represented to 1.5e-8, so the second difference is ~0.3% off; it is confirmed, not
    # reported as a wrong gradient
    x = np.array([0.3, -0.7, 0.55])
    report = core.check_grads(lambda x: core.sum((x + 1e8) ** 2), x, order=2)
    confirmed = [c for c in report.checks if c.confirmed and c.order == 2]
    assert report.passed and confirmed
    assert "missed by" in confirmed[0].line() and "not a wrong gradient" in confirmed[0].line()
    # tapeviz's second derivative there is autograd's (the finite difference was off)
    v = np.random.default_rng(1).standard_normal(mat.shape)
    f_ag = lambda x: anp.sum(anp.linalg.pinv(anp.swapaxes(x, -1, -2) @ x) * v)  # noqa: E731
    u = np.random.default_rng(2).standard_normal(mat.shape)
    hvp_ag = autograd.grad(lambda x: anp.sum(autograd.grad(f_ag)(x) * u))(mat)
    f_tv = lambda x: core.sum(core.linalg.pinv(T(x) @ x) * v)  # noqa: E731
    hvp_tv = core.grad(lambda x: core.sum(core.grad(f_tv)(x) * u))(core.tensor(mat))
    # XᵀX is ill-conditioned (entries of its pinv's derivatives ~1e3): measured 3.3e-8 apart
    np.testing.assert_allclose(hvp_tv.numpy(), hvp_ag, rtol=1e-6)


def test_a_function_computing_in_float32_inside_is_not_called_wrong():
    f = lambda x: core.cast(core.cast(x, "float32") * 2.0, "float64")  # noqa: E731
    report = core.check_grads(f, np.array([[0.3, -1.7], [2.5, 0.01]]))
    assert report.passed and any(c.confirmed for c in report.checks)


def test_differentiable_function_forward_mode_is_not_claimed():
    report = core.check_grads(_custom_styles(False)["DifferentiableFunction"], [0.5, 2.0])
    assert report.passed and not [c for c in report.checks if c.kind == "forward"]
    assert any("forward mode not checked" in n and "Cube" in n for n in report.notes)


def test_a_kink_is_said_on_its_line_and_not_shown_as_the_worst_error():
    report = core.check_grads(core.relu, [0.0, 1.0, -2.0])
    line = report.checks[0].line()
    assert "abs err 0.5" not in line and "1 element(s) on a kink" in line


def test_every_line_says_what_it_compared():
    report = core.check_grads(lambda x: core.tanh(x) * x, [0.5, -1.0], order=2)
    pattern = re.compile(r"^.*? \[(reverse|forward) mode .+ vs (central|a directional) ")
    assert all(pattern.match(c.line()) for c in report.checks)


def test_stop_gradient_is_held_constant_by_the_numerical_side():
    f = lambda x: core.stop_gradient(x) * x  # noqa: E731
    report = core.check_grads(f, [0.5, -1.5])
    assert report.passed  # the derivative with stop_gradient's value held: x, as the gradient
    broken = lambda x: x * x  # noqa: E731 - and a wrong gradient still fails against it
    with core.gradient_override("Mul", _wrong("Mul")):
        assert not core.check_grads(broken, [0.5, -1.5], raise_on_failure=False).passed


# --- issue 27: check_grads on several outputs (autograd's split tests as the model) --------
SPLITS = {
    "split": lambda x: np.split(x, 2, axis=1),
    "array_split": lambda x: np.array_split(x, 3, axis=0),
    "hsplit": lambda x: np.hsplit(x, 2),
    "vsplit": lambda x: np.vsplit(x, 2),
    "dsplit": lambda x: np.dsplit(x, 2),
}


@pytest.mark.parametrize("name", list(SPLITS))
def test_check_grads_takes_the_list_a_split_returns(name):
    x = np.random.default_rng(0).standard_normal((4, 6, 2))
    report = core.check_grads(SPLITS[name], x, order=2)
    assert report.passed
    labels = {c.label.split(":")[0] for c in report.checks}
    assert {"output [0]", "output [1]"} <= labels


def test_check_grads_names_the_failing_output_of_a_dict():
    @core.custom_grad
    def two(x, save):
        return (x * 2, x * 3), lambda dys, s: dys[0] * 2 + dys[1] * 3.3

    report = core.check_grads(lambda x: {"a": core.tanh(x), "b": two(x)}, [0.5, -1.0],
                              raise_on_failure=False)  # fmt: skip
    failing = {c.label.split(":")[0] for c in report.checks if not c.passed}
    assert failing == {"output ['b'][1]"}
    ok = core.check_grads(lambda x: (core.sin(x), core.argmax(x)), [0.5, -1.0])
    assert ok.passed and any("not differentiable, not checked" in n for n in ok.notes)


# --- issue 27: the audit's text report ------------------------------------------------------
def test_audit_text_groups_each_node_with_its_checks_in_the_codes_names():
    class LayerNorm(core.DifferentiableFunction):
        def __init__(self):
            super().__init__(save_inputs_for_backward=True)

        def forward(self, x, gamma):
            return (x - x.mean()) * gamma

        def backward(self, dy, compute_gradients, x, gamma):
            return dy * gamma * 1.5, dy * (x - x.mean())  # dx is wrong

    core.register_kernel("Softsign22", "numpy", lambda i, a: i["x"] / (1 + np.abs(i["x"])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a first gradient of a new kernel: no override warning
        core.register_gradient("Softsign22", lambda dy, s, a: {
            "x": lambda: dy / core.square(1 + core.abs(s[0]))}, inputs_to_save=["x"])  # fmt: skip
    try:
        x, g = core.tensor([0.5, -1.0, 2.0], name="x"), core.variable([1.0, 2.0, 0.5])
        with core.Tape(persistent=True) as tape:
            tape.watch(x)
            core.sum(core.run_kernel("Softsign22", {"x": LayerNorm()(x, g)}) ** 2)
        report = core.audit(tape)
        text = report.summary().split("\n")
        assert text[1].startswith("  node 0 LayerNorm (DifferentiableFunction)")
        assert "DifferentiableFunction, DifferentiableFunction" not in report.summary()
        assert text[2].startswith("    input 'x' (X1) [") and "FAIL" in text[2]
        assert text[3].startswith("    input 'gamma' (X2) [") and "PASS" in text[3]
        assert "X1:" not in report.summary() and "'X1'" not in report.summary()
        assert tape.nodes[1].style == "builtin"  # a new kernel's gradient is no override
        everything = report.summary(passed=True)
        assert "Softsign22 (registered kernel)" in everything and "override" not in everything
    finally:
        core.unregister_gradient("Softsign22")
        core.unregister_kernel("Softsign22", "numpy")


def test_check_grads_calls_f_with_a_variable_where_the_user_passed_one():
    """A no-op form copies a Variable (Identity) but returns a Tensor as it is, so f records
    a different computation for each kind: check_grads must check the one the user runs. A
    wrong Identity gradient reached by a Variable is FAIL (found by the fuzzer, seed 57900)."""
    v = tv.variable(np.array([-1.3, 0.4]))

    def f(x):
        return tv.sum(np.moveaxis(x, -1, 0) * np.array([2.0, 3.0]))

    assert tv.check_grads(f, v, raise_on_failure=False).passed
    ident = tv.get_gradient("Identity").grad_fn

    def wrong(dy, saved, attrs):
        return {k: (lambda g=g: g() * 1.25) for k, g in ident(dy, saved, attrs).items()}

    with tv.gradient_override("Identity", wrong):
        assert not tv.check_grads(f, v, raise_on_failure=False).passed
        assert not tv.check_grads(f, v, order=2, raise_on_failure=False).passed
        # a plain array takes no Identity node: nothing wrong to find there
        assert tv.check_grads(f, v.numpy(), raise_on_failure=False).passed
    assert isinstance(v, tv.Variable) and np.allclose(v.numpy(), [-1.3, 0.4])
