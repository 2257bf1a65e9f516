"""``tv.jit``: trace a function once per signature, then run its compiled program.

The signature of a call is the backend, each tensor argument's shape and dtype, which
arguments are the same object, each Variable argument's identity, and the static values
(Python numbers and the arguments listed in ``static_argnums``, compared by type and bits).
A call with a known signature runs the program after checking its guards (``Compiled.stale``:
the kernels and gradients it was traced with are still the registered ones, the Variables it
reads keep their ``trainable`` flags, and the Python variables its code can reach hold the
same objects); anything else traces again, and ``retrace_reason`` says why. Programs are
kept for the ``cache_size`` most recently used signatures. While a tape records,
``detect_anomaly`` checks, or another trace runs, the function runs as written (so the tape
records it, or the outer trace inlines it).

Each tensor argument is traced as a copy of its own (a tensor of its own identity and
memory), so an argument that is, or shares memory with, a tensor the function also reads
from its closure is never merged with that constant.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections import OrderedDict

import numpy as np

from ..autodiff.refusal import check_reverse_mode
from ..autodiff.tape import Tape
from ..registry.backends import get_backend
from ..tensors import recording
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor
from ..tensors.tracing import TRACER
from .compiled import build
from .pytree import flatten, flatten_result, leaf_names, unflatten
from .signature import describe, key_change, signature
from .tracer import Aliased, Tracer

__all__ = ["jit", "JitFunction"]

RETRACE_WARNING = 8  # traces of one function before a warning says why it keeps tracing
CACHE_SIZE = 32  # signatures whose programs a jitted function keeps (least recently used go)


def jit(fn=None, *, static_argnums=(), cache_size=CACHE_SIZE):
    """Compile ``fn``: trace it once per signature, then run generated straight-line code.

    The first call with a new signature runs ``fn`` once while a tracer records every kernel
    it runs, the backward pass's too (gradients are ops), and generates a Python function
    of backend kernel calls with each intermediate freed after its last use. Later calls run
    that function: no tape, no nodes, the same kernels in the same order, so the results
    equal eager mode's bit for bit.

    Semantics: Python control flow is fixed when tracing; a branch or conversion that needs a
    tensor's value (``if x > 0``, ``float(x)``, ``x.item()``, numpy on the value) raises
    ``ConcretizationError`` while tracing. Variables are read when the program runs (not
    baked in), ``Variable.assign`` in ``fn`` assigns on every call, and random ops
    (``random_normal``, dropout) draw fresh values on every call. Other tensors and Python
    values ``fn`` reads from its closure or globals (at any depth: helpers, nested jit,
    ``functools.partial``, callable objects) are constants of the trace; rebinding such a
    name traces again. Python numbers among the arguments are static (a new value traces
    again, compared by type and bits): pass a tensor for a value that changes on every call.

    Args:
        fn: the function; tensor and numpy arguments (nested in lists, tuples and dicts too)
            are the program's inputs.
        static_argnums: positions of arguments that are Python settings (hashable), part of
            the signature.
        cache_size: how many signatures' programs to keep (least recently used dropped).

    Returns:
        A ``JitFunction``: call it like ``fn``; ``.trace(*args)`` shows what it compiles.

    Example:
        >>> import tapeviz as tv
        >>> f = tv.jit(tv.grad(lambda x: tv.sum(tv.tanh(x) * x)))
        >>> f(tv.tensor([0.5, 1.0])).numpy()
        array([0.8553411, 1.1815685], dtype=float32)
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, cache_size=cache_size)
    return JitFunction(fn, static_argnums, cache_size)


class JitFunction:
    """A function compiled per signature (see ``jit``). ``traces`` counts the traces run;
    ``retrace_reason`` says why the last trace after the first one ran."""

    _jit_target = "fn"  # guards follow a jitted helper into its function (bindings.py)

    def __init__(self, fn, static_argnums=(), cache_size=CACHE_SIZE):
        if not callable(fn):
            raise TypeError(f"tv.jit: expected a function, got {type(fn).__name__}")
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if type(cache_size) is not int or cache_size < 1:
            raise ValueError(f"tv.jit: cache_size must be a positive int, got {cache_size!r}")
        self.fn = fn
        self.static_argnums = frozenset(int(i) for i in static_argnums)
        self.name = display_name(fn)
        self.traces = 0
        self.cache_size = cache_size
        self.retrace_reason = ""
        self._cache: OrderedDict = OrderedDict()  # signature -> [Compiled, ...], oldest first
        self._why = ""
        self._last_key = None
        functools.update_wrapper(self, fn, updated=())

    def __repr__(self):
        return f"<tv.jit {self.name}: {self.traces} trace(s)>"

    def __get__(self, obj, objtype=None):  # a jitted method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        return self.call(self.fn, args, kwargs)

    def call(self, fn, args, kwargs):
        """Run ``fn`` (this one's function or another with the same code) compiled."""
        if TRACER.get() is not None or recording.current() is not None:
            return fn(*args, **kwargs)
        if recording.anomaly_hook() is not None:  # detect_anomaly checks each kernel eagerly
            return fn(*args, **kwargs)
        leaves, struct = self._flatten(args, kwargs)
        key = (get_backend(), struct, signature(leaves))
        programs = self._cache.get(key)
        if programs is not None:
            for program in programs:
                why = program.stale(fn, leaves)
                if why is None:
                    if program.backward:  # a graded call may refuse reverse mode
                        check_reverse_mode(f"a tv.jit program with a backward pass ({self.name})")
                    self._cache.move_to_end(key)
                    return program.run(leaves)
                self._why = why
        elif self._last_key is not None:
            self._why = key_change(self._last_key, key)
        return self._trace(fn, args, kwargs, leaves, struct, key)

    def trace(self, *args, **kwargs):
        """Trace the function on these arguments and return the ``Compiled`` program, with
        the tapes it recorded and a display tape of its forward ops (for the graph)."""
        leaves, struct = self._flatten(args, kwargs)
        compiled = self._build(self.fn, leaves, struct, display=True)
        compiled.name_tensors()
        return compiled

    def _flatten(self, args, kwargs):
        leaves = []
        structs = tuple(
            flatten(a, leaves, f"argument {i}", i in self.static_argnums)
            for i, a in enumerate(args)
        )
        if kwargs:
            kw = tuple(flatten(kwargs[k], leaves, f"argument {k!r}") for k in sorted(kwargs))
            structs += (("kw", tuple(sorted(kwargs)), kw),)
        return leaves, structs

    def _trace(self, fn, args, kwargs, leaves, struct, key):
        program = self._build(fn, leaves, struct)
        result, program.first_result = program.first_result, None  # the call's, not kept
        programs = self._cache.setdefault(key, [])
        self._cache.move_to_end(key)
        programs.insert(0, program)
        del programs[4:]
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        self._last_key = key
        if self.traces:
            self.retrace_reason = self._why or "a new signature"
        if self.traces == RETRACE_WARNING:
            why = self._why or "new argument shapes, dtypes or static values"
            warnings.warn(
                f"tv.jit({self.name}) has traced {self.traces + 1} times (last reason: {why}); "
                "each new shape, dtype or static value, and each rebinding of a name it reads, "
                "traces again: pass a tensor for a value that changes on every call",
                stacklevel=3,
            )
        self.traces += 1
        self._why = ""
        return result

    def _build(self, fn, leaves, struct, display=False):
        """Trace ``fn`` on copies of its tensor arguments; where it also reaches an argument's
        original by identity (its closure holds the same tensor), trace again with the
        original itself in that place."""
        same: set = set()  # id() of arguments traced as themselves
        while True:
            tracer = Tracer(self.name, Tape(persistent=True) if display else None)
            try:
                return self._build_once(fn, leaves, struct, tracer, same)
            except Aliased as e:
                tracer.rollback()
                same.add(id(leaves[e.index]))

    def _build_once(self, fn, leaves, struct, tracer, same):
        names = _leaf_names(fn, struct)
        copies: dict = {}
        traced = [x if id(x) in same else _traced_leaf(x, copies) for x in leaves]
        first = {}
        for i, t in enumerate(traced):
            if first.setdefault(id(t), i) == i:
                tracer.add_arg(t, i)
                if t is not leaves[i] and isinstance(leaves[i], Tensor):
                    tracer.originals[leaves[i].id] = i
        args, kwargs = _rebuild(struct, traced)
        try:
            with tracer:
                out = fn(*args, **kwargs)
                out_leaves = []
                out_struct = flatten_result(out, out_leaves)
                outs = [tracer.lookup(t) if _is_value(t) else None for t in out_leaves]
        finally:
            tracer.finish()
        kinds = ["a" if not isinstance(x, Tensor) else "t" for x in leaves]
        result = (out_struct, out_leaves, outs)
        compiled = build(self, fn, tracer, traced, kinds, names, result)
        compiled.backend = get_backend()
        compiled.signature = describe(names, leaves, struct)
        compiled.aliases(leaves, traced)
        originals = {id(c): x for x, c in zip(leaves, traced) if isinstance(x, Tensor)}
        compiled.first_result = unflatten(out_struct, (originals.get(id(t), t) for t in out_leaves))
        return compiled


def _is_value(t) -> bool:
    return isinstance(t, Tensor) and not isinstance(t, Variable)


def _leaf_names(fn, struct) -> list:
    names = []
    positional = [s for s in struct if not (isinstance(s, tuple) and s and s[0] == "kw")]
    for s, name in zip(positional, _param_names(fn, len(positional))):
        leaf_names(s, name, names)
    for s in struct[len(positional) :]:
        for k, x in zip(s[1], s[2]):
            leaf_names(x, k, names)
    return names


def _rebuild(struct, leaves):
    """(args, kwargs) from the flattened argument structure."""
    it = iter(leaves)
    args, kwargs = [], {}
    for s in struct:
        if isinstance(s, tuple) and s and s[0] == "kw":
            kwargs = {k: unflatten(x, it) for k, x in zip(s[1], s[2])}
        else:
            args.append(unflatten(s, it))
    return args, kwargs


def _traced_leaf(x, copies: dict):
    """The tensor the trace runs ``fn`` on: a Variable itself (its identity is part of the
    signature), else a copy of its own, one per argument object, so no constant of the
    function is ever the same tensor or memory as an argument."""
    if isinstance(x, Variable):
        return x
    if isinstance(x, Tensor) and x._data is None:
        x._array  # noqa: B018 - raises DisposedError naming the tensor
    copy = copies.get(id(x))
    if copy is None:
        data = x._data if isinstance(x, Tensor) else x
        copy = copies[id(x)] = Tensor(np.array(data, copy=True), getattr(x, "name", None))
    return copy


_WRAPPERS = ("grad", "grads", "value_and_grad", "value_and_grads", "jacobian", "hessian")


def _inner(fn):
    """The user's function inside a ``tv.grad``-style wrapper (its closure's ``f``), or None."""
    qual = getattr(fn, "__qualname__", "")
    code = getattr(fn, "__code__", None)
    if code is None or qual.split(".<locals>")[0] not in _WRAPPERS or "f" not in code.co_freevars:
        return None
    return fn.__closure__[code.co_freevars.index("f")].cell_contents


def display_name(fn) -> str:
    """``grad_loss`` for ``tv.grad(loss)``; the function's name otherwise."""
    inner = _inner(fn)
    if inner is not None:
        return f"{fn.__qualname__.split('.<locals>')[0]}_{display_name(inner)}"
    name = getattr(fn, "__name__", type(fn).__name__)
    return "f" if name == "<lambda>" else name


def _param_names(fn, n: int) -> list:
    """A name per positional argument: the user's function's parameters where it is wrapped."""
    target = _inner(fn) or fn
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), "arg")
    return [names[i] if i < len(names) else f"{star}{i}" for i in range(n)]
