"""What a traced function read from its closure and globals, checked before each call.

A compiled program bakes in what the function found in Python variables when it was traced
(tensors as constants, Python values as they were). Rebinding one of those variables later
(``xs = new_data`` in a notebook, a loop rebinding a closed-over name) would leave the
program silently stale, so it records each closure cell and each named global of the
function, of the functions in its closure and of the module-level helpers it names (three
levels), and traces again when one holds another object. A function there counts as the same
when it has the same code, defaults and (recursively) bindings, so a fresh ``lambda`` each
step over the same objects reuses the program; a number or string, when it is equal.
Mutation inside an object (an attribute, a list's items) is not seen: the documented limit
(JAX's too). Variables are never stale: they are read when the program runs.
"""

from __future__ import annotations

import types

__all__ = ["Bindings"]

_MISSING = object()
_SCALARS = (str, int, float, bool, bytes, complex, type(None))


class Bindings:
    """Closure cells and globals read by ``fn`` (and functions it reaches), as found."""

    __slots__ = ("cells", "globals")

    def __init__(self, fn):
        self.cells: list = []  # (path of closure indexes from fn, how to compare, value)
        self.globals: list = []  # (globals dict, name, how to compare, value)
        self._walk(fn, (), 0, set())

    def _walk(self, fn, path, depth, seen) -> None:
        fn = getattr(fn, "__func__", fn)  # a bound method: its function
        if not isinstance(fn, types.FunctionType) or depth > 3:
            return
        self.cells.append((path, "code", (fn.__code__, fn.__defaults__)))
        if id(fn) in seen:
            return
        seen.add(id(fn))
        self._names(fn, depth, seen)
        for i, cell in enumerate(fn.__closure__ or ()):
            value = _contents(cell)
            if isinstance(value, (types.FunctionType, types.MethodType)):
                self._walk(value, path + (i,), depth + 1, seen)
            else:
                self.cells.append((path + (i,), _how(value), value))

    def _names(self, fn, depth, seen) -> None:
        g = fn.__globals__
        for name in _code_names(fn.__code__):
            value = g.get(name, _MISSING)
            if value is _MISSING:
                continue
            self.globals.append((g, name, _how(value), value))
            if isinstance(value, types.FunctionType) and value.__globals__ is g:
                if id(value) not in seen and depth < 3:  # a helper of the same module
                    seen.add(id(value))
                    self._names(value, depth + 1, seen)

    def changed(self, fn) -> str | None:
        """The first binding that differs now (a readable name), else None."""
        for g, name, how, value in self.globals:
            if not _same(how, g.get(name, _MISSING), value):
                return f"global {name!r} was rebound"
        for path, how, value in self.cells:
            now = _at(fn, path)
            if how == "code":
                now = getattr(now, "__func__", now)
                code = getattr(now, "__code__", None)
                if code is not value[0] or not _same_defaults(now.__defaults__, value[1]):
                    return "a function it calls was redefined"
            elif not _same(how, now, value):
                return "a closure variable was rebound"
        return None


def _how(value) -> str:
    return "equal" if type(value) in _SCALARS else "identity"


def _same(how, now, value) -> bool:
    if how == "equal":
        return type(now) is type(value) and now == value
    return now is value


def _same_defaults(a, b) -> bool:
    if a is b:
        return True
    if a is None or b is None or len(a) != len(b):
        return False
    return all(_same(_how(y), x, y) for x, y in zip(a, b))


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (not yet assigned)
        return _MISSING


def _code_names(code) -> set:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _at(fn, path):
    obj = fn
    for i in path:
        obj = getattr(obj, "__func__", obj)
        closure = getattr(obj, "__closure__", None)
        if not closure or i >= len(closure):
            return _MISSING
        obj = _contents(closure[i])
    return obj
