"""Memory management as TensorFlow.js does it: ``tidy``, ``keep``, ``dispose``, ``memory``."""

from __future__ import annotations

import functools

from .autodiff.tape import live_tapes
from .tensors.kinds import Variable
from .tensors.live import LIVE, pop_scope, push_scope, scope_stack
from .tensors.tensor import Tensor

__all__ = ["tidy", "keep", "dispose", "memory"]

_KEPT: set[int] = set()


class _TidyScope:
    """``with tidy():`` block, or ``@tidy()`` decorator (also for zero-argument functions)."""

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"tidy(): expected a function to decorate, got {type(fn).__name__}")
        return functools.wraps(fn)(lambda *a, **k: _run_tidy(fn, a, k))

    def __enter__(self):
        push_scope()
        return self

    def __exit__(self, *exc):
        created = pop_scope()
        self._dispose(created, keep_ids=set())
        return False

    @staticmethod
    def _dispose(created, keep_ids):
        stack = scope_stack()
        keep_ids = keep_ids | _saved_ids()  # tapes still need what they saved for backward
        for t in created:
            if t.id in keep_ids or isinstance(t, Variable):
                if stack:  # a returned tensor belongs to the enclosing scope
                    stack[-1].append(t)
                continue
            if t.id in _KEPT:
                continue
            t.dispose()


def _saved_ids() -> set[int]:
    return {
        s.tensor.id
        for tape in live_tapes()
        for node in tape.nodes
        for s in node.saved
        if s.tensor is not None
    }


def tidy(fn=None, *args, **kwargs):
    """Dispose every tensor created inside, except the returned ones, kept ones and variables.

    Use as ``tidy(fn)`` (runs a zero-argument ``fn`` now and returns its result, as
    TensorFlow.js does), ``tidy(fn, *args)`` (runs ``fn(*args)``), ``@tidy`` on a function
    that takes arguments, ``@tidy()`` on any function, or ``with tidy():``.

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([1.0, 2.0])
        >>> y = tv.tidy(lambda: (x * 2).sum())
        >>> y.item()
        6.0
    """
    if fn is None:
        return _TidyScope()
    if not callable(fn):
        raise TypeError(f"tidy: expected a function, got {type(fn).__name__}")
    if args or kwargs:
        return _run_tidy(fn, args, kwargs)
    if getattr(fn, "__code__", None) is not None and fn.__code__.co_argcount == 0:
        return _run_tidy(fn, (), {})
    return functools.wraps(fn)(lambda *a, **k: _run_tidy(fn, a, k))


def _run_tidy(fn, args, kwargs):
    push_scope()
    try:
        result = fn(*args, **kwargs)
    except BaseException:
        _TidyScope._dispose(pop_scope(), set())
        raise
    keep_ids = {t.id for t in _tensors_in(result)}
    _TidyScope._dispose(pop_scope(), keep_ids)
    return result


def _tensors_in(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors_in(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors_in(v)


def keep(t: Tensor) -> Tensor:
    """Keep ``t`` alive past the enclosing ``tidy``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"keep: expected a Tensor, got {type(t).__name__}")
    _KEPT.add(t.id)
    return t


def dispose(*tensors) -> None:
    """Dispose tensors (nested lists/dicts allowed)."""
    for t in _tensors_in(list(tensors)):
        t.dispose()


def memory() -> dict:
    """Live tensors, their bytes, and the bytes tapes hold as saved-for-backward values."""
    saved = sum(t.saved_nbytes for t in live_tapes())
    return {
        "num_tensors": len(LIVE),
        "num_bytes": sum(LIVE.values()),
        "saved_bytes": saved,
        "num_tapes": len(live_tapes()),
    }
