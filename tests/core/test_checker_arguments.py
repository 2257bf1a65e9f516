"""Issue 33 items 11 and 13: the checker's own arguments.

Item 11: ``check_grads(f, a, (0, 1), wrt=[0])`` turned the unchecked tuple into a tensor, so
``np.einsum(a, (0, 1), (1, 0))`` failed inside the checker (five of HIPS autograd's own
tests). An argument that is not checked reaches f exactly as given.

Item 13: ``tv.audit(tape, loss)`` put the loss where ``mode`` goes; each node's check broke on
it and every built-in node was reported "invalid gradient". A mistyped argument of any public
checker entry point is a TypeError (or ValueError) naming the function and the argument,
never a verdict on the gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapeviz as tv

RNG = np.random.default_rng(33)


# --- item 11: unchecked arguments pass through untouched ----------------------------------
@pytest.mark.parametrize("wrt", [[0], None, 0, (0,), np.array([0])])
def test_einsum_subscripts_tuple_is_not_made_a_tensor(wrt):
    a = RNG.normal(size=(2, 3))
    report = tv.check_grads(lambda x, s: np.einsum(x, s, (1, 0)) * x.T, a, (0, 1), wrt=wrt)
    assert report.passed, report.summary()
    assert [c.arg for c in report.checks if c.kind != "forward"] == [0]


def test_an_unchecked_argument_is_the_very_object_passed():
    marker, labels, w = object(), np.array([2, 0, 1]), RNG.normal(size=3)
    seen = []

    def f(x, m, lab, weights):
        seen.append((m, lab, weights))
        return tv.sum(x[lab] * weights)

    report = tv.check_grads(f, RNG.normal(size=3), marker, labels, w, wrt=[0])
    assert report.passed, report.summary()
    assert all(m is marker and lab is labels and ws is w for m, lab, ws in seen)


def test_numerical_jacobian_passes_other_arguments_untouched():
    a = RNG.normal(size=(2, 3))
    J = tv.numerical_jacobian(lambda x, s: np.einsum(x, s, (1, 0)), [a, (0, 1)], 0)
    want = np.zeros((6, 6))  # y[j, i] = x[i, j]
    for i, j in np.ndindex(2, 3):
        want[j * 2 + i, i * 3 + j] = 1.0
    np.testing.assert_allclose(J, want, atol=1e-8)


def test_a_wrong_gradient_is_still_caught_beside_a_passed_through_argument():
    @tv.custom_grad
    def scaled_transpose(x, save):  # planted: its gradient is 1.5 times too large
        return {"value": np.einsum(x, (0, 1), (1, 0)),
                "grad_func": lambda dy, saved: 1.5 * np.einsum(dy, (1, 0), (0, 1))}  # fmt: skip

    a = RNG.normal(size=(2, 3))
    report = tv.check_grads(lambda x, s: scaled_transpose(x) * len(s), a, (0, 1), wrt=[0],
                            raise_on_failure=False)  # fmt: skip
    assert not report.passed and report.failure == "value mismatch", report.summary()


def test_einsum_gradient_with_tuple_subscripts_against_torch():
    a = RNG.normal(size=(3, 4))
    x = tv.tensor(a)
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.sum(np.einsum(x, (0, 1), (1, 0)) ** 3)
    t = torch.tensor(a, requires_grad=True)
    torch.sum(torch.einsum("ij->ji", t) ** 3).backward()
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), t.grad.numpy(), rtol=1e-12)


def test_wrt_naming_a_non_floating_argument_is_an_error_naming_it():
    with pytest.raises(TypeError, match=r"check_grads\(<lambda>\): wrt names argument 1"):
        tv.check_grads(lambda x, s: x * len(s), [1.0], (0, 1), wrt=[0, 1])


# --- item 13: a mistyped argument names itself ----------------------------------------------
def _tape():
    x = tv.tensor([0.5, 1.5])
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        loss = tv.sum(tv.tanh(x) * x)
    return tape, loss


def test_audit_with_the_loss_where_mode_goes_is_a_type_error_not_a_verdict():
    tape, loss = _tape()
    with pytest.raises(TypeError, match=r"audit: mode .* got a Tensor.*takes no loss"):
        tv.audit(tape, loss)
    with pytest.raises(TypeError, match="audit: tape must be a Tape"):
        tv.audit(loss)
    assert tv.audit(tape).passed  # the same tape, called right: every node passes


def _f(x):
    return tv.tanh(x) * x


X = [0.5, -1.0]
T = tv.tensor(1e-3)
# (entry point, arguments, the argument the message must name)
MISTYPED = [
    (tv.check_grads, (_f, X), {"eps": T}, "eps"),
    (tv.check_grads, (_f, X), {"eps": "1e-3"}, "eps"),
    (tv.check_grads, (_f, X), {"atol": T}, "atol"),
    (tv.check_grads, (_f, X), {"rtol": [1e-3]}, "rtol"),
    (tv.check_grads, (_f, X), {"mode": T}, "mode"),
    (tv.check_grads, (_f, X), {"order": True}, "order"),
    (tv.check_grads, (_f, X), {"order": 2.0}, "order"),
    (tv.check_grads, (_f, X), {"forward": "no"}, "forward"),
    (tv.check_grads, (_f, X), {"raise_on_failure": None}, "raise_on_failure"),
    (tv.check_grads, (_f, X), {"wrt": "0"}, "wrt"),
    (tv.check_grads, (_f, X), {"wrt": [T]}, "wrt"),
    (tv.check_grads, (_f, X), {"dtype": "int32"}, "dtype"),
    (tv.check_grads, (_f, X), {"dtype": T}, "dtype"),
    (tv.check_grads, (_f, X), {"seed": 0.5}, "seed"),
    (tv.check_grads, (X, _f), {}, "f"),
    (tv.numerical_jacobian, (_f, np.ones(2), 0), {}, "args"),
    (tv.numerical_jacobian, (_f, [X], "0"), {}, "index"),
    (tv.numerical_jacobian, (_f, [X], 0), {"eps": T}, "eps"),
    (tv.numerical_jacobian, (_f, [(1, 2)], 0), {}, "index"),
    (tv.audit, (), {"eps": T}, "eps"),
    (tv.audit, (), {"atol": "0.1"}, "atol"),
    (tv.audit, (), {"rtol": T}, "rtol"),
    (tv.audit, (), {"seed": T}, "seed"),
    (tv.audit, (), {"max_full": 1.5}, "max_full"),
]


@pytest.mark.parametrize(("fn", "args", "kwargs", "name"), MISTYPED,
                         ids=[f"{f.__name__}-{n}-{i}" for i, (f, _, _, n) in enumerate(MISTYPED)])  # fmt: skip
def test_every_mistyped_argument_is_a_type_error_naming_function_and_argument(fn, args, kwargs,
                                                                             name):  # fmt: skip
    if fn is tv.audit:
        args = (_tape()[0],)
    with pytest.raises(TypeError) as err:
        fn(*args, **kwargs)
    assert str(err.value).startswith(fn.__name__), err.value
    assert f" {name} " in f" {err.value} ".replace(":", " "), err.value


@pytest.mark.parametrize(
    ("fn", "kwargs", "name"),
    [(tv.check_grads, {"eps": 0.0}, "eps"), (tv.check_grads, {"eps": -1e-6}, "eps"),
     (tv.check_grads, {"atol": float("nan")}, "atol"), (tv.check_grads, {"mode": "slow"}, "mode"),
     (tv.check_grads, {"order": 3}, "order"), (tv.check_grads, {"wrt": [5]}, "wrt"),
     (tv.audit, {"mode": "slow"}, "mode"), (tv.audit, {"eps": 0}, "eps"),
     (tv.audit, {"max_full": -1}, "max_full")],
)  # fmt: skip
def test_out_of_range_values_are_value_errors_naming_the_argument(fn, kwargs, name):
    args = (_tape()[0],) if fn is tv.audit else (_f, X)
    with pytest.raises(ValueError, match=rf"^{fn.__name__}: {name}"):
        fn(*args, **kwargs)


def test_detect_anomaly_and_eps_sweep_name_their_arguments():
    with pytest.raises(TypeError, match="detect_anomaly: forward must be True or False"):
        with tv.detect_anomaly(forward="yes"):
            pass
    report = tv.check_grads(_f, X)
    with pytest.raises(TypeError, match="eps_sweep: eps must be step sizes"):
        report.eps_sweep("small")
    with pytest.raises(ValueError, match="eps_sweep: eps must be positive"):
        report.eps_sweep([1e-6, -1e-3])
    assert report.eps_sweep([1e-6, 1e-4]).eps.size == 2


def test_a_zero_tolerance_is_kept_not_replaced_by_the_default():
    tape, _ = _tape()  # `atol or default` read 0 as "not given"
    report = tv.audit(tape, mode="full", atol=0.0, rtol=0.0)
    assert all(n.report.atol == 0.0 and n.report.rtol == 0.0 for n in report.nodes)
