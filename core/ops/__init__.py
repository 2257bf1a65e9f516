"""Ops: functions from tensors to tensors with numpy names. Primitives dispatch through
``run_kernel``; composites (sub-forms, mean, logsumexp, stack, …) are plain functions of ops.
"""

from __future__ import annotations

from .. import operators as _operators_module
from .creation import (
    arange,
    fill,
    linspace,
    ones,
    ones_like,
    random_normal,
    random_uniform,
    zeros,
    zeros_like,
)
from .elementwise import (
    abs,
    add,
    cast,
    clip,
    cos,
    div,
    elu,
    equal,
    erf,
    exp,
    gelu,
    greater,
    greater_equal,
    identity,
    leaky_relu,
    less,
    less_equal,
    log,
    log1p,
    maximum,
    minimum,
    mul,
    multiply,
    neg,
    negative,
    not_equal,
    pow,
    power,
    reciprocal,
    relu,
    rsqrt,
    selu,
    sigmoid,
    sign,
    sin,
    softplus,
    sqrt,
    square,
    stop_gradient,
    sub,
    subtract,
    tan,
    tanh,
    true_divide,
    where,
)
from .linalg import dot, matmul
from .nn import avg_pool2d, conv2d, dropout, max_pool2d
from .reduce import (
    argmax,
    argmin,
    log_softmax,
    logsumexp,
    max,
    mean,
    min,
    prod,
    softmax,
    std,
    sum,
    var,
)
from .shape import (
    broadcast_to,
    concat,
    expand_dims,
    flatten,
    gather,
    getitem,
    one_hot,
    pad,
    reshape,
    slice_grad,
    split,
    squeeze,
    stack,
    sum_to,
    tile,
    transpose,
)

__all__ = [n for n in dir() if not n.startswith("_")]

import sys as _sys  # noqa: E402

_operators_module._ops = _sys.modules[__name__]
