"""Regressions from the review of the differentiable numpy surface (issue 13): numpy's own
results where tapeviz used to differ silently (integer sums, integer division), in-place numpy
functions that wrote into "immutable" tensors, and ``np.clip`` with array bounds."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import tapeviz.core as tv


def _same(got, ref):
    assert isinstance(got, tv.Tensor)
    assert got.dtype == np.asarray(ref).dtype, (got.dtype, np.asarray(ref).dtype)
    np.testing.assert_array_equal(got.numpy(), ref)


MASK = np.array([[True, False, True], [True, True, False]])
SMALL = np.array([[100, 100, 27], [-128, 1, 2]], dtype=np.int8)


@pytest.mark.parametrize("a", [MASK, SMALL, SMALL.astype(np.uint8)], ids=["bool", "i8", "u8"])
def test_sum_and_prod_of_masks_and_small_integers_widen_as_numpy(a):
    t = tv.tensor(a)
    _same(np.sum(t), np.sum(a))  # a mask's sum counts; int8 does not wrap at 127
    _same(np.sum(t, axis=1), np.sum(a, axis=1))
    _same(np.add.reduce(t, axis=0), np.add.reduce(a, axis=0))
    _same(tv.sum(t, axis=-1, keepdims=True), np.sum(a, axis=-1, keepdims=True))
    _same(t.sum(axis=0), a.sum(axis=0))
    _same(np.prod(t, axis=0), np.prod(a, axis=0))
    _same(np.multiply.reduce(t, axis=1), np.multiply.reduce(a, axis=1))


def test_float_sums_keep_their_dtype():
    x = tv.tensor(np.ones((2, 3), np.float32))
    assert np.sum(x).dtype == np.float32 and tv.prod(x, axis=0).dtype == np.float32


def test_integer_division_is_exact_as_numpy():
    a, b = np.array([2**40 + 1, -7, 7, 0]), np.array([1, 2, -2, 3])
    ta, tb = tv.tensor(a), tv.tensor(b)
    _same(np.floor_divide(ta, tb), np.floor_divide(a, b))
    _same(np.floor_divide(ta, 2), np.floor_divide(a, 2))
    _same(np.true_divide(ta, tb), np.true_divide(a, b))  # float64, not a rounded float32
    _same(np.float_power(ta, 2), np.float_power(a, 2))
    _same(
        np.float_power(tv.tensor(np.float32([1.5, 2.0])), 3),
        np.float_power(np.float32([1.5, 2.0]), 3),
    )


def test_float_division_and_float_power_still_differentiate():
    x = np.array([0.5, 1.5, -2.0])

    def f(m, a, float_power):  # autograd has no float_power gradient: its power is the same
        return m.sum(m.floor_divide(a, 0.7) + m.true_divide(a, a * a + 1) + float_power(a, 3))

    g = tv.grad(lambda t: f(np, t, np.float_power))(tv.tensor(x)).numpy()
    np.testing.assert_allclose(g, autograd.grad(lambda a: f(anp, a, anp.power))(x), rtol=1e-12)


def _in_place_calls():
    return {
        "ufunc.at": lambda t: np.add.at(t, [0], 10.0),
        "copyto": lambda t: np.copyto(t, np.zeros(3)),
        "put": lambda t: np.put(t, [0], 5.0),
        "fill_diagonal": lambda t: np.fill_diagonal(t.reshape(1, 3), 0.0),
        "out= of a ufunc without op": lambda t: np.cbrt(np.ones(3), out=t),
        "out= of a constant ufunc": lambda t: np.signbit(np.ones(3), out=t),
    }


@pytest.mark.parametrize("name", list(_in_place_calls()))
def test_numpy_in_place_functions_cannot_mutate_a_tensor(name):
    x = tv.tensor(np.array([1.0, 2.0, 3.0]) if name != "out= of a constant ufunc" else MASK[0])
    before = x.numpy().copy()
    with pytest.raises(TypeError, match="writes into a tensor in place"):
        _in_place_calls()[name](x)
    np.testing.assert_array_equal(x.numpy(), before)


def test_in_place_functions_on_plain_arrays_still_work():
    a = np.array([1.0, 2.0, 3.0])
    np.add.at(a, [0, 0], 1.0)
    np.testing.assert_array_equal(a, [3.0, 2.0, 3.0])


def test_clip_with_array_and_tensor_bounds():
    a = np.array([[-1.0, 0.2, 0.9], [0.4, 2.0, -0.3]])
    lo, hi = np.array([0.0, 0.1, -1.0]), np.array([[0.5], [1.5]])
    _same(np.clip(tv.tensor(a), lo, hi), np.clip(a, lo, hi))
    _same(np.clip(tv.tensor(a), None, tv.tensor(hi)), np.clip(a, None, hi))
    _same(np.clip(tv.tensor(a), lo, 0.5), np.clip(a, lo, 0.5))

    def f(m, x, h):  # no element sits on a bound: the gradient is unambiguous
        return m.sum(m.clip(x, lo, h) * m.array([1.0, 2.0, 3.0]))

    gx, gh = tv.grads(lambda x, h: f(np, x, h))(tv.tensor(a), tv.tensor(hi))
    np.testing.assert_allclose(gx.numpy(), [[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    np.testing.assert_allclose(gh.numpy(), [[3.0], [2.0]])
    np.testing.assert_allclose(gx.numpy(), autograd.grad(f, 1)(anp, a, hi))


@pytest.mark.parametrize("a", [MASK, SMALL], ids=["bool", "i8"])
def test_mean_var_std_of_masks_and_integers_as_numpy(a):
    t = tv.tensor(a)
    _same(np.mean(t), np.mean(a))  # accuracy = np.mean(pred == y): a float64 fraction
    _same(np.mean(t, axis=0, dtype=np.float32), np.mean(a, axis=0, dtype=np.float32))
    np.testing.assert_allclose(np.var(t, ddof=1).numpy(), np.var(a, ddof=1), rtol=1e-12)
    assert np.std(t, axis=1).dtype == np.float64
    np.testing.assert_allclose(np.std(t, axis=1).numpy(), np.std(a, axis=1), rtol=1e-12)


def _adjugate_T(a):
    """The cofactor matrix from its definition (minors), independent of tapeviz's formulas."""
    n = a.shape[-1]
    cof = np.zeros_like(a)
    for i, j in np.ndindex(n, n):
        minor = np.delete(np.delete(a, i, 0), j, 1)
        cof[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return cof


SINGULAR = {
    "2x2 rank 1": [[1.0, 2.0], [2.0, 4.0]],
    "3x3 rank 2": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
    "3x3 rank 2, a zero row": [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
    "3x3 rank 1": np.ones((3, 3)),
    "4x4 rank 2": np.outer([1.0, 2.0, 0.5, -1.0], [1.0, 0.0, 2.0, 1.0])
    + np.outer([0.0, 1.0, 1.0, 3.0], [2.0, 1.0, -1.0, 0.5]),
    "zero": np.zeros((3, 3)),
    "1x1 zero": [[0.0]],
}


@pytest.mark.parametrize("name", list(SINGULAR))
def test_det_gradient_at_a_singular_matrix_is_the_adjugate(name):
    a = np.asarray(SINGULAR[name], dtype=np.float64)
    assert abs(np.linalg.det(a)) < 1e-12
    g = tv.grad(tv.linalg.det)(tv.tensor(a)).numpy()
    np.testing.assert_allclose(g, _adjugate_T(a), atol=1e-10)


@pytest.mark.parametrize("name", ["2x2 rank 1", "3x3 rank 2", "3x3 rank 1", "4x4 rank 2"])
def test_det_second_order_at_a_singular_matrix(name):
    a = np.asarray(SINGULAR[name], dtype=np.float64)
    v = np.random.default_rng(0).normal(size=a.shape)
    hv = tv.grad(lambda t: tv.sum(tv.grad(tv.linalg.det)(t) * v))(tv.tensor(a)).numpy()
    eps, num = 1e-6, np.zeros_like(a)  # the cofactors are polynomials: central differences
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        num[i] = np.sum((_adjugate_T(a + d) - _adjugate_T(a - d)) * v) / (2 * eps)
    np.testing.assert_allclose(hv, num, atol=1e-6)


def test_det_gradient_on_a_stack_with_one_singular_matrix():
    a = np.stack([np.asarray(SINGULAR["2x2 rank 1"]), np.array([[2.0, 1.0], [0.5, 3.0]])])
    g = tv.grad(lambda t: tv.sum(tv.linalg.det(t) * np.array([2.0, -1.0])))(tv.tensor(a))
    want = np.stack([2 * _adjugate_T(a[0]), -_adjugate_T(a[1])])
    np.testing.assert_allclose(g.numpy(), want, atol=1e-12)
    g32 = tv.grad(tv.linalg.det)(tv.tensor(a[0].astype(np.float32)))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32.numpy(), _adjugate_T(a[0]), atol=1e-5)


ARRAY_API = {  # numpy 2 spelling -> the same in autograd's numpy (None: it has none; the
    # functions are linear, so central differences are the exact reference)
    "matrix_transpose": (lambda m, x: m.matrix_transpose(x), lambda x: anp.swapaxes(x, -1, -2)),
    "linalg.matrix_transpose": (
        lambda m, x: m.linalg.matrix_transpose(x),
        lambda x: anp.swapaxes(x, -1, -2),
    ),
    "linalg.matmul": (
        lambda m, x: m.linalg.matmul(x, m.swapaxes(x, -1, -2)),
        lambda x: anp.matmul(x, anp.swapaxes(x, -1, -2)),
    ),
    "linalg.trace": (
        lambda m, x: m.linalg.trace(x, offset=1),
        None,
    ),
    "linalg.diagonal": (
        lambda m, x: m.linalg.diagonal(x, offset=-1),
        None,
    ),
    "astype": (lambda m, x: m.astype(x, m.float32) * 3, lambda x: x * 3),
}


@pytest.mark.parametrize("name", list(ARRAY_API))
def test_numpy2_array_api_names_record_and_differentiate(name):
    f, ag = ARRAY_API[name]
    a = np.random.default_rng(5).normal(size=(2, 3, 4))
    with tv.Tape() as tape:
        x = tv.tensor(a)
        tape.watch(x)
        y = f(np, x)
    assert isinstance(y, tv.Tensor) and tape.nodes  # recorded, not numpy's constant
    ref = f(np, a)
    assert y.dtype == ref.dtype
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)
    w = np.random.default_rng(6).normal(size=ref.shape)
    g = tv.grad(lambda t: tv.sum(tv.cast(f(np, t), np.float64) * w))(tv.tensor(a)).numpy()
    if ag is not None:
        want = autograd.grad(lambda t: anp.sum(ag(t) * w))(a)
    else:
        want = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            d = np.zeros_like(a)
            d[i] = 0.5
            want[i] = np.sum((f(np, a + d) - f(np, a - d)) * w)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-12)


def test_numpy2_matrix_functions_refuse_a_vector_naming_the_function():
    with pytest.raises(ValueError, match=r"numpy.linalg.trace: expected an array of matrices"):
        np.linalg.trace(tv.tensor(np.ones(3)))


INT_INPUTS = [np.arange(-2, 3), np.array([True, False]), np.arange(1, 4, dtype=np.int8)]
UNARY = [np.exp, np.log1p, np.sqrt, np.sin, np.tanh, np.rint, np.floor, np.ceil, np.trunc,
         np.square, np.reciprocal, np.sign, np.absolute]  # fmt: skip


@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
@pytest.mark.parametrize("a", INT_INPUTS, ids=["i64", "bool", "i8"])
def test_ufuncs_on_integer_tensors_follow_numpy_dtypes(ufunc, a):
    with np.errstate(all="ignore"):
        try:
            ref = ufunc(a)  # np.exp(int) is float64; np.floor(int), np.square(int) stay int
        except TypeError:  # numpy has no loop (np.sign of bools): tapeviz refuses too
            with pytest.raises(TypeError):
                ufunc(tv.tensor(a))
            return
        got = ufunc(tv.tensor(a))
    assert got.dtype == ref.dtype
    np.testing.assert_allclose(got.numpy(), ref, equal_nan=True)


@pytest.mark.parametrize("ufunc", [np.maximum, np.arctan2, np.hypot, np.logaddexp, np.add])
def test_binary_ufuncs_mixing_integer_tensors_and_floats_follow_numpy(ufunc):
    a = np.arange(1, 4)
    for b in (0.5, np.ones(3, np.float32), np.float32(2.5), np.arange(3)):
        ref, got = ufunc(a, b), ufunc(tv.tensor(a), b)
        assert got.dtype == ref.dtype, (b, got.dtype, ref.dtype)
        np.testing.assert_allclose(got.numpy(), ref)
