"""``TracedArray``: the array of a traced tensor while ``tv.jit`` traces a function.

A traced tensor keeps its real value during the trace (the first call runs eagerly), but its
``_data`` is this ndarray subclass: numpy functions, ufuncs, indexing, conversions and copies
on it raise ``ConcretizationError`` in the tracing context. That catches code that reads a
value *outside kernels* (an op computed in Python on ``x._array``, a numpy function on a
value) and would otherwise bake it into the compiled program. Kernels get plain views
(``plain``), so they run exactly as in eager mode. Outside the tracing context (another
thread) it behaves as a plain ndarray. The tracer restores plain arrays when the trace ends.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..tensors.tracing import TRACER

__all__ = [
    "TracedArray", "TracedArrays", "plain", "wrap", "root_of", "layout_of", "holds_traced"
]  # fmt: skip

# functions that read only shape and dtype: allowed on a traced value
_SHAPE_ONLY = {
    np.shape, np.ndim, np.size, np.result_type, np.zeros_like, np.ones_like, np.empty_like,
    np.may_share_memory, np.shares_memory, np.broadcast_shapes,
}  # fmt: skip


def _refuse(what: str) -> None:
    tracer = TRACER.get()
    if tracer is not None:
        tracer.escape(what)


def plain(a):
    """``a`` as a plain ndarray view (a ``TracedArray`` unwrapped; anything else as is)."""
    return a.view(np.ndarray) if isinstance(a, TracedArray) else a


def wrap(a: np.ndarray) -> TracedArray:
    """A ``TracedArray`` view of ``a``."""
    return a.view(TracedArray)


def _plains(items):
    return tuple(plain(x) for x in items)


class TracedArray(np.ndarray):
    """An ndarray whose value must not be read outside a kernel while a trace runs."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse(f"np.{ufunc.__name__}")
        if "out" in kwargs:
            kwargs["out"] = _plains(kwargs["out"])
        return getattr(ufunc, method)(*_plains(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func not in _SHAPE_ONLY:
            _refuse(f"np.{func.__name__}")
        return func(*_plains(args), **kwargs)

    def __array__(self, dtype=None, copy=None):
        _refuse("np.asarray()")
        a = self.view(np.ndarray)
        return a if dtype is None else a.astype(dtype)

    def _value(what):  # noqa: N805 - builds the methods below
        def method(self, *args, **kwargs):
            _refuse(what)
            return getattr(self.view(np.ndarray), name)(*args, **kwargs)

        name = what
        return method

    __bool__ = _value("__bool__")
    __float__ = _value("__float__")
    __int__ = _value("__int__")
    __index__ = _value("__index__")
    __complex__ = _value("__complex__")
    __iter__ = _value("__iter__")
    __getitem__ = _value("__getitem__")
    __setitem__ = _value("__setitem__")
    item = _value("item")
    tolist = _value("tolist")
    tobytes = _value("tobytes")
    copy = _value("copy")
    astype = _value("astype")
    fill = _value("fill")
    __reduce__ = _value("__reduce__")
    __reduce_ex__ = _value("__reduce_ex__")
    __deepcopy__ = _value("__deepcopy__")
    __copy__ = _value("__copy__")
    del _value

    def __repr__(self):
        return f"<traced array shape={self.shape} dtype={self.dtype}>"

    __str__ = __repr__


def root_of(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (``a`` itself, or the base of its views)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def layout_of(a: np.ndarray) -> tuple:
    """Where ``a`` starts, its shape, strides and dtype: one view of a memory."""
    return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)


def holds_traced(attrs, roots: dict, depth: int = 0) -> bool:
    """Whether ``attrs`` (nested dicts, lists, tuples) hold a traced array or a view of one
    (``roots``: ``id(root array)`` of every traced array)."""
    items = attrs.values() if isinstance(attrs, dict) else attrs
    for a in items:
        if isinstance(a, np.ndarray) and (isinstance(a, TracedArray) or id(root_of(a)) in roots):
            return True
        if isinstance(a, (dict, list, tuple)) and depth < 3 and holds_traced(a, roots, depth + 1):
            return True
    return False


class TracedArrays:
    """The arrays of a trace's values: each traced tensor's array is wrapped (value reads
    raise) until ``release``; a view of one found later is the same value or refused."""

    def __init__(self):
        self._roots: dict[int, tuple] = {}  # id(root array) -> (weakref, {layout: Value})
        self._wrapped: list = []  # (weakref to tensor, wrapper, plain array)

    def track(self, t, v) -> None:
        """``t``'s array is Value ``v``: wrap it, and note its memory and layout."""
        d = t._data
        if d is None:
            return
        p = plain(d)
        w = wrap(p)
        t._data = w
        self._wrapped.append((weakref.ref(t), w, p))
        key = id(root_of(p))
        entry = self._roots.get(key)
        if entry is None:
            roots = self._roots
            ref = weakref.ref(root_of(p), lambda _, k=key: roots.pop(k, None))
            entry = roots[key] = (ref, {})
        entry[1].setdefault(layout_of(p), v)

    def value_of(self, data):
        """The Value whose array ``data`` is (same memory and layout); None for an array of
        its own; False for another view of a traced array (made outside kernels)."""
        p = plain(data)
        entry = self._roots.get(id(root_of(p)))
        if entry is None:
            return None
        return entry[1].get(layout_of(p), False)

    def held_in(self, attrs) -> bool:
        """Whether kernel attributes hold a traced array or a view of one."""
        return holds_traced(attrs, self._roots)

    def release(self, names: dict) -> None:
        """Give every traced tensor its plain array back (noting its name in ``names``)."""
        for ref, w, p in self._wrapped:
            t = ref()
            if t is not None:
                if t.name:
                    names[t.id] = t.name
                if t._data is w:
                    t._data = p
        self._wrapped.clear()
        self._roots.clear()
