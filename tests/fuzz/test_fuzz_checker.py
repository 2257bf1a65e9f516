"""The checker checked: ``tv.check_grads`` and ``tv.audit`` over every built-in op of the fuzz
table, at random and at special points.

- No false alarm: wherever PyTorch agrees with tapeviz's value and gradient, both report PASS.
- No miss: a planted wrong VJP (every built-in kernel, by ``gradient_override``) is FAIL for
  both; a VJP right at first order but wrong at second is FAIL for ``check_grads(order=2)``;
  the three custom styles with a wrong gradient are FAIL, at order 1 and 2.
"""

from __future__ import annotations

import warnings

import fuzz_ops
import fuzz_ops_more  # noqa: F401 - fills fuzz_ops.OPS
import numpy as np
import pytest
from fuzz_gen import Generator
from fuzz_program import leaves_source, tv_source
from fuzz_run import Profile, _exec, inputs, profile_from_env, run_program

import tapeviz as tv

LONG = profile_from_env().name == "long"
DIFF_OPS = [op for op in fuzz_ops.OPS if op.diff and op.group != "layer"]
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def one_op_programs(special: bool, per_op: int):
    """Per op: ``per_op`` one-statement float64 programs (at special points or not) whose
    value and gradient PyTorch confirms; each as (program, loss, diff leaves)."""
    out = []
    for k, op in enumerate(DIFF_OPS):
        prof = Profile("checker", programs=0, max_stmts=1, special=float(special),
                       dtypes={"float64": 1.0}, chain=0.0)  # fmt: skip
        gen, found = Generator([op], prof), 0
        for seed in range(50_000 + 100 * k, 50_000 + 100 * k + 40):
            prog = gen.program(seed)
            if not prog.diff or not prog.float_outputs or any(
                    leaf.value.size == 0 for leaf in prog.leaves):  # fmt: skip
                continue
            if run_program(prog, ("value", "grad"))[0]:
                continue  # tapeviz and PyTorch disagree: the program test reports it
            out.append((prog, *_loss(prog)))
            found += 1
            if found == per_op:
                break
    return out


def _loss(prog):
    ns = _exec(leaves_source(prog) + "\n" + tv_source(prog), "tv")
    xs = [ns[leaf.name] for leaf in prog.leaves]
    ws, _ = inputs(prog)
    return ns["tv_loss"](ns["f"], xs, prog.diff, ws), [xs[i] for i in prog.diff]


def _check(loss, xd, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tv.check_grads(loss, *xd, raise_on_failure=False, **kw)


def _audit(loss, xd):
    with tv.Tape(persistent=True) as tape:
        tape.watch(xd)
        loss(*xd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tape, tv.audit(tape)


def _alarms(cases, order=1):
    alarms = []
    for prog, loss, xd in cases:
        report = _check(loss, xd, order=order)
        if not report.passed:
            alarms.append(f"check_grads(order={order}) seed {prog.seed} {tv_source(prog)}\n"
                          f"{report.summary()}")  # fmt: skip
        if order == 1:
            _, audit = _audit(loss, xd)
            if not audit.passed:
                alarms.append(f"audit seed {prog.seed} {tv_source(prog)}\n{audit.summary()}")
    return alarms


@pytest.mark.parametrize("special", [False, True], ids=["random", "special"])
def test_no_false_alarm_where_pytorch_agrees(special):
    cases = one_op_programs(special, per_op=3 if LONG else 1)
    assert len(cases) > len(DIFF_OPS) // 2, len(cases)
    alarms = _alarms(cases)
    assert not alarms, f"{len(alarms)} false alarms of {len(cases)} programs:\n\n" + "\n\n".join(
        alarms[:10]
    )


def test_no_false_alarm_at_second_order():
    cases = one_op_programs(False, per_op=2 if LONG else 1)
    smooth = [c for c in cases if c[0].stmts[0].op.group in ("elementwise", "linalg", "reduce")]
    alarms = _alarms(smooth[:: 1 if LONG else 3], order=2)
    assert not alarms, f"{len(alarms)} false alarms:\n\n" + "\n\n".join(alarms[:10])


def _wrong(grad_fn, first_order_right=False):
    """A VJP that is off by 25% (+0.25), or right in value but wrong in its derivative with
    respect to the op's input: ``s - stop_gradient(s)`` (``s`` a saved input or output) is 0
    but differentiates to ``s'``. (Linear in ``dy``, so forward mode stays right.)"""

    def wrong(dy, saved, attrs):
        if first_order_right:
            s = saved[0]
            extra = (s - tv.stop_gradient(s)) * dy * 0.5
            return {k: (lambda f=f: f() + extra) for k, f in grad_fn(dy, saved, attrs).items()}
        return {k: (lambda f=f: f() * 1.25 + 0.25) for k, f in grad_fn(dy, saved, attrs).items()}

    return wrong


def test_a_planted_wrong_vjp_of_every_builtin_kernel_fails():
    misses, tested = [], set()
    for prog, loss, xd in one_op_programs(False, per_op=1):
        tape, _ = _audit(loss, xd)
        kernels = {n.kernel for n in tape.nodes if n.primitive.kind == "builtin"
                   and n.kernel not in ("Sum", "Mul")} or {"Mul"}  # fmt: skip
        for kernel in sorted(kernels):
            g = tv.get_gradient(kernel)
            if g is None:
                continue
            with tv.gradient_override(kernel, _wrong(g.grad_fn)):
                if not run_program(prog, ("grad",))[0]:
                    continue  # the planted error cannot change this gradient (e.g. floor)
                report = _check(loss, xd)
                _, audit = _audit(loss, xd)
            tested.add(kernel)
            if report.passed or audit.passed:
                misses.append(f"{kernel} in seed {prog.seed}: check_grads "
                              f"{report.passed}, audit {audit.passed}")  # fmt: skip
    assert len(tested) > 60, sorted(tested)  # the plant reached most kernels
    assert not misses, "\n".join(misses)


def test_a_vjp_wrong_only_at_second_order_fails_check_grads_order_2():
    misses, tried = [], 0
    for prog, loss, xd in one_op_programs(False, per_op=1):
        op = prog.stmts[0].op
        if op.group != "elementwise" or op.nargs != 1:
            continue
        tape, _ = _audit(loss, xd)
        (node,) = [n for n in tape.nodes if n.primitive.kind == "builtin"][:1]
        g = tv.get_gradient(node.kernel)
        if g is None or not node.saved:  # nothing saved (neg) or not differentiable (floor)
            continue
        with tv.gradient_override(node.kernel, _wrong(g.grad_fn, first_order_right=True)):
            if not run_program(prog, ("hvp_rr",))[0]:
                continue  # the plant does not reach the Hessian (saved[0] is a constant)
            first = _check(loss, xd)
            second = _check(loss, xd, order=2)
        tried += 1
        if not first.passed or second.passed:
            misses.append(f"{node.kernel}: order 1 {first.passed}, order 2 {second.passed}")
    assert tried > 10 and not misses, "\n".join(misses)


class WrongCube(tv.DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x):
        return x**3

    def backward(self, dy, compute_gradients, x):
        return dy * 2 * x**2  # should be 3 x^2


@tv.custom_grad
def wrong_square(x, save):
    save([x])
    return {"value": x * x, "grad_func": lambda dy, saved: dy * saved[0] * 3}


@tv.custom_grad
def square_wrong_at_order_2(x, save):
    save([x])  # stop_gradient: the value of 2x, but no derivative of it
    return {"value": x * x, "grad_func": lambda dy, saved: dy * tv.stop_gradient(saved[0]) * 2}


def _styles():
    styles = {"custom_grad": wrong_square, "DifferentiableFunction": WrongCube()}
    try:
        styles["CompiledLayer"] = tv.CompiledLayer(
            lambda x: x * x * x, gradient=lambda x, dy: dy * 2 * x * x
        )
    except ImportError:  # pragma: no cover - numba is in the test extra
        pass
    return styles


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("style", ["custom_grad", "DifferentiableFunction", "CompiledLayer"])
def test_the_three_custom_styles_with_a_wrong_gradient_fail(style, order):
    op = _styles()[style]
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = rng.uniform(0.3, 1.5, (2, 3))
        report = _check(lambda x: tv.tanh(op(x)), [x], order=order)
        assert not report.passed, report.summary()
        if order == 1:
            t = tv.tensor(x)
            _, audit = _audit(lambda t: tv.sum(tv.tanh(op(t))), [t])
            assert not audit.passed and audit.failures, audit.summary()


def test_custom_grad_right_at_first_order_is_caught_at_second():
    x = np.array([0.4, -1.3, 2.0])
    assert _check(square_wrong_at_order_2, [x]).passed
    report = _check(square_wrong_at_order_2, [x], order=2)
    assert not report.passed, report.summary()
