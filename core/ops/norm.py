"""``norm`` with ``numpy.linalg.norm``'s signature: vector norms (``ord`` None, 2, 1, inf,
-inf, 0, any p) and matrix norms (None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf), composites
of ops (``nuc``, 2 and -2 through ``svd``).

Non-differentiable points: a 2-norm (vector, Frobenius) or p-norm (p > 0) that is 0 has
gradient 0 there, as PyTorch (autograd: 0/0 = NaN), the convention ``std`` keeps at zero
spread; max/min norms at ties share the gradient evenly (``max``'s convention); ``ord=0``
counts, gradient 0.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensors.tensor import Tensor
from .arguments import as_tensor, norm_axis
from .decomp import svd
from .elementwise import abs, cast, not_equal, pow, sqrt
from .order import moveaxis
from .reduce import max, min, root_with_zero_subgradient, sum
from .shape import reshape


def _vector(x, p, ax, keepdims):
    if p is None or p == 2:
        return root_with_zero_subgradient(sum(x * x, ax, keepdims), sqrt)
    if p == math.inf:
        return max(abs(x), ax, keepdims)
    if p == -math.inf:
        return min(abs(x), ax, keepdims)
    if p == 0:
        return sum(cast(not_equal(x, 0), x.dtype), ax, keepdims)
    if p == 1:
        return sum(abs(x), ax, keepdims)
    if isinstance(p, str):
        raise ValueError(f"norm: invalid norm order {p!r} for vectors")
    total = sum(pow(abs(x), float(p)), ax, keepdims)
    if p > 0:
        return root_with_zero_subgradient(total, lambda t: pow(t, 1.0 / p))
    return pow(total, 1.0 / p)


def _matrix(x, p, ax, keepdims):
    r, c = ax
    if p is None or p == "fro":
        out = root_with_zero_subgradient(sum(x * x, ax, keepdims=True), sqrt)
    elif p in ("nuc", 2, -2):
        s = svd(moveaxis(x, (r, c), (-2, -1)), compute_uv=False)
        red = {"nuc": sum, 2: max, -2: min}[p](s, -1)
        out = reshape(red, tuple(1 if i in ax else n for i, n in enumerate(x.shape)))
    elif p in (1, -1, math.inf, -math.inf):
        inner, outer = (r, c) if p in (1, -1) else (c, r)
        red = max if p > 0 else min
        out = red(sum(abs(x), inner, keepdims=True), outer, keepdims=True)
    else:
        raise ValueError(f"norm: invalid norm order {p!r} for matrices")
    if keepdims:
        return out
    return reshape(out, tuple(n for i, n in enumerate(x.shape) if i not in ax))


def norm(x, ord=None, axis=None, keepdims=False) -> Tensor:  # noqa: A002 - numpy's name
    """Vector or matrix norm as ``numpy.linalg.norm``.

    Convention (PyTorch): where a 2-norm, Frobenius norm or p-norm (p > 0) is 0 its gradient
    is 0 (the derivative does not exist there; autograd's 0/0 gives NaN), as ``std``'s at
    zero spread. Max/min norms share the gradient evenly at ties.

    Example:
        >>> import tapeviz as tv
        >>> float(tv.linalg.norm(tv.tensor([3.0, 4.0])))
        5.0
    """
    x = as_tensor(x, "norm")
    if x.dtype.kind != "f":
        x = cast(x, np.float64)
    if axis is None:
        if ord is None:
            out = root_with_zero_subgradient(sum(x * x), sqrt)
            if keepdims:
                out = reshape(out, (1,) * x.ndim)
            return out
        if x.ndim not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} needs a 1-D or 2-D input or an axis")
        axis = tuple(range(x.ndim))
    axes = norm_axis(axis, x.ndim, "norm")
    given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return _vector(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix(x, ord, tuple(a % x.ndim for a in given), keepdims)
    raise ValueError(f"norm: axis must be an int or a pair, got {axis!r}")


def _floating(x, op):
    x = as_tensor(x, op)
    return x if x.dtype.kind == "f" else cast(x, np.float64)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2) -> Tensor:  # noqa: A002
    """``numpy.linalg.vector_norm`` (the array API's): the ``ord`` vector norm over ``axis``
    (None: every element; a tuple: those axes together, as one vector), any rank. Gradient
    conventions as ``norm``'s."""
    x = _floating(x, "vector_norm")
    axes = norm_axis(axis, x.ndim, "vector_norm")
    axes = tuple(range(x.ndim)) if axes is None else axes
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    rest = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    count = math.prod(x.shape[i] for i in axes)
    flat = reshape(moveaxis(x, axes, tuple(range(-len(axes), 0))), rest + (count,))
    out = _vector(flat, ord, (flat.ndim - 1,), False)
    return reshape(out, kept) if keepdims else out


def matrix_norm(x, /, *, keepdims=False, ord="fro") -> Tensor:  # noqa: A002
    """``numpy.linalg.matrix_norm`` (the array API's): the ``ord`` matrix norm of the last
    two axes ('fro', 'nuc', 1, -1, 2, -2, inf, -inf), batched over the others."""
    x = _floating(x, "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: expected ndim >= 2, got shape {x.shape}")
    return _matrix(x, ord, (x.ndim - 2, x.ndim - 1), keepdims)
