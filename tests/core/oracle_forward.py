"""Forward-only oracle cases: the registered kernels that have no gradient (comparisons,
one_hot). Their value is checked against numpy's own functions on both backends (the numba
backend compiles its comparisons), at random points and at the edges: ±0, ±inf, NaN, ties,
broadcast shapes, size 0, scalars; float64, float32 and int32 operands. Inside a tape they
stay non-differentiable: a bool result, no gradient through them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import tapeviz.core as tv
from tapeviz.core.registry import kernel_names as K

NAN, INF = float("nan"), float("inf")


@dataclass(frozen=True)
class ForwardCase:
    id: str
    kernel: str
    tv_fn: Callable  # (*tv tensors) -> tv tensor
    np_fn: Callable  # (*numpy arrays) -> numpy array
    args: tuple  # float64 (or integer) numpy arrays
    dtypes: tuple = (np.float64, np.float32, np.int32)  # operand dtypes run


COMPARISONS = {
    K.GREATER: (tv.greater, np.greater),
    K.GREATER_EQUAL: (tv.greater_equal, np.greater_equal),
    K.LESS: (tv.less, np.less),
    K.LESS_EQUAL: (tv.less_equal, np.less_equal),
    K.EQUAL: (tv.equal, np.equal),
    K.NOT_EQUAL: (tv.not_equal, np.not_equal),
}
EDGE_A = np.array([0.0, -0.0, INF, -INF, NAN, 1.5, 1.5, -2.0, NAN, INF])
EDGE_B = np.array([-0.0, 0.0, INF, 1.0, 1.0, NAN, 1.5, 3.0, NAN, -INF])
_RNG = np.random.default_rng(12)
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), ()), ((0, 3), (3,)), ((), (4,))]

FORWARD_CASES: list[ForwardCase] = []
for kernel, (tv_fn, np_fn) in COMPARISONS.items():
    FORWARD_CASES.append(
        ForwardCase(
            f"{kernel}[edge]", kernel, tv_fn, np_fn, (EDGE_A, EDGE_B), (np.float64, np.float32)
        )
    )
    for sa, sb in SHAPES:
        a = np.round(_RNG.uniform(-2, 2, sa))  # small integers: ties are common
        b = np.round(_RNG.uniform(-2, 2, sb))
        FORWARD_CASES.append(
            ForwardCase(f"{kernel}{list(sa)}{list(sb)}", kernel, tv_fn, np_fn, (a, b))
        )


def _np_one_hot(idx, depth):
    return (idx[..., None] == np.arange(depth)).astype(np.float32)


for shape in [(4,), (2, 3), (0,), ()]:
    _idx = _RNG.integers(0, 3, shape)
    FORWARD_CASES.append(
        ForwardCase(
            f"one_hot{list(shape)}",
            K.ONE_HOT,
            lambda i: tv.one_hot(i, 3),
            lambda i: _np_one_hot(i, 3),
            (_idx,),
            (np.int64, np.int32),
        )  # fmt: skip
    )


# bitwise ops (logical on bool): no gradient; bool and integer operands, broadcast, size 0
BITWISE = {
    K.BITWISE_AND: (lambda a, b: a & b, np.bitwise_and),
    K.BITWISE_OR: (lambda a, b: a | b, np.bitwise_or),
    K.BITWISE_XOR: (lambda a, b: a ^ b, np.bitwise_xor),
}
for kernel, (tv_fn, np_fn) in BITWISE.items():
    for sa, sb in SHAPES:
        a, b = _RNG.integers(-3, 4, sa), _RNG.integers(-3, 4, sb)
        FORWARD_CASES.append(
            ForwardCase(
                f"{kernel}{list(sa)}{list(sb)}",
                kernel,
                tv_fn,
                np_fn,
                (a, b),
                (np.bool_, np.int32, np.int64, np.uint8),
            )  # fmt: skip
        )
SHIFTS = {
    K.LEFT_SHIFT: (lambda a, b: a << b, np.left_shift),
    K.RIGHT_SHIFT: (lambda a, b: a >> b, np.right_shift),
}
for kernel, (tv_fn, np_fn) in SHIFTS.items():
    for sa, sb in SHAPES:
        a, b = _RNG.integers(-50, 50, sa), _RNG.integers(0, 5, sb)
        FORWARD_CASES.append(
            ForwardCase(
                f"{kernel}{list(sa)}{list(sb)}", kernel, tv_fn, np_fn, (a, b), (np.int32, np.int64)
            )
        )
for shape in [(2, 3), (), (0,)]:
    FORWARD_CASES.append(
        ForwardCase(
            f"{K.INVERT}{list(shape)}",
            K.INVERT,
            lambda a: ~a,
            np.invert,
            (_RNG.integers(-3, 4, shape),),
            (np.bool_, np.int32, np.uint8),
        )  # fmt: skip
    )


def check_forward(case: ForwardCase, backend: str, dtype) -> None:
    """tapeviz's value on ``backend`` with operands in ``dtype`` equals numpy's, exactly
    (shape, dtype and every element, NaN comparisons and signed zeros included); in a tape
    the result is not connected to the operands: no gradient flows through it."""
    args = [np.asarray(a).astype(dtype) for a in case.args]
    want = case.np_fn(*args)
    xs = [tv.tensor(a) for a in args]
    floats = [x for x in xs if x.dtype.kind == "f"]
    with tv.backend(backend), np.errstate(all="ignore"), tv.Tape() as tape:
        tape.watch(*floats)
        got = case.tv_fn(*xs)
        loss = tv.sum(tv.cast(got, np.float64))
    where = f"{case.id} on {backend}, {np.dtype(dtype)}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, numpy {want.shape}"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, numpy {want.dtype}"
    np.testing.assert_array_equal(got.numpy(), want, err_msg=where)
    if floats:
        grads = tape.gradient(loss, floats)
        assert all(g is None for g in grads), f"{where}: a gradient flows through {case.kernel}"
