"""The functional API over tapes: grad, grads, value_and_grad(s), variable_grads,
jacobian, hessian, vjp, jvp (TensorFlow.js names, JAX's calling convention).

JAX's convention, for every transform of a function: ``tv.grad(f)(w, x, y)`` passes every
positional argument to ``f``; ``argnums=`` chooses which are differentiated (``grad``:
the first; ``grads``: all, as TensorFlow.js's); an output gradient is the keyword ``dy=``.
A call in the old ``(x, dy)`` form is refused by name."""

from __future__ import annotations

import inspect
from collections import namedtuple

import numpy as np

from .. import ops
from ..registry.validation import check_dy
from ..tensors.arrays import to_array
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor
from .tape import Tape

__all__ = [
    "grad",
    "grads",
    "value_and_grad",
    "value_and_grads",
    "variable_grads",
    "jacobian",
    "hessian",
    "vjp",
    "jvp",
]

VariableGrads = namedtuple("VariableGrads", ["value", "grads"])


def _input(x, fn_name: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    arr = to_array(x, where=fn_name)
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float32)
    return Tensor(arr)


def _name(f) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _value_and_grads(f, args, wrt, dy, api: str):
    """``f(*args)`` and its gradients with respect to ``args[i]`` for ``i`` in ``wrt``; the
    other arguments reach ``f`` as given (JAX's convention)."""
    where = f"{api}({_name(f)})"
    args = list(args)
    for i in wrt:
        args[i] = _input(args[i], where)
    xs = [args[i] for i in wrt]
    floats = [x for x in xs if x.dtype.kind == "f"]  # an int or bool argument: gradient 0
    with Tape() as tape:
        tape.watch(floats)
        y = f(*args)
    if not isinstance(y, Tensor):
        raise TypeError(f"{where}: the function must return a Tensor, got {type(y).__name__}")
    check_dy(y, dy, where, api)
    g = iter(tape.gradient(y, floats, output_gradients=dy, unconnected_gradients="zero"))
    return y, [next(g) if x.dtype.kind == "f" else ops.zeros_like(x) for x in xs]


def _wrt(argnums, args, f, api: str) -> tuple[int, ...]:
    """The argument positions ``argnums`` names (an int or a sequence of ints; None: all),
    checked against the call, and the call itself checked for the old ``(x, dy)`` form."""
    where = f"{api}({_name(f)})"
    _refuse_old_dy(f, args, where, api)
    n = len(args)
    if argnums is None:
        return tuple(range(n))
    many = not isinstance(argnums, int)
    nums = tuple(argnums) if many else (argnums,)
    for i in nums:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"{where}: argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -n <= i < n:
            raise ValueError(
                f"{where}: argnums={argnums!r} names argument {i}, but the call passed {n} "
                "positional argument(s)"
            )
    wrt = tuple(i % n for i in nums)
    if len(set(wrt)) != len(wrt):
        raise ValueError(f"{where}: argnums={argnums!r} names an argument twice")
    return wrt


def _refuse_old_dy(f, args, where: str, api: str) -> None:
    """Before JAX's convention, ``tv.grad(f)(x, dy)`` took a second positional argument as
    the output gradient. Now it goes to ``f``; a call that passes ``f`` one argument more than
    it takes is told so by name, rather than ``f``'s own "takes 1 positional argument"."""
    try:
        sig = inspect.signature(f)
        sig.bind(*args)
    except (TypeError, ValueError):
        if len(args) < 2:
            return
        try:
            sig.bind(*args[:-1])
        except (TypeError, ValueError, NameError):
            return
        raise TypeError(
            f"{where}: {_name(f)} takes {len(args) - 1} positional argument(s) but the call "
            f"passed {len(args)}. tv.{api} follows JAX's convention: every positional argument "
            f"goes to {_name(f)}, argnums= chooses which are differentiated, and an output "
            f"gradient is the keyword dy= (tv.{api}(f)(x, dy=dy), not tv.{api}(f)(x, dy))"
        ) from None


def grad(f, argnums=0):
    """``g(*args, dy=None)``: the gradient of ``f(*args)`` with respect to ``args[argnums]``
    (a tuple of them for a tuple ``argnums``), JAX's convention: every positional argument
    goes to ``f``, and ``dy`` (keyword only) is the output gradient (ones by default, for
    a scalar or any shape).

    Example:
        >>> import tapeviz as tv
        >>> tv.grad(lambda x: (x * x).sum())(tv.tensor([1.0, 2.0])).numpy()
        array([2., 4.], dtype=float32)
        >>> loss = lambda w, x, y: tv.sum(tv.square(x * w - y))
        >>> tv.grad(loss)(tv.tensor(2.0), tv.tensor([1.0, 2.0]), tv.tensor([1.0, 1.0])).item()
        14.0
    """
    many = not isinstance(argnums, int)

    def g(*args, dy=None):
        wrt = _wrt(argnums, args, f, "grad")
        gs = _value_and_grads(f, args, wrt, dy, "grad")[1]
        return tuple(gs) if many else gs[0]

    return g


def grads(f, argnums=None):
    """``g(*args, dy=None)``: the gradients of ``f`` with respect to every argument (a list;
    TensorFlow.js's ``grads``, which also takes the arguments as one list), or to those
    ``argnums`` names.

    Example:
        >>> import tapeviz as tv
        >>> ga, gb = tv.grads(lambda a, b: tv.sum(a * b))([1.0, 2.0], [3.0, 4.0])
        >>> ga.numpy(), gb.numpy()
        (array([3., 4.], dtype=float32), array([1., 2.], dtype=float32))
    """

    def g(*args, dy=None):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        wrt = _wrt(argnums, args, f, "grads")
        return _value_and_grads(f, args, wrt, dy, "grads")[1]

    return g


def value_and_grad(f, argnums=0):
    """``g(*args, dy=None) -> (value, grad)``, with ``grad``'s convention.

    Example:
        >>> import tapeviz as tv
        >>> value, g = tv.value_and_grad(lambda x: tv.sum(x * x))(tv.tensor([3.0]))
        >>> value.item(), g.numpy()
        (9.0, array([6.], dtype=float32))
    """
    many = not isinstance(argnums, int)

    def g(*args, dy=None):
        wrt = _wrt(argnums, args, f, "value_and_grad")
        y, gs = _value_and_grads(f, args, wrt, dy, "value_and_grad")
        return y, (tuple(gs) if many else gs[0])

    return g


def value_and_grads(f, argnums=None):
    """``g(*args, dy=None) -> (value, [grads])``, with ``grads``' convention.

    Example:
        >>> import tapeviz as tv
        >>> value, (ga, gb) = tv.value_and_grads(lambda a, b: tv.sum(a * b))([2.0], [5.0])
        >>> value.item(), ga.item(), gb.item()
        (10.0, 5.0, 2.0)
    """

    def g(*args, dy=None):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        wrt = _wrt(argnums, args, f, "value_and_grads")
        return _value_and_grads(f, args, wrt, dy, "value_and_grads")

    return g


def variable_grads(f, var_list=None) -> VariableGrads:
    """Run ``f()`` (a scalar loss) and differentiate it with respect to trainable variables.

    Example:
        >>> import tapeviz as tv
        >>> w = tv.variable([1.0, 2.0], name="w")
        >>> value, g = tv.variable_grads(lambda: tv.sum(w * w))
        >>> g["w"].numpy()
        array([2., 4.], dtype=float32)

    Returns:
        ``(value, grads)`` with ``grads`` a dict with one entry per variable: keyed by its
        name (its id when it has none; ``"name (id N)"`` when several variables share the
        name, as a deep-copied model's do), and indexable by the variable itself too
        (``grads[w]``).
    """
    with Tape() as tape:
        if var_list is not None:
            tape.watch(list(var_list))
        y = f()
    if not isinstance(y, Tensor) or y.size != 1:
        raise ValueError(f"variable_grads({_name(f)}): f must return a scalar Tensor, got {y!r}")
    if var_list is None:
        var_list = [t for t in tape.watched.values() if isinstance(t, Variable) and t.trainable]
    if not var_list:
        raise ValueError(f"variable_grads({_name(f)}): f uses no trainable variable")
    var_list = list(var_list)
    gs = tape.gradient(y, var_list)
    return VariableGrads(y, GradsByVariable(var_list, gs))


class GradsByVariable(dict):
    """``variable_grads``' gradients: a dict keyed by variable name (one entry per variable,
    never two sharing a key: a name several variables carry becomes ``"name (id N)"``),
    that a ``Variable`` indexes too."""

    def __init__(self, var_list, grads):
        counts: dict = {}
        for v in var_list:
            counts[v.name] = counts.get(v.name, 0) + 1
        self._keys = {}
        for v, g in zip(var_list, grads):
            key = v.id if not v.name else v.name if counts[v.name] == 1 else f"{v.name} (id {v.id})"
            self._keys[v.id] = key
            self[key] = g

    def __getitem__(self, key):
        if isinstance(key, Tensor):
            if key.id not in self._keys:
                raise KeyError(f"variable_grads: {key._label()} is not among the variables")
            key = self._keys[key.id]
        return super().__getitem__(key)


def vjp(f, *primals):
    """``(f(*primals), vjp_fn)``; ``vjp_fn(dy)`` returns one gradient per primal.

    Example:
        >>> import tapeviz as tv
        >>> y, vjp_fn = tv.vjp(lambda x: x * x, tv.tensor([1.0, 2.0]))
        >>> vjp_fn(tv.tensor([1.0, 10.0]))[0].numpy()
        array([ 2., 40.], dtype=float32)
    """
    xs = [_input(p, f"vjp({_name(f)})") for p in primals]
    tape = Tape(persistent=True)
    with tape:
        tape.watch(xs)
        y = f(*xs)

    def vjp_fn(dy):
        return tape.gradient(y, xs, output_gradients=dy, unconnected_gradients="zero")

    return y, vjp_fn


def jvp(f, primals, tangents):
    """Forward mode: ``(f(*primals), J @ tangents)``, by differentiating a VJP (the
    double-VJP trick), so it works for every differentiable op. ``f`` may return a tuple
    or list of tensors: the tangents come back in the same structure (an int or bool
    output's tangent is zeros, as it cannot change).

    Example:
        >>> import tapeviz as tv
        >>> y, jv = tv.jvp(lambda x: x * x, [tv.tensor([1.0, 2.0])], [tv.tensor([1.0, 1.0])])
        >>> jv.numpy()
        array([2., 4.], dtype=float32)
    """
    primals = [_input(p, f"jvp({_name(f)})") for p in primals]
    tangents = [_input(t, f"jvp({_name(f)})") for t in tangents]
    if len(primals) != len(tangents):
        raise ValueError(f"jvp({_name(f)}): {len(primals)} primals but {len(tangents)} tangents")
    for p, t in zip(primals, tangents):
        if p.shape != t.shape:
            raise ValueError(f"jvp({_name(f)}): tangent shape {t.shape} != primal shape {p.shape}")
    with Tape() as outer:
        with Tape() as inner:
            inner.watch(primals)
            y = f(*primals)
        ys = _outputs(y, f"jvp({_name(f)})")
        live = [o for o in ys if o.dtype.kind == "f"]
        us = [Tensor(np.zeros(o.shape, o.dtype)) for o in live]
        outer.watch(us)
        total = None
        if live:
            gs = inner.gradient(live, primals, output_gradients=us, unconnected_gradients="zero")
            for g, t in zip(gs, tangents):
                term = ops.sum(g * t)
                total = term if total is None else total + term
    outs = iter(outer.gradient(total, us, unconnected_gradients="zero") if live else ())
    jv = [next(outs) if o.dtype.kind == "f" else ops.zeros_like(o) for o in ys]
    return y, (jv[0] if isinstance(y, Tensor) else type(y)(jv))


def _outputs(y, where: str) -> list:
    """The tensors of a function's result: one Tensor, or a tuple/list of them."""
    ys = [y] if isinstance(y, Tensor) else list(y) if isinstance(y, (tuple, list)) else None
    if not ys or not all(isinstance(o, Tensor) for o in ys):
        raise TypeError(
            f"{where}: the function must return a Tensor or a tuple/list of Tensors, got "
            f"{type(y).__name__}"
        )
    return ys


def jacobian(f, argnums=0):
    """``J(*args)``: the Jacobian of ``f(*args)`` with respect to ``args[argnums]`` (an int),
    shape ``f(*args).shape + args[argnums].shape``; the other arguments go to ``f`` as given.

    Example:
        >>> import tapeviz as tv
        >>> tv.jacobian(lambda x: x * x)(tv.tensor([1.0, 2.0])).numpy()
        array([[2., 0.],
               [0., 4.]], dtype=float32)
    """
    _one_argnum(argnums, f, "jacobian")

    def j(*args):
        (i,) = _wrt(argnums, args, f, "jacobian")
        args = list(args)
        x = args[i] = _input(args[i], f"jacobian({_name(f)})")
        with Tape(persistent=True) as tape:
            tape.watch(x)
            y = f(*args)
        rows = []
        for k in range(y.size):
            e = np.zeros(y.size, y.dtype)
            e[k] = 1
            (g,) = tape.gradient(
                y, [x], output_gradients=Tensor(e.reshape(y.shape)), unconnected_gradients="zero"
            )
            rows.append(g)
        if not rows:
            return Tensor(np.zeros(y.shape + x.shape, x.dtype))
        return ops.reshape(ops.stack(rows), y.shape + x.shape)

    return j


def hessian(f, argnums=0):
    """``H(*args)``: the Hessian of a scalar ``f(*args)`` with respect to ``args[argnums]``
    (an int), shape ``x.shape + x.shape``; the other arguments go to ``f`` as given.

    Example:
        >>> import tapeviz as tv
        >>> tv.hessian(lambda x: tv.sum(x**3))(tv.tensor([1.0, 2.0])).numpy()
        array([[ 6.,  0.],
               [ 0., 12.]], dtype=float32)
    """
    _one_argnum(argnums, f, "hessian")
    g = grad(f, argnums)
    g.__name__ = f"grad({_name(f)})"
    return jacobian(g, argnums)


def _one_argnum(argnums, f, api: str) -> None:
    if isinstance(argnums, bool) or not isinstance(argnums, int):
        raise TypeError(
            f"{api}({_name(f)}): argnums must be one int here, got {argnums!r} (a tuple of "
            f"arguments is not supported by tv.{api}; call it once per argument)"
        )
