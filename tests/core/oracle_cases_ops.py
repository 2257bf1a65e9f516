"""Oracle cases for the elementwise kernels (unary, binary, select) and their fused gradient
kernels, at random points over scalar, vector, matrix, size-1, size-0 and broadcast shapes,
and at edge points (zeros, ±inf, NaN, ties). See ``oracle.py`` for what is compared.

The fused gradient kernels (``TanhGrad``, ``SigmoidGrad``, ...) run in every gradient of their
op and are differentiated by every Hessian-vector product of it. For piecewise-linear ops the
cases square the op's output, so the HVP differentiates the gradient kernel w.r.t. ``dy`` too.
"""

from __future__ import annotations

import math
import zlib

import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
from autograd.extend import defvjp, primitive
from oracle import OracleCase

import tapeviz.core as tv
from tapeviz.core.registry import kernel_names as K

SHAPES = [(), (3,), (2, 3), (1, 3), (0, 3)]
PAIRS = [((), ()), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((0, 3), (3,))]
NAN, INF = float("nan"), float("inf")
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805

CASES: list[OracleCase] = []


def rand(shape, key: str, domain: str = "any") -> np.ndarray:
    """Random float64 values away from 0 (positive, or in (-0.84, 0.84) for "unit")."""
    rng = np.random.default_rng(zlib.crc32((key + str(shape) + domain).encode()))
    mag = rng.uniform(0.3, 1.4, shape)
    if domain == "positive":
        return np.asarray(mag + 0.2)
    sign = np.where(rng.uniform(-1, 1, shape) < 0, -1.0, 1.0)
    return np.asarray(sign * mag * (0.6 if domain == "unit" else 1.0))


def case(id, kernels, tv_fn, ag_fn, *args, **kw):
    CASES.append(OracleCase(id, tuple(kernels), tv_fn, ag_fn, tuple(args), **kw))


def unary(name, kernels, tv_fn, ag_fn, domain="any", edge=None, **kw):
    """Random cases over SHAPES, plus one at ``edge`` values (forward and gradient)."""
    for shape in SHAPES:
        case(f"{name}{list(shape)}", kernels, tv_fn, ag_fn, rand(shape, name, domain), **kw)
    if edge is not None:
        case(f"{name}[edge]", kernels, tv_fn, ag_fn, np.array(edge), hvp=False)


def binary(name, kernels, tv_fn, ag_fn, domain=("any", "any"), pairs=PAIRS, **kw):
    for sa, sb in pairs:
        a, b = rand(sa, name + "a", domain[0]), rand(sb, name + "b", domain[1])
        case(f"{name}{list(sa)}{list(sb)}", kernels, tv_fn, ag_fn, a, b, argnums=(0, 1), **kw)


EDGE = [0.0, -0.0, INF, -INF, NAN, 1.5, -1.5]
POS_EDGE = [0.0, INF, NAN, 0.5, 2.0]


def _sigmoid(x):
    return asp.expit(x)


def _elu(x, alpha=1.0):
    return anp.where(x > 0, x, alpha * (anp.exp(anp.where(x > 0, 0.0, x)) - 1))


# --- unary, smooth: value, gradient and HVP (the HVP runs the fused *Grad kernel's gradient)
unary("neg", [K.NEG], tv.neg, anp.negative, edge=EDGE)
unary("exp", [K.EXP], tv.exp, anp.exp, edge=EDGE)
unary("log", [K.LOG], tv.log, anp.log, "positive", edge=POS_EDGE)
unary("log1p", [K.LOG1P], tv.log1p, anp.log1p, "unit", edge=[0.0, INF, NAN, -1.0, 0.5])
unary("sqrt", [K.SQRT, K.SQRT_GRAD], tv.sqrt, anp.sqrt, "positive", edge=POS_EDGE)
unary("rsqrt", [K.RSQRT, K.RSQRT_GRAD], tv.rsqrt, lambda x: 1 / anp.sqrt(x), "positive",
      edge=[INF, NAN, 0.5, 2.0])  # fmt: skip
unary("square", [K.SQUARE], tv.square, anp.square, edge=EDGE)
unary("reciprocal", [K.RECIPROCAL], tv.reciprocal, anp.reciprocal, edge=[INF, -INF, NAN, 2.0])
unary("sin", [K.SIN, K.SIN_GRAD], tv.sin, anp.sin, edge=[0.0, NAN, 1.5])
unary("cos", [K.COS, K.COS_GRAD], tv.cos, anp.cos, edge=[0.0, NAN, 1.5])
unary("tan", [K.TAN], tv.tan, anp.tan, "unit", edge=[0.0, NAN, 0.5])
unary("tanh", [K.TANH, K.TANH_GRAD], tv.tanh, anp.tanh, edge=EDGE)
unary("sigmoid", [K.SIGMOID, K.SIGMOID_GRAD], tv.sigmoid, _sigmoid, edge=EDGE)
unary("softplus", [K.SOFTPLUS], tv.softplus, lambda x: anp.logaddexp(0.0, x),
      edge=[0.0, -INF, NAN, 30.0, -30.0])  # fmt: skip
unary("gelu", [K.GELU], tv.gelu, lambda x: 0.5 * x * (1 + asp.erf(x / math.sqrt(2))),
      edge=[0.0, NAN, 6.0, -6.0])  # fmt: skip
unary("erf", [K.ERF], tv.erf, asp.erf, edge=[0.0, INF, -INF, NAN])
unary("elu", [K.ELU], lambda x: tv.elu(x, 0.7), lambda x: _elu(x, 0.7), edge=[0.0, -INF, 1.5])
unary("selu", [K.SELU], tv.selu, lambda x: SELU_SCALE * _elu(x, SELU_ALPHA),
      edge=[0.0, -INF, 1.5])  # fmt: skip
unary("identity", [K.IDENTITY], tv.identity, lambda x: x, edge=EDGE)


def _cast_round_trip(x):
    other = np.float32 if x.dtype == np.float64 else np.float64
    return tv.cast(tv.cast(x, other), x.dtype)


@primitive
def _ag_stop(x):
    return x


defvjp(_ag_stop, lambda ans, x: lambda g: anp.zeros_like(g))


case("cast[2,3]", [K.CAST], _cast_round_trip, lambda x: x * 1.0,
    np.array([[0.5, -1.25, 2.0], [0.125, 3.0, -0.75]]))  # fmt: skip
case("stop_gradient[3]", [K.STOP_GRADIENT], lambda x: tv.stop_gradient(x) * x,
    lambda x: _ag_stop(x) * x, rand((3,), "stop"))  # fmt: skip

# --- unary, piecewise: squared, so the HVP differentiates the gradient in dy as well
# (autograd's abs divides x by |x|: NaN at ±inf, where tapeviz's sign(x) is right)
unary("abs", [K.ABS], lambda x: tv.abs(x) * tv.abs(x), lambda x: anp.abs(x) * anp.abs(x),
      edge=[0.0, -0.0, NAN, 1.5, -1.5])  # fmt: skip
unary("relu", [K.RELU, K.RELU_GRAD], lambda x: tv.relu(x) * tv.relu(x),
      lambda x: anp.where(x > 0, x, 0.0) ** 2, edge=[0.0, -0.0, INF, -INF, 1.5, -1.5])  # fmt: skip
unary("leaky_relu", [K.LEAKY_RELU], lambda x: tv.leaky_relu(x, 0.1) * tv.exp(x),
      lambda x: anp.where(x > 0, x, 0.1 * x) * anp.exp(x), edge=[0.0, -0.0, 1.5, -1.5])  # fmt: skip
unary("sign", [K.SIGN], lambda x: tv.sign(x) * x, lambda x: anp.sign(x) * x, edge=EDGE)
unary("clip", [K.CLIP], lambda x: tv.clip(x, -0.8, 0.9) ** 2,
      lambda x: anp.clip(x, -0.8, 0.9) ** 2, edge=[INF, -INF, NAN, 0.0])  # fmt: skip
case("clip[boundary]", [K.CLIP], lambda x: tv.clip(x, -0.5, 0.5), lambda x: anp.clip(x, -0.5, 0.5),
    np.array([-0.5, 0.5, 0.2, 0.7]), hvp=False,
    note="the gradient passes at the clip bounds (PyTorch's clamp; autograd gives 0 there)",
    expect=lambda w, x: [w * ((x >= -0.5) & (x <= 0.5))])  # fmt: skip

# --- binary, with broadcasting (the engine reduces broadcast gradients in one place)
binary("add", [K.ADD], tv.add, anp.add)
binary("sub", [K.SUB], tv.sub, anp.subtract)
binary("mul", [K.MUL], tv.mul, anp.multiply)
binary("div", [K.DIV], tv.div, anp.true_divide, ("any", "positive"))
binary("pow", [K.POW], tv.pow, anp.power, ("positive", "any"))
binary("maximum", [K.MAXIMUM], lambda a, b: tv.maximum(a, b) ** 2,
       lambda a, b: anp.maximum(a, b) ** 2)  # fmt: skip
binary("minimum", [K.MINIMUM], lambda a, b: tv.minimum(a, b) ** 2,
       lambda a, b: anp.minimum(a, b) ** 2)  # fmt: skip


def _ag_where(c, a, b):
    """autograd's where does not reduce broadcast gradients: broadcast by adding zeros."""
    zero = anp.zeros(np.broadcast_shapes(c.shape, anp.shape(a), anp.shape(b)))
    return anp.where(c, a + zero, b + zero)


_COND = np.array([[True, False, True], [False, False, True]])
binary("where", [K.SELECT], lambda a, b: tv.where(_COND, a, b) ** 2,
       lambda a, b: _ag_where(_COND, a, b) ** 2, pairs=PAIRS[1:5])  # fmt: skip

# ties: the gradient is shared evenly (PyTorch and autograd agree)
TIE = (np.array([1.0, -2.0, 0.5, 0.0]), np.array([1.0, -2.0, 0.7, 0.0]))
for _name, _tv, _ag in (("maximum", tv.maximum, anp.maximum), ("minimum", tv.minimum, anp.minimum)):
    case(f"{_name}[tie]", [K.MAXIMUM if _name == "maximum" else K.MINIMUM],
        lambda a, b, f=_tv: f(a, b) * f(a, b), lambda a, b, f=_ag: f(a, b) * f(a, b),
        *TIE, argnums=(0, 1))  # fmt: skip


def _nan_passes(w, a, b):
    """PyTorch's rule: each input gets dy unless it lost the comparison (NaN loses none)."""
    return [w * np.where(a == b, 0.5, 1.0), w * np.where(a == b, 0.5, 1.0)]


# maximum(nan, 1): the NaN stays visible in backward: dy reaches both inputs (PyTorch)
for _name, _tv, _ag in (("maximum", tv.maximum, anp.maximum), ("minimum", tv.minimum, anp.minimum)):
    case(f"{_name}[nan]", [K.MAXIMUM if _name == "maximum" else K.MINIMUM], _tv, _ag,
        np.array([NAN, 1.0, NAN]), np.array([1.0, NAN, NAN]), argnums=(0, 1), hvp=False,
        float32=True, expect=_nan_passes,
        note="NaN: dy goes to both inputs as in PyTorch (autograd sends 0 to both, so a NaN "
             "input's producer would never see the gradient)")  # fmt: skip

# relu(nan) is NaN and its gradient passes dy, as maximum(nan, 0)'s (PyTorch's threshold rule)
case("relu[nan]", [K.RELU, K.RELU_GRAD], tv.relu, lambda x: anp.maximum(x, 0.0),
    np.array([NAN, 0.0, -0.0, 1.5, -1.5, INF, -INF]), hvp=False,
    expect=lambda w, x: [w * ~(x <= 0)],
    note="NaN: dy passes (PyTorch's relu; autograd's maximum sends 0, so the NaN's producer "
         "would never see the gradient); 0 at 0 as both")  # fmt: skip

# pow at the boundaries: d/dx x**0 = 0 at 0 (PyTorch, autograd); x**1, x**2, x**3 at 0
for _p in (0.0, 1.0, 2.0, 3.0, 0.5):
    case(f"pow[x**{_p} at 0]", [K.POW], lambda x, p=_p: tv.pow(x, p), lambda x, p=_p: x**p,
        np.array([0.0, 1.5, 0.0]), hvp=_p != 0.5)  # fmt: skip
case("pow[negative base, integer exponent]", [K.POW], lambda a, b: a**b, lambda a, b: a**b,
    np.array([-1.5, -2.0, 0.5]), np.array([2.0, 3.0, 2.0]), argnums=(0, 1), hvp=False)  # fmt: skip
case("pow[zero base, exponent grad]", [K.POW], lambda a, b: a**b, lambda a, b: a**b,
    np.array([0.0, 0.0]), np.array([2.0, 0.0]), argnums=(0, 1))  # fmt: skip
# at b = 0, a != 0 autograd's second derivative d2/da db is wrong (it masks b == 0 for every
# a; the right value is 1/a): the gradient is compared here, the HVP in test_conventions.py
case("pow[zero exponent, exponent grad]", [K.POW], lambda a, b: a**b, lambda a, b: a**b,
    np.array([2.0, 0.5]), np.array([0.0, 0.0]), argnums=(0, 1), hvp=False)  # fmt: skip

# binary edge points: 0 * inf, inf - inf, x / 0, 0 / 0, NaN (forward and gradient)
EDGE_A = np.array([0.0, INF, -INF, NAN, 1.5, 0.0, INF, -2.0])
EDGE_B = np.array([INF, INF, 1.0, 2.0, 0.0, 0.0, -INF, -0.0])
for _name, _tv, _ag in (("add", tv.add, anp.add), ("sub", tv.sub, anp.subtract),
                        ("mul", tv.mul, anp.multiply), ("div", tv.div, anp.true_divide),
                        ("maximum", tv.maximum, anp.maximum)):  # fmt: skip
    if _name == "maximum":  # NaN and ties: see maximum[nan]; here the finite, untied points
        _a, _b = np.array([0.0, INF, -INF, 1.5]), np.array([INF, 1.0, 1.0, 0.0])
    else:
        _a, _b = EDGE_A, EDGE_B
    case(f"{_name}[edge]", [getattr(K, _name.upper() if _name != "div" else "DIV")], _tv, _ag,
         _a, _b, argnums=(0, 1), hvp=False)  # fmt: skip
case("where[nan in the other branch]", [K.SELECT],
     lambda a, b: tv.where(np.array([True, False, True]), a, b),
     lambda a, b: anp.where(np.array([True, False, True]), a, b),
     np.array([1.0, 2.0, 3.0]), np.array([NAN, 0.5, INF]), argnums=(0, 1), hvp=False)  # fmt: skip
