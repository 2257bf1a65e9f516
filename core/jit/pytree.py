"""Arguments and results as (leaves, structure): tensors and arrays are the leaves a
compiled program takes and gives; everything else is part of the structure, a hashable key.

Containers: lists, tuples (and namedtuples) and dicts, nested. A Python number, string or
other hashable value is static: part of the key, so a new value traces again (a tensor
argument never does for a new value of the same shape and dtype). Static values are
compared by type and bits (``Static``): ``-0.0`` is not ``0.0``, ``1.0`` is not ``1`` nor
``True``, and a NaN is the same NaN (sign and payload) on every call.
"""

from __future__ import annotations

import copy
import struct

import numpy as np

from ..tensors.tensor import Tensor

__all__ = [
    "flatten", "flatten_result", "unflatten", "leaf_names", "LEAF", "Static", "exact_key"
]  # fmt: skip

LEAF = "L"


def flatten(tree, leaves: list, where: str, static: bool = False):
    """Append the leaves of ``tree`` to ``leaves``; return its structure (hashable).

    ``static``: the whole of ``tree`` is part of the key (``static_argnums``)."""
    if static:
        return ("S", _hashable(tree, where, static=True))
    if isinstance(tree, Tensor) or (isinstance(tree, np.ndarray) and tree.dtype.kind in "fiub"):
        leaves.append(tree)
        return LEAF
    t = type(tree)
    if t is list or t is tuple:
        return (t.__name__, tuple(flatten(x, leaves, f"{where}[{i}]") for i, x in enumerate(tree)))
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a namedtuple
        return ("N", t, tuple(flatten(x, leaves, f"{where}.{f}") for f, x in zip(t._fields, tree)))
    if t is dict:
        keys = tuple(tree)
        return ("D", keys, tuple(flatten(tree[k], leaves, f"{where}[{k!r}]") for k in keys))
    return ("S", _hashable(tree, where))


def flatten_result(tree, leaves: list):
    """As ``flatten``, for a function's result: tensors are leaves, anything else that is not
    a container is kept as it is (``("O", obj)``): a result need not be hashable."""
    if isinstance(tree, Tensor):
        leaves.append(tree)
        return LEAF
    t = type(tree)
    if t is list or t is tuple:
        return (t.__name__, tuple(flatten_result(x, leaves) for x in tree))
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return ("N", t, tuple(flatten_result(x, leaves) for x in tree))
    if t is dict:
        return ("D", tuple(tree), tuple(flatten_result(tree[k], leaves) for k in tree))
    if isinstance(tree, (dict, list)):  # a subclass: a shallow copy per call, items refilled
        keys = tuple(tree) if isinstance(tree, dict) else tuple(range(len(tree)))
        subtrees = tuple(flatten_result(tree[k], leaves) for k in keys)
        return ("C", _Object(_emptied(tree)), keys, subtrees)
    _refuse_hidden_tensors(tree)
    return ("S", _Object(tree))


def _emptied(tree):
    """A shallow copy of a dict or list subclass without its items (kept per program: it
    must not keep the traced call's tensors alive)."""
    template = copy.copy(tree)
    if isinstance(template, dict):
        template.clear()
    else:
        del template[:]
    return template


def _refuse_hidden_tensors(obj) -> None:
    """A result object holding tensors in its attributes would be returned as it was on the
    traced call, with that call's tensors: refused (where a program would be stale)."""
    fields = getattr(obj, "__dict__", None) or {}
    if isinstance(obj, (set, frozenset)) or any(isinstance(v, Tensor) for v in fields.values()):
        raise TypeError(
            f"tv.jit: the function returned a {type(obj).__name__} holding tensors; a compiled "
            "program returns new tensors only inside lists, tuples, namedtuples and dicts "
            "(and their subclasses): return those instead"
        )


class _Object:
    """A result's non-tensor leaf, kept as it is (it need not be hashable)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _hashable(value, where: str, static: bool = False):
    try:
        hash(value)
    except TypeError:
        how = "a static argument" if static else "an argument"
        raise TypeError(
            f"tv.jit: {where} is {how} of type {type(value).__name__}, which is not hashable; "
            "the compiled program is cached by its arguments' shapes, dtypes and static "
            "values, so pass tensors or arrays, lists/tuples/dicts of them, or hashable "
            "Python values"
        ) from None
    return Static(value)


def exact_key(value):
    """A key equal for two values exactly when a program may treat them as one: the same
    type and, for numbers, the same bits (``-0.0`` vs ``0.0``, ``1`` vs ``1.0`` vs ``True``
    differ; a NaN is its bits: ``float("nan")`` is one key, ``-nan`` another), element by
    element in tuples and frozensets."""
    t = type(value)
    if t is float or isinstance(value, np.floating):
        return (t, struct.pack("<d", float(value)))  # the bits: sign of 0 and of NaN too
    if t is complex or isinstance(value, np.complexfloating):
        return (t, exact_key(float(value.real)), exact_key(float(value.imag)))
    if t is tuple or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return (t, tuple(exact_key(x) for x in value))
    if t is frozenset:
        return (t, frozenset(exact_key(x) for x in value))
    return (t, value)


class Static:
    """A static value in a key: equal by ``exact_key``; ``value`` is the value itself."""

    __slots__ = ("value", "key", "hash")

    def __init__(self, value):
        self.value = value
        self.key = exact_key(value)
        self.hash = hash(self.key)

    def __eq__(self, other):
        return type(other) is Static and self.key == other.key

    def __hash__(self):
        return self.hash

    def __repr__(self):
        return repr(self.value)


def unflatten(struct, leaves):
    """Rebuild a structure from ``flatten`` with the next items of the iterator ``leaves``."""
    if struct == LEAF:
        return next(leaves)
    tag = struct[0]
    if tag == "S":
        return struct[1].value
    if tag == "list":
        return [unflatten(s, leaves) for s in struct[1]]
    if tag == "tuple":
        return tuple(unflatten(s, leaves) for s in struct[1])
    if tag == "N":
        return struct[1](*[unflatten(s, leaves) for s in struct[2]])
    if tag == "D":
        return {k: unflatten(s, leaves) for k, s in zip(struct[1], struct[2])}
    if tag == "C":
        out = copy.copy(struct[1].value)
        items = [(k, unflatten(s, leaves)) for k, s in zip(struct[2], struct[3])]
        if isinstance(out, dict):
            out.update(items)
        else:
            out.extend(v for _, v in items)
        return out
    raise AssertionError(struct)


def leaf_names(struct, base: str, out: list) -> None:
    """One readable name per leaf of ``struct`` (``xs[1]`` -> ``xs_1``), in leaf order."""
    if struct == LEAF:
        out.append(base)
        return
    tag = struct[0]
    if tag in ("list", "tuple"):
        for i, s in enumerate(struct[1]):
            leaf_names(s, f"{base}_{i}", out)
    elif tag == "N":
        for f, s in zip(struct[1]._fields, struct[2]):
            leaf_names(s, f"{base}_{f}", out)
    elif tag == "D":
        for k, s in zip(struct[1], struct[2]):
            leaf_names(s, f"{base}_{k}", out)
