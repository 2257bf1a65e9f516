"""The unary elementwise primitives (math and activations): one ``Primitive`` row each in
``ROWS`` (kernel name, numpy kernel, VJP, what it saves, formula; every one batches
elementwise). The two-input ones are in ``elementwise_binary.py``.

The VJPs are written with ops (so they differentiate again); ``dy`` flows in. Where one fused kernel computes the whole step (``TanhGrad``, ``SigmoidGrad``, ...; their
own gradients are in ``fused.py``) the step runs one kernel instead of three or four ops.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops as o
from ..backends.numpy import elementwise as npk
from ..backends.numpy.elementwise import same, unary
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

_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def _mask(cond, like):
    """A float 0/1 tensor from a bool tensor (constant for differentiation)."""
    return o.cast(cond, like.dtype)


# neg: y = -x; dx = -dy
def _neg(dy, saved, attrs):
    return {"x": lambda: o.neg(dy)}


# abs: y = |x|; dx = dy * sign(x)
def _abs(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy * o.sign(x)}


# sign: dx = 0
def _sign(dy, saved, attrs):
    return {"x": lambda: o.zeros_like(dy)}


# exp: y = e^x; dx = dy * y
def _exp(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: dy * y}


# log: dx = dy / x
def _log(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy / x}


# log1p: dx = dy / (1 + x)
def _log1p(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy / (x + 1)}


# sqrt: y = sqrt(x); dx = dy / (2 y)
def _sqrt(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: sqrt_grad(dy, y)}


# rsqrt: y = x^-1/2; dx = -dy y^3 / 2
def _rsqrt(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: rsqrt_grad(dy, y)}


# square: dx = 2 x dy
def _square(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy * (x * 2)}


# reciprocal: y = 1/x; dx = -dy y^2
def _reciprocal(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: o.neg(dy * (y * y))}


# sin: dx = dy cos x
def _sin(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: sin_grad(dy, x)}


# cos: dx = -dy sin x
def _cos(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: cos_grad(dy, x)}


# tan: y = tan x; dx = dy (1 + y^2)
def _tan(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: dy * (y * y + 1)}


# tanh: y = tanh x; dx = dy (1 - y^2)
def _tanh(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: tanh_grad(dy, y)}


# sigmoid: y = 1/(1+exp(-x)); dx = dy y (1 - y)
def _sigmoid(dy, saved, attrs):
    (y,) = saved
    return {"x": lambda: sigmoid_grad(dy, y)}


# relu: dx = dy * not(x <= 0) (NaN passes dy, as PyTorch)
def _relu(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: relu_grad(dy, x)}


# leaky_relu: dx = dy if x > 0 else alpha dy
def _leaky_relu(dy, saved, attrs):
    """leaky_relu: dx = dy where x > 0, alpha dy elsewhere"""
    (x,) = saved
    return {"x": lambda: o.where(x > 0, dy, dy * attrs["alpha"])}


# elu: y = x if x > 0 else alpha (e^x - 1); dx = dy if y > 0 else dy (y + alpha)
# NOTE: the branch not taken reads y only where y <= 0: where y is +inf, dy * (inf + alpha)
# would be masked to 0 here but its derivative (forward mode, HVP) would be 0 * inf = NaN
def _elu(dy, saved, attrs):
    """elu: dx = dy where y > 0, dy (y + alpha) elsewhere"""
    (y,) = saved

    def dx():
        neg = o.where(y > 0, o.zeros_like(y), y)
        return o.where(y > 0, dy, dy * (neg + attrs.get("alpha", 1.0)))

    return {"x": dx}


# selu: y = scale elu(x, a); dx = scale dy if y > 0 else dy (y + scale a) (the elu NOTE)
def _selu(dy, saved, attrs):
    """selu: dx = scale dy where y > 0, dy (y + scale alpha) elsewhere"""
    (y,) = saved

    def dx():
        neg = o.where(y > 0, o.zeros_like(y), y)
        return o.where(y > 0, dy * _SELU_SCALE, dy * (neg + _SELU_SCALE * _SELU_ALPHA))

    return {"x": dx}


# softplus: y = log(1 + e^x); dx = dy sigmoid(x)
def _softplus(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy * o.sigmoid(x)}


# gelu: y = x Phi(x); dx = dy (Phi(x) + x phi(x))
def _gelu(dy, saved, attrs):
    """gelu: y = x Phi(x); dx = dy (Phi(x) + x phi(x))"""
    (x,) = saved

    def dx():
        cdf = (o.erf(x * (1 / math.sqrt(2))) + 1) * 0.5
        pdf = o.exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi))
        return dy * (cdf + x * pdf)

    return {"x": dx}


# erf: dx = dy 2/sqrt(pi) exp(-x^2)
def _erf(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy * (o.exp(o.neg(x * x)) * (2 / math.sqrt(math.pi)))}


# clip: dx = dy where min <= x <= max
def _clip(dy, saved, attrs):
    """clip: dx = dy where min <= x <= max, 0 elsewhere"""
    (x,) = saved
    return {
        "x": lambda: dy * _mask(x >= attrs["min"], x) * _mask(x <= attrs["max"], x),
    }


# cast: dx = cast(dy, source dtype), for float sources
def _cast(dy, saved, attrs):
    """cast: dx = dy cast back to the source dtype (float sources only)"""
    if attrs["src"].kind != "f":
        return {}
    return {"x": lambda: o.cast(dy, attrs["src"])}


def _identity(dy, saved, attrs):
    return {"x": lambda: dy}


def _stop_gradient(dy, saved, attrs):
    return {}


ROWS = family(
    Primitive(K.NEG, kernel=unary(np.negative), vjp=_neg, formula={"x": "-1"}),
    Primitive(
        K.ABS,
        kernel=unary(np.abs),
        vjp=_abs,
        inputs_to_save=("x",),
        formula={"x": r"\operatorname{sign}({x})"},
    ),
    Primitive(K.SIGN, kernel=unary(np.sign), vjp=_sign, formula={"x": "0"}),
    Primitive(K.EXP, kernel=unary(np.exp), vjp=_exp, outputs_to_save=(0,), formula={"x": "{y}"}),
    Primitive(
        K.LOG,
        kernel=unary(np.log),
        vjp=_log,
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{{x}}"},
    ),
    Primitive(
        K.LOG1P,
        kernel=unary(np.log1p),
        vjp=_log1p,
        inputs_to_save=("x",),
        formula={"x": r"\frac{1}{1 + {x}}"},
    ),
    Primitive(
        K.SQRT,
        kernel=unary(np.sqrt),
        vjp=_sqrt,
        outputs_to_save=(0,),
        formula={"x": r"\frac{1}{2 {y}}"},
    ),
    Primitive(
        K.RSQRT,
        kernel=same(lambda x: 1 / np.sqrt(x)),
        vjp=_rsqrt,
        outputs_to_save=(0,),
        formula={"x": r"-\frac{{y}^3}{2}"},
    ),
    Primitive(
        K.SQUARE,
        kernel=unary(np.square),
        vjp=_square,
        inputs_to_save=("x",),
        formula={"x": "2 {x}"},
    ),
    Primitive(
        K.RECIPROCAL,
        kernel=same(lambda x: 1 / x),
        vjp=_reciprocal,
        outputs_to_save=(0,),
        formula={"x": "-{y}^2"},
    ),
    Primitive(
        K.SIN, kernel=unary(np.sin), vjp=_sin, inputs_to_save=("x",), formula={"x": r"\cos {x}"}
    ),
    Primitive(
        K.COS, kernel=unary(np.cos), vjp=_cos, inputs_to_save=("x",), formula={"x": r"-\sin {x}"}
    ),
    Primitive(
        K.TAN, kernel=unary(np.tan), vjp=_tan, outputs_to_save=(0,), formula={"x": "1 + {y}^2"}
    ),
    Primitive(
        K.TANH, kernel=unary(np.tanh), vjp=_tanh, outputs_to_save=(0,), formula={"x": "1 - {y}^2"}
    ),
    Primitive(
        K.SIGMOID,
        kernel=npk.sigmoid_kernel,
        vjp=_sigmoid,
        outputs_to_save=(0,),
        formula={"x": "{y} (1 - {y})"},
    ),
    Primitive(
        K.RELU, kernel=npk.relu, vjp=_relu, inputs_to_save=("x",), formula={"x": "[{x} > 0]"}
    ),
    Primitive(
        K.LEAKY_RELU,
        kernel=npk.leaky_relu,
        numba="elementwise.leaky_relu",
        vjp=_leaky_relu,
        inputs_to_save=("x",),
    ),
    Primitive(K.ELU, kernel=npk.elu, vjp=_elu, outputs_to_save=(0,)),
    Primitive(K.SELU, kernel=npk.selu, vjp=_selu, outputs_to_save=(0,)),
    Primitive(
        K.SOFTPLUS,
        kernel=npk.softplus,
        vjp=_softplus,
        inputs_to_save=("x",),
        formula={"x": r"\sigma({x})"},
    ),
    Primitive(K.GELU, kernel=npk.gelu, vjp=_gelu, inputs_to_save=("x",)),
    Primitive(
        K.ERF,
        kernel=npk.erf,
        vjp=_erf,
        inputs_to_save=("x",),
        formula={"x": r"\frac{2}{\sqrt{\pi}} e^{-{x}^2}"},
    ),
    Primitive(K.CLIP, kernel=npk.clip, vjp=_clip, inputs_to_save=("x",)),
    Primitive(K.CAST, kernel=npk.cast, vjp=_cast),
    Primitive(K.IDENTITY, kernel=lambda i, a: i["x"], vjp=_identity, formula={"x": "1"}),
    Primitive(K.STOP_GRADIENT, kernel=lambda i, a: i["x"], vjp=_stop_gradient, formula={"x": "0"}),
    batch=B.elementwise,
)
