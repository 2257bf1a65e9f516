"""Wolfram's ``CompiledLayer``: a layer from a function numba compiles, one array in and out.

How a layer applies ``func`` (``input_rank`` is the rank of one example):

* ``input_rank=None``: ``func`` gets the whole input, whatever its rank.
* per-example function (``batch=False``): an input of rank ``input_rank`` is one example,
  ``func(x)``; an input of rank ``input_rank + 1`` is a batch and ``func`` is mapped over its
  examples by a compiled parallel loop.
* batch-level function (``batch=True``, or a numba signature declaring rank
  ``input_rank + 1``, Wolfram's rule): ``func`` gets the whole batch, so examples can
  interact; a single example is run as a batch of one. ``func`` must keep the batch size.

The output shape is inferred by running ``func`` on a test input of the input's shape
(``np.random.default_rng(0).standard_normal(shape)``); an output of another shape later (a
shape that depends on values) is an error. The output has
the input's float type. Bounds: checked by default (``core.settings.boundscheck`` is True), so
an out-of-range index raises an ``IndexError`` naming the layer instead of crashing the
process; ``boundscheck=False`` (or the setting False) is the explicit fast opt-in, where an
out-of-range index is undefined behaviour as in Wolfram. Checked batches run serially, not in
a parallel loop (``bench/bench_numba.py`` measures the cost).
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ...engine import dispatch as engine
from ...registry.gradients import GradConfig
from ...registry.validation import AutoDiffError
from ...tensors import recording
from ...tensors.tensor import Tensor
from ...tensors.tracing import refuse_opaque
from ..builder import Primitive, as_input
from .vjp import KERNEL, check_traceable, grad_fn

__all__ = ["CompiledLayer", "AutoDiffError"]


def _runtime():
    """The numba side (numba is optional for core: only a CompiledLayer needs it)."""
    try:
        from ...backends.numba import layer_runtime
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "CompiledLayer needs numba: pip install 'tapeviz[numba]' (or numba)"
        ) from e
    return layer_runtime


class CompiledLayer:
    """A layer computing ``func`` (a numba ``@njit`` function or plain Python numba compiles).

    Args:
        func: one array in, one array out.
        gradient: ``"auto"`` (differentiate ``func``'s numpy code by tracing it through core
            ops), ``None`` (not differentiable), or a function ``(x, dy)`` or ``(x, dy, y)``
            returning dx (``y``: the output the forward computed); it is compiled too.
        input_rank: the rank of one example (see the module docstring); None: no batches.
        boundscheck: True/False, or None to follow ``core.settings.boundscheck`` (True unless
            changed: False is the fast, unchecked opt-in).
        name: the node label (default: ``func``'s name).
        batch: ``func`` works on a whole batch (needs ``input_rank``).

    Example:
        >>> import numpy as np, tapeviz as tv
        >>> reverse = tv.CompiledLayer(lambda x: x[::-1], input_rank=1, batch=True)
        >>> reverse(tv.tensor([1.0, 2.0, 3.0, 4.0])).numpy()  # one example: unchanged
        array([1., 2., 3., 4.], dtype=float32)
        >>> reverse(tv.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()  # a batch: reversed
        array([[3., 4.],
               [1., 2.]], dtype=float32)
    """

    def __init__(
        self, func, gradient="auto", input_rank=None, boundscheck=None, name=None, batch=None
    ):
        self.py_func = _python_function(func)
        fname = self.py_func.__name__
        self.name = name or (fname if fname != "<lambda>" else "compiled_layer")
        if input_rank is not None and (not isinstance(input_rank, int) or input_rank < 0):
            raise ValueError(f"CompiledLayer {self.name!r}: input_rank must be an int >= 0")
        self.input_rank = input_rank
        rt = _runtime()
        declared = rt.declared_rank(func)
        if batch is None:
            batch = declared is not None and input_rank is not None and declared == input_rank + 1
        if batch and input_rank is None:
            raise ValueError(
                f"CompiledLayer {self.name!r}: a batch-level function needs input_rank "
                "(the rank of one example)"
            )
        self.batch = bool(batch)
        self.boundscheck = boundscheck
        self.gradient, self.grad_arity = _parse_gradient(gradient, self.name)
        self._rt = rt.LayerRuntime(self.name, self.py_func, self.gradient)
        self._shapes: dict = {}  # (example shape, dtype) -> example output shape
        self._traced: set = set()
        # its nodes' primitives: the layer (its forward re-runs it; an explicit gradient is
        # compiled code, not differentiable again), and that explicit gradient's node
        explicit = self.gradient not in (None, "auto")
        self._prims = (
            Primitive(
                KERNEL,
                label=self.name,
                kind=KERNEL,
                forward=self,
                once_only=explicit,
                why_not=None
                if self.gradient is not None
                else (
                    f"CompiledLayer {self.name!r} was built with gradient=None; pass "
                    "gradient='auto' or a function (x, dy) / (x, dy, y)"
                ),
            ),  # fmt: skip
            Primitive(
                f"{KERNEL}Gradient", label=f"{self.name} gradient", kind=KERNEL, once_only=True
            ),
        )

    # --- calling ------------------------------------------------------------------------
    def __call__(self, x) -> Tensor:
        refuse_opaque("CompiledLayer", self.name)  # tv.jit cannot see its numpy/compiled code
        x = as_input(x, f"CompiledLayer {self.name!r}: input")
        if x.dtype.kind != "f":
            raise TypeError(
                f"CompiledLayer {self.name!r}: expected a float32 or float64 input, got {x.dtype}"
            )
        mode = self._mode(x.ndim)
        checked = self._checked()
        y = Tensor(self._forward(x._array, mode, checked))
        if recording.recording():
            self._record(x, y, mode, checked)
        return y

    def parameters(self) -> list:
        """A CompiledLayer has no trainable parameters."""
        return []

    def _checked(self) -> bool:
        return engine.settings.boundscheck if self.boundscheck is None else bool(self.boundscheck)

    def _mode(self, ndim: int) -> str:
        r = self.input_rank
        if r is None:
            return "whole"
        if ndim not in (r, r + 1):
            raise ValueError(
                f"CompiledLayer {self.name!r}: expected an input of rank {r} (one example) or "
                f"{r + 1} (a batch), got rank {ndim}"
            )
        if ndim == r:
            return "wrap" if self.batch else "whole"
        return "batch" if self.batch else "map"

    def _forward(self, x: np.ndarray, mode: str, checked: bool) -> np.ndarray:
        example = x.shape[1:] if mode == "map" else x.shape
        expected = self._infer(example, x.dtype, mode, checked)
        if mode == "map":
            y = self._rt.map_forward(x, expected, checked)
            expected = (x.shape[0],) + tuple(expected)
        elif mode == "wrap":
            y = self._rt.call(x[None], checked)
            self._check_batch(y, 1)
            y = y[0]
        else:
            y = self._rt.call(x, checked)
            if mode == "batch":
                self._check_batch(y, x.shape[0])
        if y.shape != expected:
            raise ValueError(
                f"CompiledLayer {self.name!r}: the output shape depends on the input's values: "
                f"a test input of shape {example} gave output shape {expected}, this input "
                f"gave {y.shape}; the output shape must depend on the input shape only"
            )
        return y

    def _infer(self, example, dtype, mode, checked):
        key = (example, np.dtype(dtype), mode)
        if key not in self._shapes:
            test = np.random.default_rng(0).standard_normal(example).astype(dtype)
            if mode == "wrap":
                y = self._rt.call(test[None], checked)
                self._check_batch(y, 1)
                y = y[0]
            else:
                y = self._rt.call(test, checked)
            self._shapes[key] = y.shape
        return self._shapes[key]

    def _check_batch(self, y, n):
        if y.ndim == 0 or y.shape[0] != n:
            raise ValueError(
                f"CompiledLayer {self.name!r}: a batch-level function must keep the batch "
                f"dimension: a batch of {n} gave an output of shape {y.shape}"
            )

    # --- recording and gradients ----------------------------------------------------------
    def _record(self, x, y, mode, checked):
        saved = []
        if self.gradient is not None:
            saved.append(("input", "x", x))
        if self.grad_arity == 3:
            saved.append(("output", 0, y))
        if self.gradient == "auto":
            check_traceable(self, x, mode)
        grad = None  # gradient=None: not differentiable (reverse mode and audit say so)
        if self.gradient is not None:
            grad = GradConfig(KERNEL, functools.partial(grad_fn, self, mode=mode, checked=checked))
        attrs = {
            "mode": mode,
            "input_rank": self.input_rank,
            "batch": self.batch,
            "gradient": self.gradient_mode,
        }
        engine.record(self._prims[0], {"x": x}, (y,), attrs, grad, saved)

    # --- reporting ----------------------------------------------------------------------
    @property
    def gradient_mode(self) -> str:
        if self.gradient is None:
            return "none"
        if self.gradient == "auto":
            return "auto"
        return "explicit (x, dy, y)" if self.grad_arity == 3 else "explicit (x, dy)"

    def info(self):
        """A report on the layer: shapes, ranks, dtypes, gradient mode, compiled signatures
        and compile time (a ``LayerInfo``: fields and a text repr; tapeviz shows it as a table).

        Example:
            >>> import numpy as np, tapeviz as tv
            >>> layer = tv.CompiledLayer(np.tanh, input_rank=1)
            >>> _ = layer(tv.tensor(np.zeros((2, 3))))
            >>> layer.info().shapes
            [((3,), (3,), 'float64')]
        """
        return _runtime().layer_info(self)

    def __repr__(self) -> str:
        return (
            f"CompiledLayer({self.name!r}, gradient={self.gradient_mode}, "
            f"input_rank={self.input_rank}, batch={self.batch})"
        )


def _python_function(func):
    """The Python function numba compiles (a dispatcher's ``py_func``; a numpy ufunc such as
    ``np.tanh`` is wrapped in one)."""
    if isinstance(func, np.ufunc):
        ufunc = func

        def apply(x):
            return ufunc(x)

        apply.__name__ = apply.__qualname__ = func.__name__
        return apply
    py = getattr(func, "py_func", func)
    if not inspect.isfunction(py):
        raise TypeError(
            f"CompiledLayer: func must be a Python function or a numba @njit function, got "
            f"{type(func).__name__}"
        )
    return py


def _parse_gradient(gradient, name):
    if gradient is None or (isinstance(gradient, str) and gradient == "auto"):
        return gradient, 0
    if isinstance(gradient, str) or not inspect.isfunction(getattr(gradient, "py_func", gradient)):
        raise TypeError(
            f"CompiledLayer {name!r}: gradient must be 'auto', None or a function (x, dy) or "
            f"(x, dy, y), got {gradient!r}"
        )
    params = inspect.signature(getattr(gradient, "py_func", gradient)).parameters.values()
    arity = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if arity not in (2, 3):
        raise TypeError(
            f"CompiledLayer {name!r}: the gradient function must take (x, dy) or (x, dy, y), "
            f"got {arity} arguments"
        )
    return gradient, arity
