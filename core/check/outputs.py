"""The outputs of a function ``check_grads`` checks: one tensor, or a tuple, list or dict of
them (nested too), as HIPS autograd's ``check_grads`` takes (its ``split`` tests return
lists). Each floating output is checked as a function of its own, named by its place."""

from __future__ import annotations

import numpy as np

from ..tensors import recording
from ..tensors.tensor import Tensor

__all__ = ["output_functions"]


def output_functions(f, xs, name: str) -> tuple[list, list]:
    """``([(label, f_k)], notes)``: one function per floating output of ``f(*xs)`` (label
    None when ``f`` returns one tensor); notes for outputs that are not checked."""
    with recording.no_grad():
        out = f(*xs)
    if isinstance(out, Tensor):
        return [(None, f)], []
    paths, skipped = [], []
    _walk(out, (), paths, skipped, name)
    if not paths:
        raise TypeError(
            f"check_grads({name}): f must return a floating Tensor, or a tuple, list or dict "
            f"of them; got {_describe(out)}"
        )
    notes = [
        f"output {_label(p)} is {dtype}: not differentiable, not checked" for p, dtype in skipped
    ]
    return [(f"output {_label(p)}", _picker(f, p, name)) for p in paths], notes


def _walk(out, path, paths, skipped, name) -> None:
    if isinstance(out, Tensor):
        (paths if out.dtype.kind == "f" else skipped).append(
            path if out.dtype.kind == "f" else (path, out.dtype)
        )
    elif isinstance(out, (tuple, list)):
        for i, o in enumerate(out):
            _walk(o, path + (i,), paths, skipped, name)
    elif isinstance(out, dict):
        for k, o in out.items():
            _walk(o, path + (k,), paths, skipped, name)
    else:
        raise TypeError(
            f"check_grads({name}): f returned {_describe(out)} at output {_label(path)}; "
            "expected Tensors (in a tuple, list or dict)"
        )


def _picker(f, path, name):
    def f_k(*xs):
        out = f(*xs)
        for key in path:
            out = out[key]
        return out

    f_k.__name__ = f"{name}{''.join(f'[{k!r}]' for k in path)}"
    return f_k


def _label(path) -> str:
    return "".join(f"[{k!r}]" for k in path) or "[]"


def _describe(out) -> str:
    if isinstance(out, (np.ndarray, np.generic)):
        return f"a numpy {type(out).__name__} (did f compute with numpy outside the tape?)"
    return type(out).__name__
