"""numpy's functions on tensors (NEP 13/18), numpy-style Tensor methods, and the linear
algebra gradients autograd cannot judge (qr) or where they must refuse (degenerate points)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as tv


def _kernels(tape):
    return [n.kernel for n in tape.nodes]


def test_ufuncs_and_functions_dispatch_record_and_differentiate():
    x = tv.tensor(np.array([0.5, -1.0, 2.0]))
    a = np.array([1.0, 2.0, 3.0])
    with tv.Tape() as tape:
        tape.watch(x)
        y = np.sum(np.exp(x) * np.add(a, x), axis=0)
    assert isinstance(y, tv.Tensor)
    assert _kernels(tape) == ["Exp", "Add", "Mul", "Sum"]
    g = tape.gradient(y, x).numpy()
    xn = x.numpy()
    np.testing.assert_allclose(g, np.exp(xn) * (a + xn) + np.exp(xn))


def test_array_functions_dispatch():
    x, y = tv.tensor(np.ones((2, 3))), tv.tensor(np.full((1, 3), 2.0))
    cases = {
        "concatenate": (np.concatenate([x, y]), np.concatenate([x.numpy(), y.numpy()])),
        "norm": (np.linalg.norm(x), np.linalg.norm(x.numpy())),
        "mean": (np.mean(x, axis=1, keepdims=True), np.mean(x.numpy(), 1, keepdims=True)),
        "reshape": (np.reshape(x, (3, 2)), np.reshape(x.numpy(), (3, 2))),
        "stack": (np.stack([x, x], 1), np.stack([x.numpy()] * 2, 1)),
        "clip": (np.clip(x, 0, 0.5), np.clip(x.numpy(), 0, 0.5)),
        "var": (np.var(x, ddof=1), np.var(x.numpy(), ddof=1)),
        "einsum": (np.einsum("ij,kj->ik", x, y), np.einsum("ij,kj->ik", x.numpy(), y.numpy())),
        "where": (np.where(x > 0, x, y), np.where(x.numpy() > 0, x.numpy(), y.numpy())),
        "pad": (np.pad(x, 1), np.pad(x.numpy(), 1)),
        "matmul": (np.matmul(x, x.T), x.numpy() @ x.numpy().T),
        "reduce": (np.add.reduce(x), np.add.reduce(x.numpy())),
        "trunc": (np.trunc(x * -1.5), np.trunc(x.numpy() * -1.5)),
        "fix": (np.fix(y * 1.3), np.fix(y.numpy() * 1.3)),
        "conjugate": (np.conj(y), y.numpy()),
    }
    for name, (got, want) in cases.items():
        assert isinstance(got, tv.Tensor), name
        np.testing.assert_allclose(got.numpy(), want, err_msg=name)


def test_numpy_code_is_differentiable_end_to_end():
    def loss(w):  # plain numpy code
        a = np.array([[2.0, 1.0], [1.0, 3.0]])
        sign, logdet = np.linalg.slogdet(a + np.outer(w, w))
        return logdet + np.sum(np.tanh(w) ** 2)

    w = np.array([0.3, -0.2])
    g = tv.grad(loss)(tv.tensor(w)).numpy()
    report = tv.check_grads(loss, w, order=2)
    assert report.passed
    assert np.all(np.isfinite(g))


def test_unsupported_function_raises_inside_a_tape_naming_it():
    x = tv.tensor([1.0, 2.0, 3.0])
    with tv.Tape() as tape:
        tape.watch(x)
        with pytest.raises(tv.NumpyDispatchError, match="numpy.median has no tapeviz op"):
            np.median(x)
        y = x * 2  # recorded: also refused
        with pytest.raises(tv.NumpyDispatchError, match="numpy.percentile"):
            np.percentile(y, 50)
        with pytest.raises(TypeError, match="numpy.sign.*where="):
            np.sign(y, where=np.array([True, False, True]))


def test_unsupported_function_falls_back_when_nothing_needs_a_gradient():
    x = tv.tensor([1.0, 2.0, 4.0])
    assert np.median(x) == 2.0  # no tape: numpy on the values
    with tv.Tape():
        other = tv.tensor([3.0, 1.0])  # neither watched nor recorded
        assert isinstance(np.median(other), np.floating)
    with tv.Tape() as tape:  # results without gradients are fine in a tape
        tape.watch(x)
        assert np.argmax(x) == 2 and np.shape(x) == (3,)
        assert np.isnan(x).tolist() == [False, False, False]


def test_variable_needs_a_gradient_inside_a_tape():
    v = tv.variable([1.0, 2.0])
    with tv.Tape(), pytest.raises(tv.NumpyDispatchError, match="numpy.median"):
        np.median(v)


def test_out_argument_is_refused_with_the_function_name():
    x = tv.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="numpy.sum.*out="):
        np.sum(x, out=np.zeros(()))


def test_supported_numpy_lists_dispatching_functions():
    names = tv.supported_numpy()
    for n in ("numpy.exp", "numpy.sum", "numpy.linalg.solve", "numpy.einsum", "numpy.sort"):
        assert n in names


def test_methods_numpy_users_type():
    x = tv.tensor(np.arange(6.0))
    m = x.reshape(2, 3)
    assert m.shape == (2, 3) and x.reshape((3, 2)).shape == (3, 2)
    assert m.T.shape == (3, 2) and m.transpose(1, 0).shape == (3, 2)
    assert m.transpose((1, 0)).shape == (3, 2) and m.transpose().shape == (3, 2)
    assert m.ravel().shape == (6,) and m.flatten().shape == (6,)
    assert float(m.sum()) == 15.0 and m.sum(0).shape == (3,) and m.sum(axis=1).shape == (2,)
    assert float(m.mean()) == 2.5 and float(m.max()) == 5.0 and float(m.min()) == 0.0
    assert m.astype("float32").dtype == np.float32
    np.testing.assert_array_equal(m.clip(1, 4).numpy(), np.clip(m.numpy(), 1, 4))
    np.testing.assert_array_equal(m.clip(max=2).numpy(), np.clip(m.numpy(), None, 2))
    np.testing.assert_allclose(float(m.std(ddof=1)), np.arange(6.0).std(ddof=1))
    np.testing.assert_allclose(float(m.var(ddof=1)), np.arange(6.0).var(ddof=1))
    np.testing.assert_array_equal(m.dot(m.T).numpy(), m.numpy() @ m.numpy().T)
    np.testing.assert_array_equal(m.cumsum(1).numpy(), m.numpy().cumsum(1))
    np.testing.assert_array_equal((x % 4).numpy(), np.arange(6.0) % 4)
    np.testing.assert_array_equal((7.0 % (x + 1)).numpy(), 7.0 % (np.arange(6.0) + 1))
    g = tv.grad(lambda x: (x.reshape(2, 3).T.flatten() * x.ravel()).sum())(x).numpy()
    perm = np.arange(6).reshape(2, 3).T.ravel()  # f = sum(x[perm] * x)
    np.testing.assert_array_equal(g, np.arange(6.0)[perm] + np.arange(6.0)[np.argsort(perm)])


def test_dot_has_numpy_semantics():
    a, b = np.ones((2, 3, 4)), np.ones((5, 4, 2))
    assert tv.dot(tv.tensor(a), tv.tensor(b)).shape == np.dot(a, b).shape == (2, 3, 5, 2)
    assert float(tv.dot(tv.tensor(2.0), tv.tensor(3.0))) == 6.0


def test_qr_gradient_numerically():
    a = np.random.default_rng(0).uniform(-1, 1, (5, 3))

    def f(a):
        q, r = tv.linalg.qr(a)
        return tv.sum(q * q * np.arange(3.0)) + tv.sum(r * r)

    q, r = tv.linalg.qr(tv.tensor(a))
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    assert tv.check_grads(f, a, order=2).passed


def test_qr_gradient_of_a_wide_matrix_raises():
    with pytest.raises(ValueError, match="qr: the gradient is implemented for m >= n"):
        tv.grad(lambda a: tv.sum(tv.linalg.qr(a)[1]))(tv.tensor(np.ones((2, 3))))


def test_degenerate_points_raise_naming_the_function():
    sym = tv.tensor(np.diag([1.0, 1.0, 2.0]))
    g = tv.grad(lambda a: tv.sum(tv.linalg.eigh(a)[0] * np.array([1.0, 2.0, 3.0])))(sym)
    assert np.all(np.isfinite(g.numpy()))  # eigenvalues alone: differentiable
    with pytest.raises(ValueError, match="eigh: repeated eigenvalues"):
        tv.grad(lambda a: tv.sum(tv.linalg.eigh(a)[1] ** 3))(sym)
    with pytest.raises(ValueError, match="svd: repeated singular values"):
        tv.grad(lambda a: tv.sum(tv.linalg.svd(a)[0] ** 3))(tv.tensor(np.eye(3)))
    singular = tv.tensor(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(ValueError, match="slogdet: the gradient at a singular matrix"):
        tv.grad(lambda a: tv.linalg.slogdet(a)[1])(singular)  # det's is the adjugate there
    with pytest.raises(ValueError, match="MatrixInverse"):
        tv.linalg.inv(singular)
    with pytest.raises(ValueError, match="eig: only real symmetric"):
        tv.linalg.eig(tv.tensor(np.array([[0.0, 1.0], [-1.0, 0.0]])))


def test_cumprod_with_zeros_second_order():
    x = np.array([0.5, 0.0, 2.0, -1.5])
    assert tv.check_grads(lambda x: tv.cumprod(x) * np.arange(1.0, 5.0), x, order=2).passed


_M = np.array([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 4.0]])
_V = np.array([0.3, -0.7, 0.5])
_P = np.array([1.3, 2.5, 1.7])
# every numpy function issue 13 lists: (call, arguments); the first argument is differentiated
ISSUE_13 = {
    "sinh": (np.sinh, _V), "cosh": (np.cosh, _V), "arcsin": (np.arcsin, _V),
    "arccos": (np.arccos, _V), "arctan": (np.arctan, _V), "arctan2": (np.arctan2, _V, _P),
    "arcsinh": (np.arcsinh, _V), "arccosh": (np.arccosh, _P), "arctanh": (np.arctanh, _V),
    "exp2": (np.exp2, _V), "expm1": (np.expm1, _V), "log2": (np.log2, _P),
    "log10": (np.log10, _P), "logaddexp": (np.logaddexp, _V, _P),
    "logaddexp2": (np.logaddexp2, _V, _P), "hypot": (np.hypot, _V, _P), "sinc": (np.sinc, _V),
    "fabs": (np.fabs, _V), "fmax": (np.fmax, _V, _P), "fmin": (np.fmin, _V, _P),
    "mod": (np.mod, _P, 0.7), "remainder": (np.remainder, _P, 0.7), "floor": (np.floor, _V),
    "ceil": (np.ceil, _V), "round": (np.round, _V), "nan_to_num": (np.nan_to_num, _V),
    "deg2rad": (np.deg2rad, _V), "rad2deg": (np.rad2deg, _V), "ravel": (np.ravel, _M),
    "repeat": (lambda x: np.repeat(x, 2, 0), _M), "roll": (lambda x: np.roll(x, 1, 1), _M),
    "flip": (np.flip, _M), "fliplr": (np.fliplr, _M), "flipud": (np.flipud, _M),
    "rot90": (np.rot90, _M), "swapaxes": (lambda x: np.swapaxes(x, 0, 1), _M),
    "moveaxis": (lambda x: np.moveaxis(x, 0, 1), _M), "atleast_1d": (np.atleast_1d, _V),
    "atleast_2d": (np.atleast_2d, _V), "atleast_3d": (np.atleast_3d, _V),
    "array_split": (lambda x: np.array_split(x, 2)[0], _V),
    "hsplit": (lambda x: np.hsplit(x, 3)[1], _M), "vsplit": (lambda x: np.vsplit(x, 3)[2], _M),
    "dsplit": (lambda x: np.dsplit(x.reshape(1, 3, 3), 3)[0], _M), "sort": (np.sort, _V),
    "partition": (lambda x: np.partition(x, 1), _V), "diff": (np.diff, _V),
    "cumsum": (np.cumsum, _M), "cumprod": (np.cumprod, _V), "tile": (lambda x: np.tile(x, 2), _V),
    "var": (lambda x: np.var(x, ddof=1), _V), "std": (lambda x: np.std(x, ddof=1), _V),
    "einsum": (lambda x: np.einsum("ij,jk->ik", x, x), _M),
    "tensordot": (lambda x: np.tensordot(x, x, 1), _M), "inner": (np.inner, _V, _P),
    "outer": (np.outer, _V, _P), "kron": (np.kron, _V, _P), "cross": (np.cross, _V, _P),
    "trace": (np.trace, _M), "diag": (np.diag, _V), "diagonal": (np.diagonal, _M),
    "tril": (np.tril, _M), "triu": (np.triu, _M), "dot": (np.dot, _M, _V),
    "inv": (np.linalg.inv, _M), "det": (np.linalg.det, _M),
    "slogdet": (lambda x: np.linalg.slogdet(x)[1], _M), "solve": (np.linalg.solve, _M, _V),
    "cholesky": (np.linalg.cholesky, _M), "eigh": (lambda x: np.linalg.eigh(x)[0], _M),
    "eig": (lambda x: np.linalg.eig(x)[0], _M),
    "svd": (lambda x: np.linalg.svd(x, compute_uv=False), _M),
    "pinv": (np.linalg.pinv, _M), "norm": (np.linalg.norm, _M),
    "qr": (lambda x: np.linalg.qr(x)[1], _M),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ISSUE_13))
def test_every_listed_numpy_function_dispatches_records_and_matches_numpy(name):
    fn, x, *rest = ISSUE_13[name]
    t = tv.tensor(x)
    with tv.Tape() as tape:
        tape.watch(t)
        y = fn(t, *rest)
        loss = tv.sum(y * y)
    assert isinstance(y, tv.Tensor), f"np.{name} returned {type(y).__name__}"
    want = fn(x, *rest)
    if name == "eig":
        want = np.sort(np.real(want))
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12, err_msg=name)
    assert y is t or tape.producer(y) is not None, name  # recorded (or x itself)
    g = tape.gradient(loss, t)
    assert g is not None and g.shape == t.shape and np.all(np.isfinite(g.numpy())), name


@pytest.mark.parametrize(
    "x, y",
    [
        (np.array([True, False]), np.nan),  # fuzzer, long profile, seeds 100326 and 100609
        (np.array([1.0, 2.0], np.float32), 0.5),
        (np.array([1, 2]), 0.5),
        (np.array([1, 2]), 2),
        (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0])),
        (np.array([True, False]), [0.5, 1.5]),
        (np.array([1.0, 2.0], np.float32), [1, 2]),
    ],
)
def test_np_where_on_tensors_gives_numpys_dtype(x, y):
    """np.where is numpy's function: its dtype is numpy's (a bool tensor with np.nan is float64),
    as for the ufuncs; tv.where keeps tapeviz's weak Python-number rule."""
    c = np.array([True, False])
    got = np.where(c, tv.tensor(x), y)
    want = np.where(c, x, y)
    assert got.dtype == want.dtype, (x.dtype, y, got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)
