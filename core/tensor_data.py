"""Where user data becomes tensors without losing a gradient or a saved value.

* ``from_data``: a list or tuple holding tensors is stacked with ops (a tape records it);
  a user's numpy array is wrapped without a copy as ``_Foreign``.
* ``own``: a tape that saves a ``_Foreign`` tensor first gives it its own copy, so the user
  changing their array in place cannot change the gradient.
* ``mark_views``: a kernel output that is a view of a ``_Foreign`` input (``Reshape``,
  ``Transpose``, ``Identity``, ...) is ``_Foreign`` too: it shares the user's memory, so it is
  owned the same way when a tape saves it.
* ``check_not_recorded``: ``Tensor.__array__`` of a tensor an active tape records is an
  error, not a silent detach.
"""

from __future__ import annotations

import numpy as np

from .tensor import _CONVERTING, Tensor, _HoldsTensor, _to_array

__all__ = ["from_data", "own", "mark_views", "check_not_recorded"]

_DETACH_MESSAGE = (
    "tensor {label} is recorded by an active tape: turning it into a numpy array "
    "(np.asarray, np.array, a numpy function without a tapeviz dispatch) would silently cut "
    "its gradient. Use tapeviz ops instead: tv.stack([...]) or tv.tensor([...]) for a list "
    "of tensors, tv.exp/tv.sum/... for np.exp/np.sum/...; or take a constant on purpose with "
    "x.numpy(), x.item() or float(x) (explicit requests for the value are constants, inside a "
    "tape too) or tv.stop_gradient(x)"
)


def from_data(data, dtype=None, where="tensor") -> Tensor:
    """A Tensor from user data; a list or tuple holding tensors is stacked with ops, so a
    tape records it (``tv.tensor([x, 3 * x])``, ``tv.mean([x, x + 2])``)."""
    if type(data) is not list and type(data) is not tuple:
        arr = _to_array(data, dtype, where)
        return _Foreign(arr) if arr is data else Tensor(arr)
    _CONVERTING.on = True
    try:
        return Tensor(_to_array(data, dtype, where))
    except _HoldsTensor:
        pass
    finally:
        _CONVERTING.on = False
    return _stack_nested(data, dtype, where)


def _stack_nested(data, dtype, where) -> Tensor:
    """Stack the items of ``data`` (tensors, numbers, nested lists) with ops."""
    from .ops import cast, stack

    if not data:
        raise ValueError(f"{where}: cannot stack an empty list")
    items = [x if isinstance(x, Tensor) else from_data(x, None, where) for x in data]
    like = next((x for x in data if isinstance(x, Tensor)), items[0]).dtype
    items = [  # numbers take the tensors' dtype (weak typing); tensors promote
        x if isinstance(d, (Tensor, list, tuple)) else Tensor(_to_array(d, like, where))
        for x, d in zip(items, data)
    ]
    common = np.result_type(*[x.dtype for x in items])
    items = [x if x.dtype == common else cast(x, common) for x in items]
    shapes = {x.shape for x in items}
    if len(shapes) > 1:
        raise ValueError(f"{where}: cannot stack tensors of different shapes {sorted(shapes)}")
    out = stack(items)
    return out if dtype is None or out.dtype == np.dtype(dtype) else cast(out, dtype)


def check_not_recorded(t: Tensor) -> None:
    """A TypeError when a gradient of an active tape could flow through ``t``."""
    from .engine import tracks

    if tracks(t):
        raise TypeError(_DETACH_MESSAGE.format(label=t._label()))


class _Foreign(Tensor):
    """A numpy array of the user's an op wrapped without copying. The user can change it in
    place after the forward pass, so a tape that saves it for backward first takes an
    owning copy (``own``): later mutation cannot change the gradient."""

    __slots__ = ()


def own(t: Tensor) -> Tensor:
    """Make a ``_Foreign`` tensor hold its own copy (once); other tensors are left alone."""
    if type(t) is _Foreign:
        d = t._data
        if d is not None:
            t._data = d.copy()
        t.__class__ = Tensor
    return t


def mark_views(inputs: dict, outputs) -> None:
    """Make each output that may share memory with a ``_Foreign`` input ``_Foreign`` too
    (``outputs``: the fresh Tensors ``run_kernel`` just made)."""
    for o in outputs:
        d = o._data
        if d.base is None:  # a fresh array is the kernel's own, unless it is an input itself
            for t in inputs.values():
                if d is t._data:
                    break
            else:
                continue
        for t in inputs.values():
            if type(t) is _Foreign and t._data is not None and np.may_share_memory(d, t._data):
                o.__class__ = _Foreign
                break
