"""The fused gradient primitives (``TanhGrad`` and kin: one backward step in one kernel),
one ``Primitive`` row each; their VJPs are written with ops, so ``grad(grad(f))`` works
through them. ``z`` is the fused kernel's output, ``dz`` flows in.
"""

from __future__ import annotations

from .. import ops as o
from ..backends.numpy import elementwise as npk
from ..ops.elementwise import (
    cos_grad,
    relu_grad,
    rsqrt_grad,
    sigmoid_grad,
    sin_grad,
    sqrt_grad,
    tanh_grad,
)
from ..registry import batching as B
from ..registry import kernel_names as K
from ..registry.primitive import Primitive
from .define import family


# tanh_grad: z = dy (1 - y^2); d(dy) = dz (1 - y^2), d(y) = -2 dz dy y
def _tanh_grad(dz, saved, attrs):
    """tanh_grad: z = dy (1 - y^2); d(dy) = dz (1 - y^2), d(y) = -2 dz dy y"""
    dy, y = saved
    return {"dy": lambda: tanh_grad(dz, y), "y": lambda: dz * dy * y * -2}


# sigmoid_grad: z = dy y (1 - y); d(dy) = dz y (1 - y), d(y) = dz dy (1 - 2 y)
def _sigmoid_grad(dz, saved, attrs):
    """sigmoid_grad: z = dy y (1 - y); d(dy) = dz y (1 - y), d(y) = dz dy (1 - 2 y)"""
    dy, y = saved
    return {"dy": lambda: sigmoid_grad(dz, y), "y": lambda: dz * dy * (1 - y * 2)}


# relu_grad: z = dy [not x <= 0]; d(dy) = dz [not x <= 0] (x: piecewise constant, no gradient)
def _relu_grad(dz, saved, attrs):
    """relu_grad: z = dy [x > 0]; d(dy) = dz [x > 0]"""
    (x,) = saved
    return {"dy": lambda: relu_grad(dz, x)}


# sqrt_grad: z = dy / (2 y); d(dy) = dz / (2 y), d(y) = -dz dy / (2 y^2)
def _sqrt_grad(dz, saved, attrs):
    """sqrt_grad: z = dy / (2 y); d(dy) = dz / (2 y), d(y) = -dz dy / (2 y^2)"""
    dy, y = saved
    return {"dy": lambda: sqrt_grad(dz, y), "y": lambda: o.neg(dz * dy) / (y * y * 2)}


# rsqrt_grad: z = -dy y^3 / 2; d(dy) = -dz y^3 / 2, d(y) = -3/2 dz dy y^2
def _rsqrt_grad(dz, saved, attrs):
    """rsqrt_grad: z = -dy y^3 / 2; d(dy) = -dz y^3 / 2, d(y) = -3/2 dz dy y^2"""
    dy, y = saved
    return {"dy": lambda: rsqrt_grad(dz, y), "y": lambda: dz * dy * (y * y) * -1.5}


# sin_grad: z = dy cos x; d(dy) = dz cos x, d(x) = -dz dy sin x
def _sin_grad(dz, saved, attrs):
    """sin_grad: z = dy cos x; d(dy) = dz cos x, d(x) = -dz dy sin x"""
    dy, x = saved
    return {"dy": lambda: sin_grad(dz, x), "x": lambda: cos_grad(dz * dy, x)}


# cos_grad: z = -dy sin x; d(dy) = -dz sin x, d(x) = -dz dy cos x
def _cos_grad(dz, saved, attrs):
    """cos_grad: z = -dy sin x; d(dy) = -dz sin x, d(x) = -dz dy cos x"""
    dy, x = saved
    return {"dy": lambda: cos_grad(dz, x), "x": lambda: o.neg(sin_grad(dz * dy, x))}


ROWS = family(
    Primitive(K.TANH_GRAD, kernel=npk.tanh_grad, vjp=_tanh_grad, inputs_to_save=("dy", "y")),
    Primitive(
        K.SIGMOID_GRAD, kernel=npk.sigmoid_grad, vjp=_sigmoid_grad, inputs_to_save=("dy", "y")
    ),
    Primitive(K.RELU_GRAD, kernel=npk.relu_grad, vjp=_relu_grad, inputs_to_save=("x",)),
    Primitive(K.SQRT_GRAD, kernel=npk.sqrt_grad, vjp=_sqrt_grad, inputs_to_save=("dy", "y")),
    Primitive(K.RSQRT_GRAD, kernel=npk.rsqrt_grad, vjp=_rsqrt_grad, inputs_to_save=("dy", "y")),
    Primitive(K.SIN_GRAD, kernel=npk.sin_grad, vjp=_sin_grad, inputs_to_save=("dy", "x")),
    Primitive(K.COS_GRAD, kernel=npk.cos_grad, vjp=_cos_grad, inputs_to_save=("dy", "x")),
    batch=B.broadcast,
)
