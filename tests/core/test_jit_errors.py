"""Every way a traced value could leak into Python raises a named error while tracing, saying
what to do, never a silently stale program: ConcretizationError (JAX's
ConcretizationTypeError) for branches, conversions and numpy on values (in the user's code
or inside an op computed outside kernels); OpaqueFunctionError for the two custom-gradient
styles whose code jit cannot see."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as tv

X = np.array([0.5, -1.5, 2.0])


def _raises(fn, match, error=tv.ConcretizationError):
    jf = tv.jit(fn)
    with pytest.raises(error, match=match) as info:
        jf(tv.tensor(X))
    assert jf.traces == 0  # nothing was cached
    return str(info.value)


def _branch(x):
    if tv.sum(x) > 0:
        return x
    return -x


@pytest.mark.parametrize(
    "fn, what, fix",
    [
        (_branch, r"bool\(\)", "tv.where"),
        (lambda x: x * float(tv.sum(x)), r"float\(\)", "static_argnums"),
        (lambda x: x * int(tv.max(x)), r"int\(\)", "static_argnums"),
        (lambda x: x * tv.sum(x).item(), r"item\(\)", "keep it a tensor"),
        (lambda x: tv.tensor(x.numpy() * 2), r"numpy\(\)", "use tapeviz ops"),
        (lambda x: tv.tensor(x.tolist()), r"tolist\(\)", "keep it a tensor"),
        (lambda x: tv.tensor(np.asarray(x) + 1), r"np.asarray\(\)", "use tapeviz ops"),
        (lambda x: x[tv.cast(tv.argmax(x), "int32")], r"np.argmax", "outside kernels"),
        (lambda x: tv.sort(x), r"np.argsort", "outside kernels"),
        (lambda x: x[: int(tv.sum(x > 0))], r"int\(\)", "static_argnums"),
    ],
    ids=["if", "float", "int", "item", "numpy", "tolist", "asarray", "argmax", "sort", "slice"],
)
def test_value_reads_raise_with_what_to_do(fn, what, fix):
    message = _raises(fn, what)
    assert fix in message and "test_jit_errors.py" in message  # names the user's line


def test_a_gradient_branching_on_values_is_named():
    f = tv.grads(lambda x: tv.sum(tv.prod(x)))
    message = _raises(f, r"numpy\(\) on traced tensor")
    assert "core/primitives/reduce.py" in message  # where inside tapeviz the value was read


def test_branches_inside_ops_compile_as_selections():
    """std and logsumexp choose by value inside the op; under jit the choice is made with
    ops, so a program traced without zeros (or infs) is right on data with them."""
    std = tv.jit(tv.grad(lambda x: tv.std(x)))
    lse = tv.jit(lambda x: tv.logsumexp(x, axis=1))
    std(tv.tensor([1.0, 2.0, 4.0]))
    lse(tv.tensor([[1.0, 2.0], [3.0, 4.0]]))
    flat = tv.tensor([3.0, 3.0, 3.0])
    assert np.array_equal(std(flat).numpy(), tv.grad(lambda x: tv.std(x))(flat).numpy())
    rows = tv.tensor([[-np.inf, -np.inf], [np.inf, 1.0]])
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0): the row of -inf
        np.testing.assert_array_equal(lse(rows).numpy(), tv.logsumexp(rows, axis=1).numpy())


def test_a_variable_value_is_never_read_while_tracing():
    w = tv.variable([1.0, 2.0, 3.0])
    _raises(lambda x: x * w.numpy(), r"numpy\(\) on traced variable")
    _raises(lambda x: w.assign_sub(x), r"assign_sub\(\)", tv.ConcretizationError)


def test_a_tensor_index_taken_from_a_value_is_refused():
    def f(x):
        idx = tv.cast(tv.abs(x[:2]) * 0, "int64")  # an index computed from the argument
        return x[idx]  # a traced value in the attrs

    assert "tv.one_hot" in _raises(f, "attribute of kernel .Slice. holding a traced value")


def test_an_index_computed_from_constants_only_is_a_constant():
    idx = tv.tensor([0, 2])
    f = lambda x: x[idx * 1]  # kernels of constants fold to a constant: nothing to refuse
    x = tv.tensor(X)
    jf = tv.jit(f)
    jf(x)
    assert np.array_equal(jf(x * 2).numpy(), f(x * 2).numpy()) and jf.traces == 1


def test_printing_a_traced_tensor_shows_no_value(capsys):
    tv.jit(lambda x: print(x) or x * 2)(tv.tensor(X))
    assert "traced(" in capsys.readouterr().out


def test_differentiable_function_is_opaque():
    class Square(tv.DifferentiableFunction):
        def forward(self, x):
            return x * x

        def backward(self, dy, compute, x):
            return 2 * x * dy

    sq = Square()
    message = _raises(lambda x: sq(x), "DifferentiableFunction 'Square'", tv.OpaqueFunctionError)
    assert "tv.custom_grad" in message


def test_compiled_layer_is_opaque():
    pytest.importorskip("numba")
    layer = tv.CompiledLayer(lambda a: a * 2.0, name="double")
    _raises(lambda x: layer(x), "CompiledLayer 'double'", tv.OpaqueFunctionError)


def test_nothing_stays_wrapped_after_a_failed_trace():
    x = tv.tensor(X)
    with pytest.raises(tv.ConcretizationError):
        tv.jit(_branch)(x)
    assert type(x._data) is np.ndarray and x.numpy().sum() == X.sum()
