"""A user's array wrapped without a copy, and how a tape keeps its saved values safe.

* ``Foreign``: a user's numpy array an op wrapped without a copy (``ops.arguments.from_data``).
* ``own``: a tape that saves a ``Foreign`` tensor first gives it its own copy, so the user
  changing their array in place cannot change the gradient.
* ``mark_views``: a kernel output that is a view of a ``Foreign`` input (``Reshape``,
  ``Transpose``, ``Identity``, ...) is ``Foreign`` too: it shares the user's memory, so it is
  owned the same way when a tape saves it.
"""

from __future__ import annotations

import numpy as np

from .tensor import Tensor
from .tracing import TRACER

__all__ = ["Foreign", "own", "mark_views"]


class Foreign(Tensor):
    """A numpy array of the user's an op wrapped without copying. The user can change it in
    place after the forward pass, so a tape that saves it for backward first takes an
    owning copy (``own``): later mutation cannot change the gradient."""

    __slots__ = ()


def own(t: Tensor) -> Tensor:
    """Make a ``Foreign`` tensor hold its own copy (once); other tensors are left alone."""
    if type(t) is Foreign:
        d = t._data
        if d is not None:
            tracer = TRACER.get()
            if tracer is None:
                t._data = d.copy()
            else:  # tv.jit traces t: the copy stays its traced value
                tracer.own(t)
        t.__class__ = Tensor
    return t


def mark_views(inputs: dict, outputs) -> None:
    """Make each output that may share memory with a ``Foreign`` input ``Foreign`` too
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
            if type(t) is Foreign and t._data is not None and np.may_share_memory(d, t._data):
                o.__class__ = Foreign
                break
