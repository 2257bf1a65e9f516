"""Tensors a ``grad_func`` reaches without ``save()``: through its closure, default
arguments, a ``functools.partial`` or the globals it names. custom_grad treats those made
inside the forward like saved intermediates (see ``tfjs.vjp._mark_intermediates``)."""

from __future__ import annotations

import functools

from ..tensors.tensor import Tensor

__all__ = ["captured_tensors"]

_DEPTH = 3  # nested containers / functions followed


def captured_tensors(fn) -> list[Tensor]:
    """Every Tensor ``fn`` can reach through closure cells, defaults, partial arguments,
    referenced globals, and lists/tuples/dicts/functions among them (a few levels deep)."""
    found: dict[int, Tensor] = {}
    _visit(fn, found, _DEPTH, set())
    return list(found.values())


def _visit(obj, found, depth, seen) -> None:
    if isinstance(obj, Tensor):
        found.setdefault(id(obj), obj)
        return
    if depth < 0 or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = obj
    elif isinstance(obj, dict):
        items = obj.values()
    elif isinstance(obj, functools.partial):
        items = [obj.func, *obj.args, *obj.keywords.values()]
    elif callable(obj) and hasattr(obj, "__code__"):
        items = _function_refs(obj)
    else:
        return
    for item in items:
        _visit(item, found, depth - 1, seen)


def _function_refs(fn) -> list:
    refs = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            refs.append(cell.cell_contents)
        except ValueError:  # an empty cell (a variable not assigned yet)
            pass
    refs += list(getattr(fn, "__defaults__", None) or ())
    refs += list((getattr(fn, "__kwdefaults__", None) or {}).values())
    names, glob = fn.__code__.co_names, getattr(fn, "__globals__", {})
    refs += [glob[n] for n in names if n in glob and isinstance(glob[n], Tensor)]
    return refs
