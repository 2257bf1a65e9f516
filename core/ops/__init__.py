"""Ops: functions from tensors to tensors with numpy names. Primitives dispatch through
``run_kernel``; composites (sub-forms, mean, logsumexp, stack, …) are plain functions of ops.
"""

from __future__ import annotations
import __future__ as _future

from types import ModuleType as _ModuleType

from . import linalg  # the namespace tv.linalg
from .arguments import identity
from .contract import (
    cross,
    diag,
    diagonal,
    dot,
    einsum,
    inner,
    kron,
    outer,
    tensordot,
    trace,
    tril,
    triu,
)
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
from .elementwise_math import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceil,
    cosh,
    deg2rad,
    degrees,
    divmod,
    exp2,
    expm1,
    fabs,
    floor,
    floor_divide,
    fmax,
    fmin,
    hypot,
    invert,
    left_shift,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    mod,
    nan_to_num,
    rad2deg,
    radians,
    remainder,
    right_shift,
    round,
    sinc,
    sinh,
)
from .indexing import (
    all,
    any,
    argpartition,
    argsort,
    compress,
    nonzero,
    searchsorted,
    take,
    take_along_axis,
)
from .matrix import matmul
from .nn import avg_pool2d, conv2d, dropout, max_pool2d
from .order import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    cumprod,
    cumsum,
    diff,
    dsplit,
    flip,
    fliplr,
    flipud,
    hsplit,
    moveaxis,
    partition,
    ravel,
    repeat,
    roll,
    rot90,
    sort,
    swapaxes,
    vsplit,
)
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
    sum_to,
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
    tile,
    transpose,
)

# the ops, and ``linalg`` (``tv.linalg.inv``, numpy's namespace); not the submodules that
# define them, whose names would shadow ops a user expects (``tv.norm``, ``tv.shape`` were
# modules, so ``tv.shape(x)`` said "'module' object is not callable")
__all__ = [
    n
    for n, v in list(globals().items())
    if not n.startswith("_")
    and (n == "linalg" or not isinstance(v, _ModuleType))
    and not isinstance(v, _future._Feature)  # ``from __future__ import annotations`` binds one
]
