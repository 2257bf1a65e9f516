"""One systematic table of op cases (autograd ``test_systematic`` style), shared by tests.

Each ``OpCase`` is an op applied to float64 numpy arguments, with a numpy reference for the
forward value. Builders expand one op over scalar, vector, matrix, broadcast, size-1 and
zero-size shapes. Inputs stay away from non-differentiable points (relu/abs at 0, ties).

``backends(case)``: the backends a case runs on. numpy always; numba only where numba has a
compiled kernel of its own among the kernels the case runs (forward, gradient, gradient of
the gradient), read from the registry at collection time: every other kernel on numba *is*
numpy's (``delegates_to="numpy"``), so running the case there again checks nothing new
(test_ops.py::test_delegated_cases_run_numpys_kernels_on_numba shows the delegation once
for all of them). A new compiled numba kernel brings its cases in by itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

import tapeviz.core as core
from tapeviz.core.backends import numba as nb

SHAPES = [(), (3,), (2, 3), (1, 3), (0, 3)]
PAIRS = [
    ((), ()),
    ((3,), (3,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((), (2, 3)),
    ((1, 3), (2, 3)),
    ((0, 3), (3,)),
]


@dataclass(frozen=True)
class OpCase:
    """``fn(*tensors)`` checked against ``ref(*arrays)``; gradients when ``order`` > 0."""

    id: str
    fn: Callable
    ref: Callable
    args: tuple
    order: int = 1  # 0: forward only; 1: gradients; 2: also second order
    tol: dict = field(default_factory=dict)  # check_grads eps/atol/rtol overrides


def _seed(text: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(text)) % 2**31


def values(shape, domain: str, key: str) -> np.ndarray:
    """Random float64 values of ``shape`` kept away from 0 (and inside ``domain``)."""
    rng = np.random.default_rng(_seed(key + str(shape) + domain))
    mag = rng.uniform(0.3, 1.4, shape)
    if domain == "positive":
        return np.asarray(mag + 0.2)
    sign = np.sign(rng.uniform(-1, 1, shape))
    return np.asarray(sign * mag * (0.6 if domain == "unit" else 1.0))  # unit: for tan, log1p


CASES: list[OpCase] = []


def unary(name, op, ref, domain="any", order=2, shapes=SHAPES, **tol):
    for shape in shapes:
        x = values(shape, domain, name)
        CASES.append(OpCase(f"{name}{list(shape)}", op, ref, (x,), order, tol))


def binary(name, op, ref, domain=("any", "any"), order=2, pairs=PAIRS):
    for sa, sb in pairs:
        a, b = values(sa, domain[0], name + "a"), values(sb, domain[1], name + "b")
        CASES.append(OpCase(f"{name}{list(sa)}{list(sb)}", op, ref, (a, b), order))


def case(id, fn, ref, *args, order=1, **tol):
    CASES.append(OpCase(id, fn, ref, tuple(args), order, tol))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# --- elementwise, unary ---------------------------------------------------------------------
unary("neg", core.neg, np.negative)
unary("abs", core.abs, np.abs)
unary("sign", core.sign, np.sign)
unary("exp", core.exp, np.exp)
unary("log", core.log, np.log, "positive")
unary("log1p", core.log1p, np.log1p, "unit")
unary("sqrt", core.sqrt, np.sqrt, "positive")
unary("rsqrt", core.rsqrt, lambda x: 1 / np.sqrt(x), "positive")
unary("square", core.square, np.square)
unary("reciprocal", core.reciprocal, np.reciprocal)
unary("sin", core.sin, np.sin)
unary("cos", core.cos, np.cos)
unary("tan", core.tan, np.tan, "unit")
unary("tanh", core.tanh, np.tanh)
unary("sigmoid", core.sigmoid, _sigmoid)
unary("relu", core.relu, lambda x: np.maximum(x, 0))
unary("leaky_relu", core.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x))
unary("leaky_relu_a", lambda x: core.leaky_relu(x, 0.05), lambda x: np.where(x > 0, x, 0.05 * x))
unary("elu", core.elu, _elu)
unary("elu_a", lambda x: core.elu(x, 0.5), lambda x: _elu(x, 0.5))
unary("selu", core.selu, lambda x: 1.0507009873554805 * _elu(x, 1.6732632423543772))
unary("softplus", core.softplus, lambda x: np.log1p(np.exp(x)))
unary("gelu", core.gelu, lambda x: 0.5 * x * (1 + special.erf(x / np.sqrt(2))))
unary("erf", core.erf, special.erf)
unary("clip", lambda x: core.clip(x, -0.9, 0.8), lambda x: np.clip(x, -0.9, 0.8))
unary("cast64", lambda x: core.cast(x, "float64"), lambda x: x)
unary(
    "cast32",
    lambda x: core.cast(core.cast(x, "float32") * 3, "float64"),
    lambda x: x * 3,
    shapes=[(3,), (2, 3)],
    order=1,
    eps=1e-2,
    atol=1e-4,
    rtol=1e-3,
)
case("cast_int", lambda x: core.cast(x, "int32"), lambda x: x.astype(np.int32), values((4,), "any", "ci") * 3, order=0)  # fmt: skip

# --- elementwise, binary --------------------------------------------------------------------
binary("add", core.add, np.add)
binary("sub", core.sub, np.subtract)
binary("mul", core.mul, np.multiply)
binary("div", core.div, np.divide)
binary("pow", core.pow, np.power, ("positive", "any"))
binary("maximum", core.maximum, np.maximum)
binary("minimum", core.minimum, np.minimum)
for _name, _op, _ref in [
    ("greater", core.greater, np.greater),
    ("less", core.less, np.less),
    ("equal", core.equal, np.equal),
]:
    binary(_name, _op, _ref, order=0)
case("equal_ties", core.equal, np.equal, np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0]), order=0)  # fmt: skip
case("add_scalar", lambda x: x + 2.5, lambda x: x + 2.5, values((2, 3), "any", "as"), order=2)
case("rsub_scalar", lambda x: 1.5 - x, lambda x: 1.5 - x, values((3,), "any", "rs"), order=2)
case("rdiv_scalar", lambda x: 2.0 / x, lambda x: 2.0 / x, values((3,), "any", "rd"), order=2)
case("pow_int", lambda x: x**3, lambda x: x**3, values((2, 3), "any", "pi"), order=2)
_COND = np.array([[True, False, True], [False, False, True]])
for _sa, _sb in [((2, 3), (2, 3)), ((3,), (2, 3)), ((), (2, 1))]:
    case(
        f"where{list(_sa)}{list(_sb)}",
        lambda a, b: core.where(core.tensor(_COND), a, b),
        lambda a, b: np.where(_COND, a, b),
        values(_sa, "any", "wa"),
        values(_sb, "any", "wb"),
        order=2,
    )

# --- reductions -----------------------------------------------------------------------------
_X3 = values((2, 3, 4), "any", "x3")
for _name, _op, _ref, _empty in [
    ("sum", core.sum, np.sum, True),
    ("mean", core.mean, np.mean, False),
    ("max", core.max, np.max, False),
    ("min", core.min, np.min, False),
    ("prod", core.prod, np.prod, True),
    ("logsumexp", core.logsumexp, _logsumexp, False),
]:
    for _shape, _axis, _keep in [
        ((), None, False),
        ((4,), None, False),
        ((4,), 0, True),
        ((2, 3), 0, False),
        ((2, 3), -1, True),
        ((2, 3, 4), (0, 2), False),
        ((2, 3, 4), None, True),
        ((1, 3), 0, False),
        ((0, 3), 0, False),
    ]:
        if _shape == (0, 3) and not _empty:
            continue
        case(
            f"{_name}{list(_shape)}axis={_axis},keep={_keep}",
            lambda x, op=_op, ax=_axis, k=_keep: op(x, axis=ax, keepdims=k),
            lambda x, ref=_ref, ax=_axis, k=_keep: ref(x, axis=ax, keepdims=k),
            values(_shape, "any", _name),
            order=2 if _name in ("sum", "mean", "logsumexp") else 1,
        )
case("prod_with_zero", lambda x: core.prod(x, axis=1), lambda x: np.prod(x, axis=1), np.array([[0.0, 2.0, 3.0], [1.5, -2.0, 0.5]]))  # fmt: skip
for _name, _op, _ref in [
    ("softmax", core.softmax, _softmax),
    ("log_softmax", core.log_softmax, lambda x, axis: np.log(_softmax(x, axis))),
]:
    for _shape, _axis in [((4,), -1), ((2, 3), -1), ((2, 3), 0), ((2, 3, 4), 1)]:
        case(
            f"{_name}{list(_shape)}axis={_axis}",
            lambda x, op=_op, ax=_axis: op(x, axis=ax),
            lambda x, ref=_ref, ax=_axis: ref(x, axis=ax),
            values(_shape, "any", _name),
            order=2,
        )

# --- matmul ---------------------------------------------------------------------------------
for _sa, _sb in [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((1, 3), (3, 1)),
    ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (4, 3, 2)),
    ((2, 0), (0, 3)),
    ((0, 2), (2, 3)),
]:
    case(
        f"matmul{list(_sa)}{list(_sb)}",
        core.matmul,
        np.matmul,
        values(_sa, "any", "ma"),
        values(_sb, "any", "mb"),
        order=2,
    )
case("matmul_op", lambda a, b: a @ b.T, lambda a, b: a @ b.T, values((2, 3), "any", "o1"), values((4, 3), "any", "o2"), order=2)  # fmt: skip

# --- shape and indexing ---------------------------------------------------------------------
_M = values((2, 3), "any", "m")
_V = values((4,), "any", "v")
case("transpose", core.transpose, np.transpose, _X3, order=2)
case("transpose_perm", lambda x: core.transpose(x, (1, 0, 2)), lambda x: np.transpose(x, (1, 0, 2)), _X3)  # fmt: skip
case("T", lambda x: x.T, lambda x: x.T, _M)
case("reshape", lambda x: core.reshape(x, (3, -1)), lambda x: x.reshape(3, -1), _M, order=2)
case("reshape_scalar", lambda x: core.reshape(x, (1, 1)), lambda x: x.reshape(1, 1), values((), "any", "rs"))  # fmt: skip
case("reshape_empty", lambda x: core.reshape(x, (3, 0)), lambda x: x.reshape(3, 0), values((0, 3), "any", "re"))  # fmt: skip
case("expand_dims", lambda x: core.expand_dims(x, 1), lambda x: np.expand_dims(x, 1), _M)
case("expand_dims_neg", lambda x: core.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), _V)
case("squeeze", core.squeeze, np.squeeze, values((1, 3, 1), "any", "sq"))
case("squeeze_axis", lambda x: core.squeeze(x, 0), lambda x: np.squeeze(x, 0), values((1, 3, 1), "any", "sa"))  # fmt: skip
for _axis in (0, 1, -1):
    case(
        f"concat_axis={_axis}",
        lambda a, b, ax=_axis: core.concat([a, b * 2], ax),
        lambda a, b, ax=_axis: np.concatenate([a, b * 2], ax),
        _M,
        values((2, 3), "any", "c2"),
        order=2,
    )
    case(
        f"stack_axis={_axis}",
        lambda a, b, ax=_axis: core.stack([a, b], ax),
        lambda a, b, ax=_axis: np.stack([a, b], ax),
        _M,
        values((2, 3), "any", "s2"),
    )
case("concat_uneven", lambda a, b: core.concat([a, b], 0), lambda a, b: np.concatenate([a, b]), _M, values((1, 3), "any", "cu"))  # fmt: skip
case("concat_empty", lambda a, b: core.concat([a, b], 0), lambda a, b: np.concatenate([a, b]), values((0, 3), "any", "ce"), _M)  # fmt: skip


def _weighted(parts):
    return core.concat([p * (i + 1) for i, p in enumerate(parts)], 0)


case("split_equal", lambda x: _weighted(core.split(x, 2, 0)), lambda x: np.concatenate([x[:2], x[2:] * 2]), _V, order=2)  # fmt: skip
case("split_sizes", lambda x: _weighted(core.split(x, [1, 0, 3], 0)), lambda x: np.concatenate([x[:1], x[1:] * 3]), _V)  # fmt: skip
case("split_one_used", lambda x: core.split(x, [1, 2], 1)[1], lambda x: x[:, 1:], _M)  # fmt: skip
for _key_id, _key in [
    ("int", 1),
    ("slice", (slice(None), slice(1, 3))),
    ("step", (slice(None, None, -1),)),
    ("ellipsis_none", (Ellipsis, None)),
    ("int_array_repeat", ([0, 1, 0],)),
    ("int_array_pair", ([0, 1], [2, 0])),
    ("bool_mask", (np.array([True, False]),)),
    ("mixed", (slice(None), [2, 2, 0])),
]:
    case(
        f"getitem_{_key_id}",
        lambda x, k=_key: x[k],
        lambda x, k=_key: x[
            tuple(np.asarray(i) if isinstance(i, list) else i for i in k)
            if isinstance(k, tuple)
            else k
        ],  # fmt: skip
        _M,
        order=2,
    )
case("gather", lambda x: core.gather(x, [2, 0, 2], axis=1), lambda x: np.take(x, [2, 0, 2], axis=1), _M, order=2)  # fmt: skip
case("gather_axis0", lambda x: core.gather(x, core.tensor(np.array([1, 1], np.int32))), lambda x: x[[1, 1]], _M)  # fmt: skip
case("pad", lambda x: core.pad(x, [(1, 0), (2, 1)]), lambda x: np.pad(x, [(1, 0), (2, 1)]), _M, order=2)  # fmt: skip
case("pad_value", lambda x: core.pad(x, [(0, 2)], 1.5), lambda x: np.pad(x, [(0, 2)], constant_values=1.5), _V)  # fmt: skip
case("tile", lambda x: core.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3)), _M, order=2)
case("tile_vec", lambda x: core.tile(x, 3), lambda x: np.tile(x, 3), _V)
case("broadcast_to", lambda x: core.broadcast_to(x, (4, 2, 3)), lambda x: np.broadcast_to(x, (4, 2, 3)), values((2, 1), "any", "bt"), order=2)  # fmt: skip
case("broadcast_scalar", lambda x: core.broadcast_to(x, (2, 2)), lambda x: np.broadcast_to(x, (2, 2)), values((), "any", "bs"))  # fmt: skip
case("one_hot", lambda i: core.one_hot(i, 4), lambda i: np.eye(4, dtype=np.float32)[i], np.array([0, 3, 1, 3]), order=0)  # fmt: skip

# --- neural network -------------------------------------------------------------------------


def _conv_ref(x, w, stride, padding):
    kh, kw = w.shape[:2]
    if padding == "same":
        ph = max((-(-x.shape[1] // stride) - 1) * stride + kh - x.shape[1], 0)
        pw = max((-(-x.shape[2] // stride) - 1) * stride + kw - x.shape[2], 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    oh = (x.shape[1] - kh) // stride + 1
    ow = (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def _pool_ref(x, k, stride, reduce):
    oh, ow = (x.shape[1] - k) // stride + 1, (x.shape[2] - k) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            win = x[:, i * stride : i * stride + k, j * stride : j * stride + k, :]
            out[:, i, j, :] = reduce(win, axis=(1, 2))
    return out


_IMG = values((2, 5, 5, 2), "any", "img")
for _stride, _padding in [(1, "valid"), (2, "valid"), (1, "same"), (2, "same")]:
    case(
        f"conv2d_s{_stride}_{_padding}",
        lambda x, w, s=_stride, p=_padding: core.conv2d(x, w, s, p),
        lambda x, w, s=_stride, p=_padding: _conv_ref(x, w, s, p),
        _IMG,
        values((3, 3, 2, 3), "any", "w"),
        order=2,
    )
for _k, _s in [(2, 2), (3, 1), (2, 1)]:
    case(
        f"max_pool2d_k{_k}_s{_s}",
        lambda x, k=_k, s=_s: core.max_pool2d(x, k, s),
        lambda x, k=_k, s=_s: _pool_ref(x, k, s, np.max),
        _IMG,
        order=2,
    )
    case(
        f"avg_pool2d_k{_k}_s{_s}",
        lambda x, k=_k, s=_s: core.avg_pool2d(x, k, s),
        lambda x, k=_k, s=_s: _pool_ref(x, k, s, np.mean),
        _IMG,
        order=2,
    )
case("avg_pool2d_same", lambda x: core.avg_pool2d(x, 2, 2, "same"), lambda x: _pool_ref(np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=np.nan), 2, 2, np.nanmean), _IMG)  # fmt: skip
case("max_pool2d_same", lambda x: core.max_pool2d(x, 2, 2, "same"), lambda x: _pool_ref(np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=-np.inf), 2, 2, np.max), _IMG)  # fmt: skip


def _dropout_ref(x, rate=0.5, seed=3):
    keep = np.random.default_rng(seed).random(x.shape) >= rate
    return x * keep / (1 - rate)


case("dropout", lambda x: core.dropout(x, 0.5, seed=3), _dropout_ref, _M, order=2)
case("dropout_eval", lambda x: core.dropout(x, 0.5, training=False), lambda x: x, _M)

CASES_BY_ID = {c.id: c for c in CASES}
assert len(CASES_BY_ID) == len(CASES), "duplicate op case ids"


# --- which backends a case runs on ----------------------------------------------------------
_KERNELS_RUN: dict[str, frozenset[str]] = {}


def kernels_run(case: OpCase) -> frozenset[str]:
    """The kernels recorded while computing the case's value, its gradient and the gradient
    of that (which ``check_grads``' forward mode and order 2 differentiate), on numpy."""
    if case.id not in _KERNELS_RUN:
        _KERNELS_RUN[case.id] = _kernels_run(case)
    return _KERNELS_RUN[case.id]


def _kernels_run(case: OpCase) -> frozenset[str]:
    xs = [core.tensor(a) for a in case.args]
    sources = [x for x in xs if x.dtype.kind == "f"]
    with np.errstate(all="ignore"), core.Tape(persistent=True) as outer:
        outer.watch(*sources)
        with core.Tape(persistent=True) as inner:
            inner.watch(*sources)
            y = case.fn(*xs)
        outs = [t for t in (y if isinstance(y, (list, tuple)) else [y]) if t.dtype.kind == "f"]
        if case.order >= 1 and sources and outs:
            dys = [core.tensor(np.ones(t.shape, t.dtype)) for t in outs]
            grads = inner.gradient(outs, sources, dys, unconnected_gradients="zero")
            vs = [core.tensor(np.ones(g.shape, g.dtype)) for g in grads]
            outer.gradient(list(grads), sources, vs, unconnected_gradients="zero")
    return frozenset(n.kernel for n in outer.nodes)


def compiled_on_numba() -> frozenset[str]:
    """The kernels numba compiles itself (registered without ``delegates_to``), now."""
    if "numba" not in core.list_backends():
        return frozenset()
    return frozenset(c.kernel_name for c in core.kernels_for_backend("numba") if not c.delegates_to)


def backends(case: OpCase) -> list[str]:
    """numpy, and numba where the case runs a kernel numba compiles (module docstring)."""
    return ["numpy"] + (["numba"] if kernels_run(case) & compiled_on_numba() else [])


@contextlib.contextmanager
def on_backend(backend: str):
    """``backend`` in force; on numba its compiled kernels run for every size (``min_size``
    0: otherwise an array this small would run numpy's kernel inside numba's)."""
    old = nb.settings.min_size
    nb.settings.min_size = 0 if backend == "numba" else old
    try:
        with core.backend(backend):
            yield
    finally:
        nb.settings.min_size = old
