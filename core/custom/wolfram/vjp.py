"""What runs when a gradient flows through a ``CompiledLayer`` node (``compiled_layer.py``
records it): ``gradient='auto'`` re-runs the layer's numpy code through core ops on a tape
(checked once per shape against the compiled function) and differentiates that, so higher
order works; an explicit gradient is compiled code, run in the layer's mode, its result's
shape and dtype checked, and not differentiable again."""

from __future__ import annotations

import functools

import numpy as np

from ... import ops
from ...autodiff.tape import Tape
from ...engine import dispatch as engine
from ...registry.gradients import GradConfig
from ...registry.validation import AutoDiffError, GradientError
from ...tensors import recording
from ...tensors.tensor import Tensor

__all__ = ["KERNEL", "grad_fn", "check_traceable"]

KERNEL = "CompiledLayer"


def grad_fn(layer, dy, saved, attrs, *, mode, checked):
    if layer.gradient == "auto":
        return {"x": lambda: auto_dx(layer, saved[0], dy, mode)}
    return {"x": lambda: explicit_dx(layer, saved, dy, mode, checked)}


def traced_forward(layer, x: Tensor, mode: str) -> Tensor:
    from ...backends.numba.trace import trace  # loads numba: only when a layer is traced

    where = f"CompiledLayer {layer.name!r} ({layer.py_func.__name__})"
    if mode == "wrap":
        y = trace(layer.py_func, ops.reshape(x, (1,) + x.shape), False, where)
        y = ops.reshape(y, y.shape[1:])
    else:
        y = trace(layer.py_func, x, mode == "map", where)
    return ops.cast(y, x.dtype) if y.dtype != x.dtype else y


def check_traceable(layer, x: Tensor, mode: str) -> None:
    key = (x.shape, mode)
    if key in layer._traced:
        return
    with recording.no_grad():
        traced = traced_forward(layer, x, mode).numpy()
    compiled = layer._forward(x._array, mode, layer._checked())
    tol = 1e-4 if x.dtype == np.float32 else 1e-9
    if traced.shape != compiled.shape or not np.allclose(
        traced, compiled, rtol=tol, atol=tol, equal_nan=True
    ):
        fn = layer.py_func.__name__
        what = (
            f"shape {traced.shape} instead of {compiled.shape}"
            if traced.shape != compiled.shape
            else f"values up to {float(np.nanmax(np.abs(traced - compiled))):.3g} away"
        )
        raise AutoDiffError(
            f"CompiledLayer {layer.name!r}: gradient='auto' re-runs {fn}'s numpy code "
            f"through tapeviz ops, and on this input ({mode} mode, shape {x.shape}) that "
            f"gave {what} from the compiled {fn}. {fn} itself is fine: this is a "
            "construct tapeviz's tracer gets wrong. Pass an explicit gradient=... "
            "(a function (x, dy) or (x, dy, y)); a report of the construct helps."
        )
    layer._traced.add(key)


def auto_dx(layer, x: Tensor, dy: Tensor, mode: str) -> Tensor:
    with Tape() as tape:  # the ops also reach outer tapes: higher order works
        tape.watch(x)
        y = traced_forward(layer, x, mode)
    return tape.gradient(y, x, output_gradients=dy, unconnected_gradients="zero")


def explicit_dx(layer, saved, dy: Tensor, mode: str, checked: bool) -> Tensor:
    x = saved[0]
    args = [x._array, dy._array] + ([saved[1]._array] if layer.grad_arity == 3 else [])
    if mode == "map":
        if x.shape[0]:  # the loop writes into a float array: check one example's dtype
            check_dx_dtype(layer, layer._rt.call_gradient([a[0] for a in args], checked), x)
        dx = layer._rt.map_gradient(args, checked)
    elif mode == "wrap":
        dx = layer._rt.call_gradient([a[None] for a in args], checked)[0]
    else:
        dx = layer._rt.call_gradient(args, checked)
    dx = check_dx(layer, dx, x)
    out = Tensor(dx)
    grad = GradConfig(f"{KERNEL}Gradient", functools.partial(no_second_order, layer))
    engine.record(layer._prims[1], {"x": x, "dy": dy}, (out,), {"mode": mode}, grad, [])
    return out


def check_dx(layer, dx, x: Tensor) -> np.ndarray:
    gname = layer._rt.grad_name
    dx = np.asarray(dx)
    if dx.shape != x.shape:
        raise GradientError(
            f"CompiledLayer {layer.name!r}: gradient function {gname} returned shape "
            f"{dx.shape}, expected the input's shape {x.shape}"
        )
    check_dx_dtype(layer, dx, x)
    return dx.astype(x.dtype, copy=False)


def check_dx_dtype(layer, dx, x: Tensor) -> None:
    """An int or bool gradient is an error in every mode (the per-example loop would
    otherwise truncate it silently into its float output)."""
    dx = np.asarray(dx)
    if dx.dtype.kind != "f":
        raise GradientError(
            f"CompiledLayer {layer.name!r}: gradient function {layer._rt.grad_name} "
            f"returned dtype {dx.dtype}, expected a float type (the input is {x.dtype})"
        )


def no_second_order(layer, dy, saved, attrs):
    raise layer._prims[0].once_only_error(
        f"CompiledLayer {layer.name!r} has an explicit gradient, compiled code no tape can "
        "see into",
        "Use gradient='auto' for higher order.",
    )
