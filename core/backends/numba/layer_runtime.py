"""Compiling and running a ``CompiledLayer``'s functions with numba; its info report.

``LayerRuntime`` jits the forward and gradient functions lazily (one dispatcher per
bounds-check setting), builds the parallel loops that map a per-example function over a
batch, times every compilation apart from run time, and turns numba's errors into errors
that name the layer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np
from numba.core.errors import NumbaError

from ...display import HtmlRepr

__all__ = ["LayerRuntime", "LayerInfo", "layer_info", "declared_rank"]


def declared_rank(func):
    """The array rank an explicitly typed numba dispatcher takes (Wolfram's typed function),
    or None."""
    sigs = getattr(func, "signatures", None) or []
    if not sigs or getattr(func, "_can_compile", True):
        return None
    ranks = {getattr(s[0], "ndim", None) for s in sigs if len(s) == 1}
    return ranks.pop() if len(ranks) == 1 else None


def _map1(f, parallel):
    @numba.njit(parallel=parallel, boundscheck=not parallel)
    def run(x, out):
        for i in numba.prange(x.shape[0]):
            out[i] = f(x[i])
        return out

    return run


def _map2(g, parallel):
    @numba.njit(parallel=parallel, boundscheck=not parallel)
    def run(x, dy, out):
        for i in numba.prange(x.shape[0]):
            out[i] = g(x[i], dy[i])
        return out

    return run


def _map3(g, parallel):
    @numba.njit(parallel=parallel, boundscheck=not parallel)
    def run(x, dy, y, out):
        for i in numba.prange(x.shape[0]):
            out[i] = g(x[i], dy[i], y[i])
        return out

    return run


class LayerRuntime:
    """The numba side of one layer: dispatchers, mapping loops, compile times."""

    def __init__(self, layer_name, py_func, gradient):
        self.layer = layer_name
        self.name = py_func.__name__
        self.py_func = py_func
        self.grad_py = getattr(gradient, "py_func", gradient) if callable(gradient) else None
        self.grad_name = getattr(self.grad_py, "__name__", "-")
        self._jit: dict = {}  # (role, checked) -> dispatcher
        self.compile_s: dict = {}  # (role, signature) -> seconds

    def dispatcher(self, role: str, checked: bool):
        key = (role, checked)
        if key not in self._jit:
            py = self.py_func if role in ("forward", "map") else self.grad_py
            inner = numba.njit(boundscheck=checked)(py)
            if role == "map":
                inner = _map1(inner, parallel=not checked)
            elif role == "map_grad2":
                inner = _map2(inner, parallel=not checked)
            elif role == "map_grad3":
                inner = _map3(inner, parallel=not checked)
            self._jit[key] = inner
        return self._jit[key]

    def _run(self, role, checked, args):
        disp = self.dispatcher(role, checked)
        sig = tuple(numba.typeof(a) for a in args)
        try:
            if sig not in disp.overloads:
                start = time.perf_counter()
                disp.compile(sig)
                label = ", ".join(str(t) for t in sig)
                self.compile_s[(role, label)] = time.perf_counter() - start
            return disp(*args)
        except IndexError as e:
            fn = self.name if role in ("forward", "map") else self.grad_name
            raise IndexError(
                f"CompiledLayer {self.layer!r}: {fn} indexed out of bounds on inputs of shape "
                f"{[a.shape for a in args]} ({e}); with boundscheck off this is undefined "
                "behaviour (as in Wolfram's CompiledLayer)"
            ) from None
        except NumbaError as e:
            fn = self.name if role in ("forward", "map") else self.grad_name
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise TypeError(
                f"CompiledLayer {self.layer!r}: numba cannot compile {fn} for "
                f"{', '.join(str(t) for t in sig)}: {first}"
            ) from e

    def call(self, x, checked) -> np.ndarray:
        return self._output(self._run("forward", checked, (x,)), x, self.name)

    def map_forward(self, x, example_out_shape, checked) -> np.ndarray:
        out = np.empty((x.shape[0],) + tuple(example_out_shape), x.dtype)
        return self._run("map", checked, (x, out))

    def call_gradient(self, args, checked) -> np.ndarray:
        return np.asarray(self._run("grad", checked, tuple(args)))

    def map_gradient(self, args, checked) -> np.ndarray:
        out = np.empty(args[0].shape, args[0].dtype)
        role = "map_grad2" if len(args) == 2 else "map_grad3"
        return self._run(role, checked, (*args, out))

    def _output(self, y, x, fn) -> np.ndarray:
        y = np.asarray(y)
        if y.dtype.kind not in "fiub":
            raise TypeError(
                f"CompiledLayer {self.layer!r}: {fn} must return a numeric array, got {y.dtype}"
            )
        return y.astype(x.dtype, copy=False)  # the input's float type, as Wolfram's layer

    def signatures(self) -> list:
        return [f"{role}: {label}" for (role, label) in self.compile_s]


@dataclass
class LayerInfo(HtmlRepr):
    """``CompiledLayer.info()``: what the layer is and what it has compiled."""

    name: str
    function: str
    gradient: str
    gradient_function: str
    input_rank: int | None
    batch: bool
    boundscheck: str
    shapes: list = field(default_factory=list)  # (func's input shape, output shape, dtype)
    signatures: list = field(default_factory=list)
    compile_s: float = 0.0

    def rows(self) -> list:
        shapes = "; ".join(f"{i} -> {o} ({d})" for i, o, d in self.shapes) or "not called yet"
        return [
            ("function", self.function),
            ("gradient", f"{self.gradient} {self.gradient_function}".strip()),
            ("input rank", "any (whole input)" if self.input_rank is None else self.input_rank),
            ("applies to", self._applies()),
            ("boundscheck", self.boundscheck),
            ("shapes seen (what func gets -> returns)", shapes),
            ("compiled signatures", "; ".join(self.signatures) or "none yet"),
            ("compile time", f"{self.compile_s:.3f} s"),
        ]

    def _applies(self) -> str:
        if self.input_rank is None:
            return "the whole input"
        if self.batch:
            return "a whole batch (one example runs as a batch of one)"
        return "one example (mapped over a batch in parallel)"

    def __str__(self) -> str:
        lines = [f"CompiledLayer {self.name!r}"]
        lines += [f"  {k}: {v}" for k, v in self.rows()]
        return "\n".join(lines)

    __repr__ = __str__


def layer_info(layer) -> LayerInfo:
    runtime = layer._rt
    check = {None: "follows core.settings.boundscheck", True: "on", False: "off"}
    shapes = [(tuple(ex), tuple(out), str(dt)) for (ex, dt, _), out in layer._shapes.items()]
    return LayerInfo(
        name=layer.name,
        function=runtime.name,
        gradient=layer.gradient_mode,
        gradient_function=runtime.grad_name if runtime.grad_py else "",
        input_rank=layer.input_rank,
        batch=layer.batch,
        boundscheck=check[None if layer.boundscheck is None else bool(layer.boundscheck)],
        shapes=shapes,
        signatures=runtime.signatures(),
        compile_s=sum(runtime.compile_s.values()),
    )
