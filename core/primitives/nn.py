"""Gradients of conv2d and pooling. The backprop kernels are linear, so their gradients are
convolutions again; max_pool's is a gather at each window's maximum (second order works
for all three)."""

from __future__ import annotations

from .. import ops as o
from ..backends.numpy import nn as npk
from ..engine.dispatch import run_kernel
from ..ops.nn import softmax_cross_entropy_grad
from ..registry import batching as B
from ..registry import kernel_names as K
from ..registry.primitive import Primitive


def _conv_attrs(attrs):
    return {"strides": attrs["strides"], "pads": attrs["pads"]}


def conv2d_backprop_input(dy, w, input_shape, attrs):
    a = {**_conv_attrs(attrs), "input_shape": tuple(input_shape)}
    return run_kernel(K.CONV2D_BACKPROP_INPUT, {"dy": dy, "filter": w}, a)


def conv2d_backprop_filter(x, dy, filter_shape, attrs):
    a = {**_conv_attrs(attrs), "filter_shape": tuple(filter_shape)}
    return run_kernel(K.CONV2D_BACKPROP_FILTER, {"x": x, "dy": dy}, a)


def _conv(x, w, attrs):
    return run_kernel(K.CONV2D, {"x": x, "filter": w}, _conv_attrs(attrs))


# conv2d: dx = conv^T_x(dy, w), dw = conv^T_w(x, dy)
def _conv2d(dy, saved, attrs):
    """conv2d: dx = conv2d_backprop_input(dy, w), dw = conv2d_backprop_filter(x, dy)"""
    x, w = saved
    return {
        "x": lambda: conv2d_backprop_input(dy, w, x.shape, attrs),
        "filter": lambda: conv2d_backprop_filter(x, dy, w.shape, attrs),
    }


# backprop_input(dy, w) is linear in each: d/d(dy) = conv(g, w); d/dw = backprop_filter(g, dy)
def _conv2d_backprop_input(g, saved, attrs):
    """conv2d_backprop_input(dy, w), linear in each: d(dy) = conv2d(g, w), dw = conv2d_backprop_filter(g, dy)"""
    dy, w = saved
    return {
        "dy": lambda: _conv(g, w, attrs),
        "filter": lambda: conv2d_backprop_filter(g, dy, w.shape, attrs),
    }


# backprop_filter(x, dy): d/d(dy) = conv(x, g); d/dx = backprop_input(dy, g)
def _conv2d_backprop_filter(g, saved, attrs):
    """conv2d_backprop_filter(x, dy), linear in each: d(dy) = conv2d(x, g), dx = conv2d_backprop_input(dy, g)"""
    x, dy = saved
    return {
        "dy": lambda: _conv(x, g, attrs),
        "x": lambda: conv2d_backprop_input(dy, g, x.shape, attrs),
    }


def _pool_attrs(attrs):
    return {"ksize": attrs["ksize"], "strides": attrs["strides"], "pads": attrs["pads"]}


# max_pool: dy goes to the (first) maximum of each window
def _max_pool(dy, saved, attrs):
    """max_pool: dy goes to the (first) maximum of each window"""
    (x,) = saved
    return {"x": lambda: run_kernel(K.MAX_POOL_GRAD, {"x": x, "dy": dy}, _pool_attrs(attrs))}


# avg_pool: dy shared evenly over each window's real elements
def _avg_pool(dy, saved, attrs):
    """avg_pool: dy shared evenly over each window's elements"""
    (x,) = saved
    a = {**_pool_attrs(attrs), "input_shape": x.shape}
    return {"x": lambda: run_kernel(K.AVG_POOL_GRAD, {"dy": dy}, a)}


# max_pool_grad(x, dy) is linear in dy: d/d(dy) picks g at each window's maximum; d/dx = 0
def _max_pool_grad(g, saved, attrs):
    """max_pool_grad(x, dy), linear in dy: d(dy) = g at each window's maximum, dx = 0"""
    (x,) = saved
    return {"dy": lambda: run_kernel(K.MAX_POOL_GATHER, {"x": x, "g": g}, _pool_attrs(attrs))}


# max_pool_gather(x, g) is linear in g: its transpose routes dy back as max_pool_grad does
def _max_pool_gather(dy, saved, attrs):
    """max_pool_gather(x, g), linear in g: dg = max_pool_grad(x, dy), dx = 0"""
    (x,) = saved
    return {"g": lambda: run_kernel(K.MAX_POOL_GRAD, {"x": x, "dy": dy}, _pool_attrs(attrs))}


def _avg_pool_grad(g, saved, attrs):
    """avg_pool_grad is linear: its gradient is avg_pool(g)"""
    return {"dy": lambda: run_kernel(K.AVG_POOL, {"x": g}, _pool_attrs(attrs))}


# softmax_cross_entropy: y = -sum(t log_softmax(z)) / n, T = sum(t, -1) (1 for probability
# labels, any value allowed); dz = (softmax(z) T - t) dy / n, dt = -log_softmax(z) dy / n
def _softmax_cross_entropy(dy, saved, attrs):
    """softmax_cross_entropy: dz = (softmax(z) sum(t) - t) dy / n, dt = -log_softmax(z) dy / n"""
    z, t = saved
    n = _rows(z)
    return {
        "logits": lambda: softmax_cross_entropy_grad(dy, z, t),
        "labels": lambda: o.log_softmax(z, -1) * (dy * (-1 / n)),
    }


# softmax_cross_entropy_grad: g = (p T - t) dy / n, p = softmax(z), T = sum(t, -1);
# d(dy) = sum(dg (p T - t)) / n; d(z) = T p (u - sum(u p)) with u = dg dy / n;
# d(t) = (sum(dg p, -1) - dg) dy / n (T depends on every label of its row)
def _softmax_cross_entropy_grad(dg, saved, attrs):
    """softmax_cross_entropy_grad: linear in dy; its gradient through softmax(z) and t"""
    dy, z, t = saved
    n = _rows(z)

    def dz():
        p, u = o.softmax(z, -1), dg * (dy * (1 / n))
        return o.sum(t, -1, keepdims=True) * p * (u - o.sum(u * p, -1, keepdims=True))

    def ddy():
        p = o.softmax(z, -1)
        return o.sum(dg * (p * o.sum(t, -1, keepdims=True) - t)) * (1 / n)

    def dt():
        p = o.softmax(z, -1)
        return (o.sum(dg * p, -1, keepdims=True) - dg) * (dy * (1 / n))

    return {"dy": ddy, "logits": dz, "labels": dt}


def _rows(z) -> int:
    return max(z.size // z.shape[-1], 1) if z.shape[-1] else 1


def _softmax_ce_parts(ins: dict, attrs: dict):
    """mean(-Σ labels · log_softmax(logits)) as separate ops (the lesson graph's view)."""
    return o.mean(-o.sum(ins["labels"] * o.log_softmax(ins["logits"], axis=-1), axis=-1))


_IMAGES = B.nhwc_images  # core/registry/batching.py

ROWS = (
    Primitive(
        K.SOFTMAX_CROSS_ENTROPY,
        kernel=npk.softmax_cross_entropy,
        vjp=_softmax_cross_entropy,
        inputs_to_save=("logits", "labels"),
        decomposition=_softmax_ce_parts,
    ),
    Primitive(
        K.SOFTMAX_CROSS_ENTROPY_GRAD,
        kernel=npk.softmax_cross_entropy_grad,
        vjp=_softmax_cross_entropy_grad,
        inputs_to_save=("dy", "logits", "labels"),
    ),
    Primitive(
        K.CONV2D,
        kernel=npk.conv2d,
        numba="nn.conv2d",
        vjp=_conv2d,
        inputs_to_save=("x", "filter"),
        batch=_IMAGES,
    ),
    Primitive(
        K.CONV2D_BACKPROP_INPUT,
        kernel=npk.conv2d_backprop_input,
        numba="nn.conv2d_backprop_input",
        vjp=_conv2d_backprop_input,
        inputs_to_save=("dy", "filter"),
    ),
    Primitive(
        K.CONV2D_BACKPROP_FILTER,
        kernel=npk.conv2d_backprop_filter,
        numba="nn.conv2d_backprop_filter",
        vjp=_conv2d_backprop_filter,
        inputs_to_save=("x", "dy"),
    ),
    Primitive(
        K.MAX_POOL,
        kernel=npk.max_pool,
        numba="nn.max_pool",
        vjp=_max_pool,
        inputs_to_save=("x",),
        batch=_IMAGES,
    ),
    Primitive(
        K.MAX_POOL_GRAD,
        kernel=npk.max_pool_grad,
        numba="nn.max_pool_grad",
        vjp=_max_pool_grad,
        inputs_to_save=("x",),
    ),
    Primitive(
        K.MAX_POOL_GATHER, kernel=npk.max_pool_gather, vjp=_max_pool_gather, inputs_to_save=("x",)
    ),
    Primitive(
        K.AVG_POOL,
        kernel=npk.avg_pool,
        numba="nn.avg_pool",
        vjp=_avg_pool,
        inputs_to_save=("x",),
        batch=_IMAGES,
    ),
    Primitive(
        K.AVG_POOL_GRAD, kernel=npk.avg_pool_grad, numba="nn.avg_pool_grad", vjp=_avg_pool_grad
    ),
)
