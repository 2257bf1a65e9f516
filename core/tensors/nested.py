"""Tensors in nested lists, tuples and dicts: the shapes ``Tape.gradient`` takes its
sources in, and gives their gradients back in."""

from __future__ import annotations

from .tensor import Tensor

__all__ = ["flatten_tensors", "restructure"]


def flatten_tensors(items):
    """The tensors in nested lists, tuples and dicts, in order."""
    for t in items:
        if isinstance(t, (list, tuple)):
            yield from flatten_tensors(t)
        elif isinstance(t, dict):
            yield from flatten_tensors(list(t.values()))
        else:
            yield t


def restructure(template, it):
    if isinstance(template, Tensor):
        return next(it)
    if isinstance(template, dict):
        return {k: restructure(v, it) for k, v in template.items()}
    if isinstance(template, (list, tuple)):
        return type(template)(restructure(v, it) for v in template)
    return next(it)
