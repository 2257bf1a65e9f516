"""Shape and order ops with numpy's names and semantics, as composites of reshape, transpose,
indexing and split (no new kernel), plus the scans ``cumsum`` and ``cumprod`` (kernels).

Conventions: ``sort``/``partition`` move each value with its gradient (ties: numpy's stable
order decides which equal value goes where; each still gets its own dy).
"""

from __future__ import annotations

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.tensor import Tensor
from .arguments import as_tensor, cast, norm_axis, unchanged
from .shape import concat, getitem, reshape, split, transpose


def _axis(axis, ndim, op) -> int:
    return norm_axis(axis, ndim, op)[0]


def ravel(a, order="C") -> Tensor:
    """The values as a 1-D tensor (C order only)."""
    if order not in ("C", "K", "A"):
        raise ValueError(f"ravel: only order='C' is supported, got {order!r}")
    return reshape(a, (-1,))


def swapaxes(a, axis1, axis2) -> Tensor:
    """Interchange two axes, as ``numpy.swapaxes`` (one Transpose)."""
    a = as_tensor(a, "swapaxes")
    perm = list(range(a.ndim))
    i, j = _axis(axis1, a.ndim, "swapaxes"), _axis(axis2, a.ndim, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination) -> Tensor:
    """Move axes to new positions, the others keep their order (``numpy.moveaxis``)."""
    a = as_tensor(a, "moveaxis")
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    src = [_axis(s, a.ndim, "moveaxis") for s in src]
    dst = [_axis(d, a.ndim, "moveaxis") for d in dst]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same length")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def flip(m, axis=None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    m = as_tensor(m, "flip")
    axes = norm_axis(axis, m.ndim, "flip")
    axes = range(m.ndim) if axes is None else axes
    key = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(m.ndim))
    return getitem(m, key) if key else m


def fliplr(m) -> Tensor:
    """Reverse axis 1 (left/right)."""
    return flip(m, 1)


def flipud(m) -> Tensor:
    """Reverse axis 0 (up/down)."""
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``axes`` (numpy's definition)."""
    m = as_tensor(m, "rot90")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    if k == 1:
        return swapaxes(flip(m, axes[1]), axes[0], axes[1])
    return flip(swapaxes(m, axes[0], axes[1]), axes[1])


def roll(a, shift, axis=None) -> Tensor:
    """Roll elements along ``axis`` (flattened when None), as ``numpy.roll``."""
    a = as_tensor(a, "roll")
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = [shift] * len(axis) if isinstance(axis, tuple) and isinstance(shift, int) else shift
    if isinstance(axis, tuple):
        for s, ax in zip(shifts, axis):
            a = roll(a, s, ax)
        return a
    ax = _axis(axis, a.ndim, "roll")
    n = a.shape[ax]
    if n == 0 or int(shift) % n == 0:
        return unchanged(a)
    s = int(shift) % n
    pre = (slice(None),) * ax
    return concat(
        [getitem(a, pre + (slice(n - s, None),)), getitem(a, pre + (slice(0, n - s),))], ax
    )


def repeat(a, repeats, axis=None) -> Tensor:
    """Repeat each element ``repeats`` times (an index gather; the gradient sums back)."""
    a = as_tensor(a, "repeat")
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axis(axis, a.ndim, "repeat")
    idx = np.repeat(np.arange(a.shape[ax]), repeats)
    return getitem(a, (slice(None),) * ax + (idx,))


_ATLEAST = {  # (nd, ndim) -> new shape from the old one, numpy's rules
    (1, 0): lambda s: (1,),
    (2, 0): lambda s: (1, 1),
    (2, 1): lambda s: (1,) + s,
    (3, 0): lambda s: (1, 1, 1),
    (3, 1): lambda s: (1,) + s + (1,),
    (3, 2): lambda s: s + (1,),
}


def _atleast(nd, arys, op):
    out = []
    for x in arys:
        x = as_tensor(x, op)
        out.append(reshape(x, _ATLEAST[nd, x.ndim](x.shape)) if x.ndim < nd else unchanged(x))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """Each input viewed with at least 1 dimension (a tuple for several)."""
    return _atleast(1, arys, "atleast_1d")


def atleast_2d(*arys):
    """Each input viewed with at least 2 dimensions: (n,) becomes (1, n)."""
    return _atleast(2, arys, "atleast_2d")


def atleast_3d(*arys):
    """Each input with at least 3 dimensions: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast(3, arys, "atleast_3d")


def array_split(ary, indices_or_sections, axis=0) -> list[Tensor]:
    """Split into parts along ``axis``: a count (sizes may differ by one) or split indices."""
    ary = as_tensor(ary, "array_split")
    ax = _axis(axis, ary.ndim, "array_split")
    n = ary.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("array_split: number of sections must be larger than 0")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        bounds = [min(max(int(i), 0), n) for i in indices_or_sections]
        edges = [0] + bounds + [n]
        return [getitem(ary, (slice(None),) * ax + (slice(a, max(a, b)),))
                for a, b in zip(edges[:-1], edges[1:])]  # fmt: skip
    return split(ary, sizes, ax)


def split_equal(ary, sections, axis, op):
    ary = as_tensor(ary, op)
    if isinstance(sections, (int, np.integer)) and ary.shape[axis] % sections:
        raise ValueError(f"{op}: array split does not result in an equal division")
    return array_split(ary, sections, axis)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D) into equal parts or at indices."""
    ary = as_tensor(ary, "hsplit")
    return split_equal(ary, indices_or_sections, 1 if ary.ndim > 1 else 0, "hsplit")


def vsplit(ary, indices_or_sections):
    """Split along axis 0 into equal parts or at indices."""
    return split_equal(ary, indices_or_sections, 0, "vsplit")


def dsplit(ary, indices_or_sections):
    """Split along axis 2 into equal parts or at indices."""
    return split_equal(ary, indices_or_sections, 2, "dsplit")


def take_along(a, idx, ax):
    """``a`` gathered by ``np.take_along_axis`` indices ``idx`` (one advanced index)."""
    grids = np.indices(idx.shape, sparse=True)
    key = tuple(idx if i == ax else g for i, g in enumerate(grids))
    return getitem(a, key)


def sort(a, axis=-1, kind=None, order=None, *, stable=None) -> Tensor:
    """Sorted copy along ``axis`` (None: flattened); the gradient follows each value.

    Ties keep numpy's stable order; each tied value still gets its own gradient.

    Example:
        >>> import tapeviz as tv
        >>> tv.grad(lambda x: tv.sort(x)[0])(tv.tensor([3.0, 1.0, 2.0])).numpy()
        array([0., 1., 0.], dtype=float32)
    """
    a = as_tensor(a, "sort")
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axis(axis, a.ndim, "sort")
    return take_along(a, np.argsort(a._array, axis=ax, kind="stable"), ax)


def partition(a, kth, axis=-1, kind="introselect", order=None) -> Tensor:
    """``numpy.partition``: the ``kth`` element in its sorted place; gradient follows values."""
    a = as_tensor(a, "partition")
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axis(axis, a.ndim, "partition")
    return take_along(a, np.argpartition(a._array, kth, axis=ax), ax)


def diff(a, n=1, axis=-1, prepend=None, append=None) -> Tensor:
    """n-th discrete difference along ``axis`` (numpy's ``prepend``/``append`` too)."""
    a = as_tensor(a, "diff")
    ax = _axis(axis, a.ndim, "diff")
    parts = [a]
    for extra, where in ((prepend, 0), (append, 1)):
        if extra is not None:
            e = as_tensor(extra, "diff")
            if e.ndim == 0:
                shape = list(a.shape)
                shape[ax] = 1
                e = reshape(e, ()) + Tensor(np.zeros(shape, e.dtype))
            parts.insert(0 if where == 0 else len(parts), e)
    a = concat(parts, ax) if len(parts) > 1 else a
    pre = (slice(None),) * ax
    for _ in range(int(n)):
        a = getitem(a, pre + (slice(1, None),)) - getitem(a, pre + (slice(None, -1),))
    return a


def _scan(kernel, op):
    def fn(a, axis=None, dtype=None) -> Tensor:
        a = as_tensor(a, op)
        if axis is None:
            a, axis = ravel(a), 0
        if dtype is not None:
            a = cast(a, dtype)
        return run_kernel(kernel, {"x": a}, {"axis": _axis(axis, a.ndim, op)})

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``numpy.{op}`` along ``axis`` (flattened when None; kernel ``{kernel}``)."
    return fn


cumsum = _scan(K.CUMSUM, "cumsum")
cumprod = _scan(K.CUMPROD, "cumprod")
