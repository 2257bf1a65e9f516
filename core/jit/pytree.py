"""Arguments and results as (leaves, structure): tensors and arrays are the leaves a
compiled program takes and gives; everything else is part of the structure, a hashable key.

Containers: lists, tuples (and namedtuples) and dicts, nested. A Python number, string or
other hashable value is static: part of the key, so a new value traces again (a tensor
argument never does for a new value of the same shape and dtype).
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor

__all__ = ["flatten", "flatten_result", "unflatten", "leaf_names", "LEAF"]

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
    return ("S", (t, tree))


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
    return (type(value), value)


def unflatten(struct, leaves):
    """Rebuild a structure from ``flatten`` with the next items of the iterator ``leaves``."""
    if struct == LEAF:
        return next(leaves)
    tag = struct[0]
    if tag == "S":
        return struct[1][1]
    if tag == "list":
        return [unflatten(s, leaves) for s in struct[1]]
    if tag == "tuple":
        return tuple(unflatten(s, leaves) for s in struct[1])
    if tag == "N":
        return struct[1](*[unflatten(s, leaves) for s in struct[2]])
    if tag == "D":
        return {k: unflatten(s, leaves) for k, s in zip(struct[1], struct[2])}
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
