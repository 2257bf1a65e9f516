"""What a traced function read from Python variables, checked before each call (the guards).

A compiled program bakes in what the function found in Python variables when it was traced
(tensors as constants, Python values as they were). Rebinding one of those variables later
(``xs = new_data`` in a notebook, a loop rebinding a closed-over name) would leave the
program silently stale, so ``Bindings`` records every closure cell and every global name the
code can reach, at any depth, and the program traces again when one holds another object.

It follows what a call can run: the function's closure and globals; functions, jitted
functions (``tv.jit`` inside ``tv.jit`` is inlined), ``functools.partial`` objects, bound
methods, callable objects and their classes' methods found there; and the user's function
inside tapeviz's own wrappers (``tv.grad``, ``tv.custom_grad``: their closures are followed,
their module globals are tapeviz's and are not guarded). A function in a closure counts as
the same when it has the same code and defaults, and then its own bindings are checked, so a
fresh ``lambda`` each step over the same objects reuses the program. Numbers compare by type
and bits (``-0.0`` is not ``0.0``, ``1.0`` is not ``1``); other values by identity.

Not seen (documented limits, as JAX's): mutation inside an object (an attribute, a list's
items, a module attribute such as ``config.scale``), and code reached only through such an
object at run time. Variables are never stale: they are read when the program runs.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import types

from .pytree import exact_key

__all__ = ["Bindings", "library_code"]

_MISSING = object()
_SCALARS = (str, int, float, bool, bytes, complex, type(None))
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # core/
_LIBRARY_DIRS = tuple(
    os.path.join(os.path.abspath(p), "")
    for p in {
        _HERE,
        os.path.join(os.path.dirname(_HERE), "tapeviz"),
        *(sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")),
    }
    if p
)


@functools.lru_cache(maxsize=4096)
def library_code(filename: str) -> bool:
    """True for code of tapeviz itself, the standard library and installed packages: its
    globals are not the user's to rebind (its closures are still followed)."""
    path = os.path.abspath(filename)
    return path.startswith(_LIBRARY_DIRS) or filename.startswith("<frozen")


class Bindings:
    """The guards of one trace: ``(root, path, how, expected, label)`` each, where ``root``
    is None (the function called) or ``(globals dict, name)``, and ``path`` the steps from
    there (a closure index, an attribute name, ``("cls", name)`` a method of the object's
    class)."""

    __slots__ = ("guards", "values", "_check")

    def __init__(self, fn):
        self.guards: list = []
        self.values: list = []  # per guard, the object found (an identity fast path)
        self._check = None
        self._walk(fn, None, (), _label(fn), set(), here=False)

    # --- recording ------------------------------------------------------------------------
    def _walk(self, obj, root, path, label, seen, here=True) -> None:
        """Guard ``obj`` where it was found (``here``) and follow what calling it runs."""
        if isinstance(obj, types.MethodType):
            self._walk(obj.__self__, root, path + ("__self__",), f"{label}.__self__", seen)
            self._walk(obj.__func__, root, path + ("__func__",), label, seen, here=False)
            return
        if isinstance(obj, types.FunctionType):
            if here or (root is None and not path):
                self._add(root, path, "code", obj, label)
            if id(obj) not in seen:
                seen.add(id(obj))
                self._function(obj, root, path, label, seen)
            return
        if here:
            self._add(root, path, _how(obj), obj, label)
        if id(obj) in seen or not _followed(obj):
            return
        seen.add(id(obj))
        if isinstance(obj, functools.partial):
            self._walk(obj.func, root, path + ("func",), label, seen, here=False)
            for i, a in enumerate(obj.args):
                if callable(a):
                    self._walk(a, root, path + (("arg", i),), f"{label} argument {i}", seen)
            return
        inner = getattr(type(obj), "_jit_target", None)  # a JitFunction: its function
        if inner is not None:
            self._walk(getattr(obj, inner), root, path + (inner,), label, seen)
            return
        for cls in type(obj).__mro__:
            if _user_class(cls):
                for name, f in vars(cls).items():
                    if isinstance(f, types.FunctionType):
                        step = path + (("cls", name),)
                        self._walk(f, root, step, f"{cls.__name__}.{name}", seen)

    def _function(self, fn, root, path, label, seen) -> None:
        library = library_code(fn.__code__.co_filename)
        if not library:
            g = fn.__globals__
            for name in _code_names(fn.__code__):
                value = g.get(name, _MISSING)
                if value is not _MISSING and not isinstance(value, types.ModuleType):
                    self._walk(value, (g, name), (), f"global {name!r}", seen)
        names = fn.__code__.co_freevars
        for i, cell in enumerate(fn.__closure__ or ()):
            value = _contents(cell)
            if library and not callable(value):
                continue  # a wrapper's own settings: not the user's to rebind
            self._walk(value, root, path + (i,), f"closure variable {names[i]!r}", seen)
        wrapped = fn.__dict__.get("__wrapped__")
        if wrapped is not None:
            self._walk(wrapped, root, path + ("__wrapped__",), label, seen)

    def _add(self, root, path, how, value, label) -> None:
        expected = (
            exact_key(value) if how == "equal" else _code_of(value) if how == "code" else value
        )
        self.guards.append((root, path, how, expected, label))
        self.values.append(value)

    # --- checking ---------------------------------------------------------------------------
    def compile(self):
        """``check(fn)``: generated straight-line code testing every guard, identity first
        (an unchanged binding costs one ``is``); the index of the first that fails, else -1."""
        ns = {"_M": _MISSING, "_step": _step, "_key": exact_key, "_code": _code_of}
        lines = ["def check(fn):", "    try:"]
        for i, (root, path, how, expected, _label) in enumerate(self.guards):
            if root is None:
                get = "fn"
            else:
                ns[f"_g{i}"] = root[0]
                get = f"_g{i}.get({root[1]!r}, _M)"
            for k, step in enumerate(path):
                ns[f"_s{i}_{k}"] = step
                get = f"_step({get}, _s{i}_{k})"
            ns[f"_e{i}"] = expected
            if how == "identity":
                test = f"o is not _e{i}"
            else:
                ns[f"_v{i}"] = self.values[i]
                fn = "_key" if how == "equal" else "_code"
                test = f"o is not _v{i} and {fn}(o) != _e{i}"
            lines += [f"        o = {get}", f"        if {test}:", f"            return {i}"]
        lines += ["    except Exception:", "        return 0", "    return -1"]
        exec(compile("\n".join(lines), "<tv.jit guards>", "exec"), ns)
        return ns["check"]

    def changed(self, fn) -> str | None:
        """The first binding that differs now (a readable reason), else None."""
        if self._check is None:
            self._check = self.compile()
        i = self._check(fn)
        if i < 0:
            return None
        _root, _path, how, expected, label = self.guards[i]
        if how == "equal":
            return f"{label} was rebound (was {_short(self.values[i])})"
        if how == "code":
            return f"{label}: a function it calls was redefined"
        return f"{label} was rebound"

    def describe(self) -> list[str]:
        """One line per guard, as ``show_code`` lists them."""
        out = []
        for (_root, _path, how, expected, label), value in zip(self.guards, self.values):
            if how == "equal":
                out.append(f"{label} == {_short(value)} ({type(value).__name__})")
            elif how == "code":
                out.append(f"{label}: same code and defaults")
            else:
                out.append(f"{label} is the same object ({type(expected).__name__})")
        return out


def _how(value) -> str:
    return "equal" if type(value) in _SCALARS else "identity"


def _code_of(fn):
    """What makes two functions the same here: code, defaults (exact) and keyword defaults."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return (_MISSING,)
    defaults = tuple(_default_key(d) for d in fn.__defaults__ or ())
    kw = tuple(sorted((k, _default_key(v)) for k, v in (fn.__kwdefaults__ or {}).items()))
    return (code, defaults, kw)


def _default_key(value):
    return exact_key(value) if type(value) in _SCALARS else ("id", id(value))


def _followed(obj) -> bool:
    """Whether calling ``obj`` runs code worth following (not a class, module or builtin)."""
    if isinstance(obj, (type, types.ModuleType, types.BuiltinFunctionType)) or not callable(obj):
        return False
    return (
        isinstance(obj, functools.partial)
        or _user_class(type(obj))
        or hasattr(type(obj), "_jit_target")
    )


def _user_class(cls) -> bool:
    module = getattr(cls, "__module__", "") or ""
    if module == "builtins":
        return False
    file = getattr(sys.modules.get(module), "__file__", None)
    return file is None or not library_code(file)


def _step(obj, step):
    if obj is _MISSING:
        return obj
    if type(step) is int:
        obj = getattr(obj, "__func__", obj)
        closure = getattr(obj, "__closure__", None)
        if not closure or step >= len(closure):
            return _MISSING
        return _contents(closure[step])
    if type(step) is tuple:
        kind, key = step
        if kind == "cls":
            return getattr(type(obj), key, _MISSING)
        args = getattr(obj, "args", ())
        return args[key] if key < len(args) else _MISSING
    if step == "__wrapped__":
        return getattr(obj, "__dict__", {}).get(step, _MISSING)
    return getattr(obj, step, _MISSING)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _label(fn) -> str:
    return f"function {getattr(fn, '__qualname__', type(fn).__name__)!r}"


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
