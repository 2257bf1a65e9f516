"""Contractions with numpy's names and semantics: ``einsum`` (the kernel) and composites of
it: ``tensordot``, ``dot``, ``inner``, ``outer``, ``kron``, ``cross``, ``trace``, ``diag``,
``diagonal``, ``tril``, ``triu``.

Example:
    >>> import numpy as np, tapeviz as tv
    >>> a = tv.tensor(np.arange(6.0).reshape(2, 3))
    >>> tv.einsum("ij->j", a).numpy()
    array([3., 5., 7.])
"""

from __future__ import annotations

import string

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.tensor import Tensor
from .arguments import as_tensor, norm_axis
from .elementwise import cast, mul, where
from .matrix import matmul
from .order import moveaxis
from .reduce import sum as _sum
from .shape import getitem, pad, reshape, stack


def _explicit(subscripts: str, ndims: list[int]) -> str:
    """``subscripts`` with ``...`` expanded and the output spelled out (numpy's rules)."""
    s = subscripts.replace(" ", "")
    ins, out = s.split("->") if "->" in s else (s, None)
    subs = ins.split(",")
    if len(subs) != len(ndims):
        raise ValueError(f"einsum: {len(subs)} operands in {subscripts!r}, got {len(ndims)}")
    free = iter(c for c in string.ascii_letters if c not in s)
    n_ell = max([n - len(t) + 3 for t, n in zip(subs, ndims) if "..." in t], default=0)
    ell = "".join(next(free) for _ in range(n_ell))
    for i, (t, n) in enumerate(zip(subs, ndims)):
        if "..." in t:
            k = n - len(t) + 3
            t = t.replace("...", ell[n_ell - k :] if k else "")
        if len(t) != n or not all(c in string.ascii_letters for c in t):
            raise ValueError(f"einsum: subscripts {subs[i]!r} do not fit operand {i} of rank {n}")
        subs[i] = t
    if out is None:
        joined = "".join(subs)
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return ",".join(subs) + "->" + out


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(sub, where: str) -> str:
    """An interleaved-form subscript list (ints 0..51 and ``...``) as letters."""
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < 52:
            out.append(_LETTERS[int(s)])
        else:
            raise ValueError(
                f"einsum: {where} subscripts must be integers in [0, 52) or Ellipsis, got {s!r}"
            )
    return "".join(out)


def _interleaved(args) -> tuple[str, list]:
    """numpy's interleaved form ``(op0, sub0, op1, sub1, ..., [out])`` -> (string, operands)."""
    pairs, out = list(args), None
    if len(pairs) % 2:
        out = pairs.pop()
    operands = pairs[0::2]
    subs = [_sublist(s, f"operand {k}'s") for k, s in enumerate(pairs[1::2])]
    spec = ",".join(subs) + ("" if out is None else "->" + _sublist(out, "the output"))
    return spec, operands


def einsum(subscripts, *operands, optimize=False) -> Tensor:
    """Einstein summation as ``numpy.einsum`` (string subscripts, ``...`` allowed).

    One ``Einsum`` node; its gradient is an einsum too (any order).

    Args:
        subscripts: e.g. ``"ij,jk->ik"``; implicit output (no ``->``) as numpy. numpy's
            interleaved form works too: ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.
        *operands: tensors or arrays, promoted to one dtype.
        optimize: accepted for numpy's signature; the kernel picks its own contraction order.

    Returns:
        A Tensor.

    Example:
        >>> import numpy as np, tapeviz as tv
        >>> a = tv.tensor(np.eye(2))
        >>> tv.einsum("ii", a).item()
        2.0
    """
    if not isinstance(subscripts, str):  # interleaved: einsum(a, [0, 1], b, [1, 2], [0, 2])
        subscripts, operands = _interleaved((subscripts,) + operands)
    ts = [as_tensor(t, "einsum") for t in operands]
    common = np.result_type(*[t.dtype for t in ts])
    ts = [t if t.dtype == common else cast(t, common) for t in ts]
    attrs = {"subscripts": _explicit(subscripts, [t.ndim for t in ts])}
    try:
        np.einsum(attrs["subscripts"], *[np.empty(t.shape, np.bool_) for t in ts])
    except ValueError as e:
        raise ValueError(f"einsum: {subscripts!r} on shapes {[t.shape for t in ts]}: {e}") from None
    return run_kernel(K.EINSUM, {f"x{k}": t for k, t in enumerate(ts)}, attrs)


def tensordot(a, b, axes=2) -> Tensor:
    """Sum products over ``axes`` (an int N: last N of ``a`` with first N of ``b``)."""
    a, b = as_tensor(a, "tensordot"), as_tensor(b, "tensordot")
    if isinstance(axes, (int, np.integer)):
        ax_a, ax_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        ax_a, ax_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    ax_a = [x % max(a.ndim, 1) for x in ax_a]
    ax_b = [x % max(b.ndim, 1) for x in ax_b]
    if len(ax_a) != len(ax_b):
        raise ValueError(f"tensordot: axes {axes!r} pair {len(ax_a)} with {len(ax_b)} axes")
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(ax_a, ax_b):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in ax_a] + [
        c for j, c in enumerate(sb) if j not in ax_b
    ]
    return einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(out), a, b)


def dot(a, b) -> Tensor:
    """``numpy.dot``: a product with 0-d operands, matmul up to 2-D, else a sum over the last
    axis of ``a`` and the second-to-last of ``b``."""
    a, b = as_tensor(a, "dot"), as_tensor(b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if b.ndim == 1 or (a.ndim <= 2 and b.ndim <= 2):
        return matmul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))


def inner(a, b) -> Tensor:
    """Sum over the last axes of ``a`` and ``b`` (a product when one is 0-d)."""
    a, b = as_tensor(a, "inner"), as_tensor(b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a, b) -> Tensor:
    """``ravel(a)[:, None] * ravel(b)[None, :]``."""
    a, b = as_tensor(a, "outer"), as_tensor(b, "outer")
    return mul(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def kron(a, b) -> Tensor:
    """Kronecker product, as ``numpy.kron`` (ranks padded with leading 1s)."""
    a, b = as_tensor(a, "kron"), as_tensor(b, "kron")
    nd = max(a.ndim, b.ndim)
    sa, sb = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    ea = reshape(a, tuple(v for n in sa for v in (n, 1)))
    eb = reshape(b, tuple(v for n in sb for v in (1, n)))
    return reshape(mul(ea, eb), tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None) -> Tensor:
    """Cross product of 3-vectors along the given axes (numpy's broadcasting)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(as_tensor(a, "cross"), axisa, -1), moveaxis(as_tensor(b, "cross"), axisb, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(f"cross: expected vectors of length 3, got {a.shape} and {b.shape}")
    x = [getitem(a, (Ellipsis, i)) for i in range(3)]
    y = [getitem(b, (Ellipsis, i)) for i in range(3)]
    c = stack([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]], -1)
    return moveaxis(c, -1, axisc)


def diagonal(a, offset=0, axis1=0, axis2=1) -> Tensor:
    """The ``offset`` diagonal of the planes ``(axis1, axis2)``, as a new last axis."""
    a = as_tensor(a, "diagonal")
    i, j = norm_axis(axis1, a.ndim, "diagonal")[0], norm_axis(axis2, a.ndim, "diagonal")[0]
    if i == j:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    m = moveaxis(a, (i, j), (-2, -1))
    rows, cols = m.shape[-2:]
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    k = max(0, min(rows - r0, cols - c0))
    m = getitem(m, (Ellipsis, slice(r0, r0 + k), slice(c0, c0 + k)))
    return einsum("...ii->...i", m)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None) -> Tensor:
    """Sum of the ``offset`` diagonal."""
    d = _sum(diagonal(a, offset, axis1, axis2), -1)
    return d if dtype is None else cast(d, dtype)


def diag(v, k=0) -> Tensor:
    """A 1-D ``v``: the square matrix with ``v`` on diagonal ``k``; a 2-D ``v``: its diagonal."""
    v = as_tensor(v, "diag")
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1-D or 2-D, got shape {v.shape}")
    n = v.shape[0]
    # a select, not v * eye: 0 off the diagonal even where v is inf or NaN (numpy's diag)
    m = where(Tensor(np.eye(n, dtype=bool)), reshape(v, (n, 1)), Tensor(np.zeros((), v.dtype)))
    p = abs(int(k))
    return pad(m, ((0, p), (p, 0)) if k >= 0 else ((p, 0), (0, p)))


def _tri(m, k, keep, op):
    m = as_tensor(m, op)
    if m.ndim < 2:
        raise ValueError(f"{op}: expected a tensor of rank >= 2, got shape {m.shape}")
    rows, cols = m.shape[-2:]
    mask = keep(np.arange(cols)[None, :] - np.arange(rows)[:, None], k)
    return where(Tensor(mask), m, Tensor(np.zeros((), m.dtype)))


def tril(m, k=0) -> Tensor:
    """Lower triangle (entries above diagonal ``k`` set to 0; no gradient reaches them)."""
    return _tri(m, k, lambda d, k: d <= k, "tril")


def triu(m, k=0) -> Tensor:
    """Upper triangle (entries below diagonal ``k`` set to 0; no gradient reaches them)."""
    return _tri(m, k, lambda d, k: d >= k, "triu")
