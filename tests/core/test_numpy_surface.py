"""numpy functions of issue 27 on tensors, through the numpy dispatch: ``np.linalg.vector_norm``,
``matrix_norm``, ``qr``'s other modes, ``np.linspace`` with tensor endpoints, ``einsum``'s
interleaved form, ``x[[]]``, ``np.clip`` with lo > hi, and integer conversions inside a tape.
Values against numpy; gradients against PyTorch (or autograd, whose linspace is differentiable)
in float64. (``np.take``/``take_along_axis``/``compress``: tests/core/test_surface.py.)
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import torch
from weighted_vjp import torch_grads, tv_grads

import tapeviz.core as tv

RNG = np.random.default_rng(2727)


# --- vector_norm, matrix_norm ---------------------------------------------------------------
VECTOR = [({}, (2, 3, 4)), ({"axis": 1}, (2, 3, 4)), ({"axis": (0, 2), "keepdims": True}, (2, 3, 4)),
          ({"ord": 1}, (5,)), ({"ord": np.inf, "axis": -1}, (2, 3)), ({"ord": 3, "axis": (1, 2)}, (2, 3, 4)),
          ({"ord": -np.inf}, (4,)), ({}, ()), ({"axis": 0}, (0, 3)), ({"ord": 0.5}, (3, 2))]  # fmt: skip


@pytest.mark.parametrize(("kw", "shape"), VECTOR)
def test_vector_norm_against_numpy_and_torch(kw, shape):
    a = RNG.normal(size=shape)
    got, (g,) = tv_grads(lambda x: np.linalg.vector_norm(x, **kw), a)
    want = np.linalg.vector_norm(a, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.shape == np.shape(want)
    tkw = {"dim": kw.get("axis"), "keepdim": kw.get("keepdims", False), "ord": kw.get("ord", 2)}
    _, (gw,) = torch_grads(lambda x: torch.linalg.vector_norm(x, **tkw), a)
    np.testing.assert_allclose(g, gw, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ord_", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 3)])
def test_matrix_norm_against_numpy_and_torch(ord_, shape):
    a = RNG.normal(size=shape)
    for keep in (False, True):
        got, (g,) = tv_grads(lambda x: np.linalg.matrix_norm(x, ord=ord_, keepdims=keep), a)
        np.testing.assert_allclose(got, np.linalg.matrix_norm(a, ord=ord_, keepdims=keep),
                                   rtol=1e-12)  # fmt: skip
        _, (gw,) = torch_grads(lambda x: torch.linalg.matrix_norm(x, ord=ord_, keepdim=keep), a)
        np.testing.assert_allclose(g, gw, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="matrix_norm: expected ndim >= 2"):
        np.linalg.matrix_norm(tv.tensor(np.ones(3)))


# --- qr modes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 4, 3)])
def test_qr_modes_values_as_numpy(shape):
    a = RNG.normal(size=shape)
    for mode in ("reduced", "r", "complete", "raw"):
        got, want = np.linalg.qr(tv.tensor(a), mode=mode), np.linalg.qr(a, mode=mode)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (mode, g.shape, w.shape)
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 3)])
def test_qr_r_and_complete_gradients_against_torch(shape):
    a = RNG.normal(size=shape)
    _, (g,) = tv_grads(lambda x: np.linalg.qr(x, mode="r"), a)
    _, (gw,) = torch_grads(lambda x: torch.linalg.qr(x, mode="reduced")[1], a)
    np.testing.assert_allclose(g, gw, rtol=1e-9, atol=1e-12)
    if shape[0] <= shape[1]:  # complete == reduced: differentiable
        _, (g,) = tv_grads(lambda x: tv.concat(list(np.linalg.qr(x, mode="complete")), 1), a)
        _, (gw,) = torch_grads(lambda x: torch.cat(torch.linalg.qr(x, mode="complete"), 1), a)
        np.testing.assert_allclose(g, gw, rtol=1e-9, atol=1e-12)


def test_qr_modes_without_a_gradient_raise_in_a_tape():
    x = tv.tensor(RNG.normal(size=(5, 3)))
    with tv.Tape() as tape:
        tape.watch(x)
        for mode in ("complete", "raw"):
            with pytest.raises(ValueError, match=f"qr: mode='{mode}' of a 5x3 matrix has no"):
                np.linalg.qr(x, mode=mode)
    with pytest.raises(ValueError, match="qr: mode must be"):
        np.linalg.qr(x, mode="economic")


# --- linspace with tensor endpoints -----------------------------------------------------------
LINSPACE = [(2.0, -1.0, {"num": 5}), (0.0, 1.0, {"num": 4, "endpoint": False}),
            (1.0, 3.0, {"num": 1}), (1.0, 3.0, {"num": 0}), (0.1, 0.7, {"num": 7}),
            (np.array([0.0, 1.0]), np.array([2.0, -1.0]), {"num": 4, "axis": 1}),
            (np.array([[0.0], [1.0]]), np.array([2.0, 3.0, 4.0]), {"num": 3, "axis": -1})]  # fmt: skip


@pytest.mark.parametrize(("start", "stop", "kw"), LINSPACE)
def test_linspace_with_tensor_endpoints_is_numpys_and_differentiable(start, stop, kw):
    start, stop = np.asarray(start, np.float64), np.asarray(stop, np.float64)
    got, (gs, ge) = tv_grads(lambda a, b: np.linspace(a, b, **kw), start, stop)
    np.testing.assert_array_equal(got, np.linspace(start, stop, **kw))
    # d/dstart = 1 - t, d/dstop = t (autograd's rule), t = i / div along the new axis
    num, endpoint, axis = kw["num"], kw.get("endpoint", True), kw.get("axis", 0)
    div = (num - 1) if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    shape = np.broadcast_shapes(start.shape, stop.shape)
    t = np.moveaxis(np.broadcast_to(t.reshape((-1,) + (1,) * len(shape)), (num,) + shape), 0, axis)
    w = np.linspace(0.5, 1.5, got.size).reshape(got.shape)
    ax = axis % got.ndim
    full_s = np.moveaxis(w * (1 - t), ax, 0).sum(0)  # shape: the broadcast endpoints'
    full_e = np.moveaxis(w * t, ax, 0).sum(0)
    np.testing.assert_allclose(gs, _unbroadcast(full_s, start.shape), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ge, _unbroadcast(full_e, stop.shape), rtol=1e-12, atol=1e-15)


def _unbroadcast(v, shape):
    v = v.sum(tuple(range(v.ndim - len(shape))))
    return v.sum(tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True).reshape(shape)


def test_linspace_gradient_against_autograd():
    w = np.linspace(0.5, 1.5, 6)
    f = lambda a, b: anp.sum(anp.linspace(a, b, 6) * w)  # noqa: E731
    _, (gs, ge) = tv_grads(lambda a, b: np.linspace(a, b, 6), np.float64(-1.0), np.float64(2.5))
    np.testing.assert_allclose(gs, autograd.grad(f, 0)(-1.0, 2.5), rtol=1e-12)
    np.testing.assert_allclose(ge, autograd.grad(f, 1)(-1.0, 2.5), rtol=1e-12)


def test_linspace_retstep_dtype_and_tv_linspace():
    a = tv.tensor(np.float64(1.0))
    y, step = np.linspace(a, 3.0, 5, retstep=True)
    np.testing.assert_array_equal(y.numpy(), np.linspace(1.0, 3.0, 5))
    assert float(step) == 0.5
    np.testing.assert_array_equal(np.linspace(a, 10.0, 4, dtype=int).numpy(),
                                  np.linspace(1.0, 10.0, 4, dtype=int))  # fmt: skip
    assert tv.linspace(a, 3.0, 5).dtype == np.float64  # tensor endpoints: their dtype
    assert tv.linspace(0.0, 1.0, 3).dtype == np.float32  # numbers: tapeviz's float32
    with pytest.raises(ValueError, match="must be non-negative"):
        np.linspace(a, 3.0, -1)


# --- einsum's interleaved form ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("subs", "spec"),
    [(([0, 1], [1, 2], [0, 2]), "ij,jk->ik"), (([0, 1], [1, 2]), "ij,jk"),
     (([Ellipsis, 1], [1, 2], [Ellipsis, 2]), "...j,jk->...k"), (([0, 1], [0, 1], []), "ij,ij->")],
)  # fmt: skip
def test_einsum_interleaved_against_numpy_and_torch(subs, spec):
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4) if "jk" in spec else (2, 3))
    args = lambda x, y: (x, subs[0], y, subs[1], *subs[2:])  # noqa: E731
    got, (ga, gb) = tv_grads(lambda x, y: np.einsum(*args(x, y)), a, b)
    np.testing.assert_allclose(got, np.einsum(*args(a, b)), rtol=1e-12)
    _, (wa, wb) = torch_grads(lambda x, y: torch.einsum(spec, x, y), a, b)
    np.testing.assert_allclose(ga, wa, rtol=1e-12)
    np.testing.assert_allclose(gb, wb, rtol=1e-12)
    with pytest.raises(ValueError, match="einsum: operand 0's subscripts must be integers"):
        tv.einsum(tv.tensor(a), ["i", 1])


# --- x[[]], clip with lo > hi --------------------------------------------------------------------
def test_empty_list_index_as_numpy():
    a = RNG.normal(size=(3, 2))
    for key in ([], (slice(None), []), ([[]],)):
        got, (g,) = tv_grads(lambda x: x[key], a)
        assert got.shape == a[key].shape, key
        np.testing.assert_array_equal(g, np.zeros_like(a))
    with pytest.raises(TypeError, match="getitem: index arrays must be int or bool"):
        tv.tensor(a)[np.array([], np.float64)]  # an explicit float array: numpy refuses too


def test_clip_with_lo_above_hi_is_numpys_answer_and_torchs_gradient():
    a = RNG.normal(size=(5,)) * 3
    np.testing.assert_array_equal(np.clip(tv.tensor(a), 2.0, -1.0).numpy(), np.clip(a, 2.0, -1.0))
    lo, hi = np.full(5, 1.0), np.full(5, -1.0)
    got, (ga, glo, ghi) = tv_grads(lambda x, lo, hi: np.clip(x, lo, hi), a, lo, hi)
    np.testing.assert_array_equal(got, np.clip(a, lo, hi))
    _, (wa, wlo, whi) = torch_grads(lambda x, lo, hi: torch.clamp(x, lo, hi), a, lo, hi)
    for g, w in ((ga, wa), (glo, wlo), (ghi, whi)):
        np.testing.assert_array_equal(g, w)


# --- integer conversions inside a tape ----------------------------------------------------------
def test_integer_conversions_in_a_tape_are_numpys_value_with_zero_gradient():
    """``np.int64(x)``, ``np.asarray(x, int)`` and ``x.astype(int)`` give numpy's value inside
    a tape: an integer of a float is piecewise constant, so its gradient is 0 and nothing is
    cut. A float conversion (``np.asarray(x)``, ``np.float32(x)``) still raises there."""
    w = tv.variable(np.array([1.5, -2.7, 3.2]))
    with tv.Tape() as tape:
        assert np.int64(w[0]) == np.int64(1) and type(np.int64(w[1])) is np.int64
        np.testing.assert_array_equal(np.asarray(w, dtype=int), np.array([1, -2, 3]))
        ints = w.astype(int)
        np.testing.assert_array_equal(ints.numpy(), np.array([1.5, -2.7, 3.2]).astype(int))
        loss = tv.sum(tv.cast(ints, np.float64) * w)
        with pytest.raises(TypeError, match="recorded by an active tape"):
            np.float32(w[0])
        with pytest.raises(TypeError, match="recorded by an active tape"):
            np.asarray(w)
    # d/dw sum(int(w) * w) = int(w): the cast contributes 0
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), [1.0, -2.0, 3.0])
