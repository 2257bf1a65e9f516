"""A call's signature (the cache key of ``tv.jit``) and how to say it in words.

The key is the backend, the arguments' structure with their static values (``Static``:
compared by type and bits), and per tensor argument its shape, dtype, which earlier
argument is the same object, and for a Variable its identity (a Variable the function also
reads from its closure could be the argument: a program traced with one is not run for
another). ``describe`` lists it for ``show_code``; ``key_change`` says why a call traced
again.
"""

from __future__ import annotations

from ..tensors.kinds import Variable
from ..tensors.tensor import DisposedError, Tensor
from .pytree import Static

__all__ = ["signature", "describe", "key_change"]


def signature(leaves) -> tuple:
    """The tensor part of the key: per leaf (shape, dtype, Variable identity or False) and
    the index of the first leaf that is the same object."""
    sig = []
    ids = {}
    for i, x in enumerate(leaves):
        if isinstance(x, Tensor):
            d = x.peek()
            if d is None:
                raise DisposedError(f"tv.jit: argument tensor {x._label()} was disposed")
            is_var = type(x) is not Tensor and isinstance(x, Variable)
            sig.append((d.shape, d.dtype, id(x) if is_var else False))
        else:
            sig.append((x.shape, x.dtype, False))  # an array runs as a tensor would
        sig.append(ids.setdefault(id(x), i))  # which arguments are one object
    return tuple(sig)


def describe(names, leaves, struct) -> list[str]:
    """The signature in words: each tensor argument's kind, dtype and shape, each static."""
    lines = []
    for name, x in zip(names, leaves):
        if isinstance(x, Variable):
            lines.append(f"argument {name}: this Variable {x._label()}, {x.dtype}{list(x.shape)}")
        else:
            lines.append(f"argument {name}: a tensor {x.dtype}{list(x.shape)}")
    lines += [f"static value {s.value!r} ({type(s.value).__name__})" for s in _statics(struct)]
    return lines


def _statics(struct):
    if isinstance(struct, Static):
        yield struct
    elif isinstance(struct, tuple):
        for s in struct:
            yield from _statics(s)


def key_change(old, new) -> str:
    """What differs between two signatures, in words (why a call traced again)."""
    if old[0] != new[0]:
        return f"the backend changed ({old[0]} -> {new[0]})"
    if old[1] != new[1]:
        was, now = list(_statics(old[1])), list(_statics(new[1]))
        for a, b in zip(was, now):
            if a != b:
                return f"a static value changed: {a.value!r} -> {b.value!r}"
        return "the arguments' structure changed"
    a, b = old[2], new[2]
    if len(a) != len(b):
        return "the number of tensor arguments changed"
    for i in range(0, len(a), 2):
        (s0, d0, v0), (s1, d1, v1) = a[i], b[i]
        if s0 != s1 or d0 != d1:
            return f"tensor argument {i // 2}: {d0}{list(s0)} -> {d1}{list(s1)}"
        if v0 != v1:
            return f"tensor argument {i // 2} is another Variable"
    return "which arguments are the same object changed"
