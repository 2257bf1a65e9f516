"""Layers: Dense, Conv2D, pooling, Flatten, Dropout, Lambda (NHWC inputs, HWIO filters)."""

from __future__ import annotations

from .. import ops
from ..ops.matrix import fused_matmul
from ..ops.nn import dropout_drawing
from ..tensors.tensor import Tensor
from .activations import get_activation
from .init import generator
from .module import Module
from .naming import snake_case, unique_name

__all__ = ["Dense", "Conv2D", "MaxPool2D", "AvgPool2D", "Flatten", "Dropout", "Lambda"]


def _positive_int(value, what: str, layer: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{layer}: {what} must be a positive int, got {value!r}")
    return value


# activations _FusedMatMul applies itself (same bits as the separate op)
_FUSABLE = {ops.relu: "relu", ops.tanh: "tanh", ops.sigmoid: "sigmoid"}


class Dense(Module):
    """Fully connected: ``activation(x @ kernel + bias)``; the input size is found on call.

    Args:
        units: output size.
        activation: None, a name (``"relu"``, ``"tanh"``, ``"softmax"``, ...) or a callable.
        use_bias: add a bias vector.
        kernel_initializer: ``"glorot_uniform"`` (default), ``"he_normal"``, ``"zeros"``, ...
        seed: seed for this layer's initial weights (default: ``tv.nn.set_seed``'s generator).
        name: layer name (unique by default).

    Example:
        >>> import tapeviz as tv
        >>> layer = tv.nn.Dense(4, activation="relu")
        >>> layer(tv.ones((2, 3))).shape, layer.kernel.shape
        ((2, 4), (3, 4))
    """

    def __init__(
        self,
        units: int,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        seed=None,
        name=None,
    ):
        super().__init__(name)
        self.units = _positive_int(units, "units", "Dense")
        self.activation = get_activation(activation, "Dense")
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.seed = seed
        self.kernel = self.bias = None

    def build(self, input_shape):
        if len(input_shape) < 2:
            raise ValueError(
                f"Dense {self.name!r}: expected input of rank >= 2 (batch, features), "
                f"got shape {input_shape}"
            )
        shape = (input_shape[-1], self.units)
        self.kernel = self.add_weight("kernel", shape, self.kernel_initializer, seed=self.seed)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), "zeros")

    def check_input(self, x):
        if x.ndim < 2 or x.shape[-1] != self.input_shape[-1]:
            raise ValueError(
                f"Dense {self.name!r}: expected input of shape (..., {self.input_shape[-1]}), "
                f"got {tuple(x.shape)}"
            )

    def forward(self, x):
        act = "linear" if self.activation is None else _FUSABLE.get(self.activation)
        if act is not None and x.ndim == 2:  # one _FusedMatMul node for the whole layer
            return fused_matmul(x, self.kernel, self.bias, act)
        y = ops.matmul(x, self.kernel)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y

    def extra_repr(self):
        act = getattr(self.activation, "__name__", None) if self.activation else None
        return f"{self.units}" + (f", activation={act!r}" if act else "")


class Conv2D(Module):
    """2-D convolution over NHWC input with an HWIO kernel (``tv.conv2d``).

    Args:
        filters: output channels.
        kernel_size: int or (kh, kw).
        strides: int or pair.
        padding: ``"valid"`` or ``"same"``.
        activation: None, a name or a callable.

    Example:
        >>> import tapeviz as tv
        >>> conv = tv.nn.Conv2D(8, 3, padding="same", activation="relu")
        >>> conv(tv.ones((2, 6, 6, 1))).shape, conv.kernel.shape
        ((2, 6, 6, 8), (3, 3, 1, 8))
    """

    def __init__(
        self,
        filters: int,
        kernel_size,
        strides=1,
        padding: str = "valid",
        activation=None,
        use_bias: bool = True,
        seed=None,
        name=None,
    ):
        super().__init__(name)
        self.filters = _positive_int(filters, "filters", "Conv2D")
        ks = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        self.kernel_size = tuple(_positive_int(k, "kernel_size", "Conv2D") for k in ks)
        if padding not in ("valid", "same"):
            raise ValueError(f"Conv2D: padding must be 'valid' or 'same', got {padding!r}")
        self.strides, self.padding = strides, padding
        self.activation = get_activation(activation, "Conv2D")
        self.use_bias, self.seed = use_bias, seed
        self.kernel = self.bias = None

    def build(self, input_shape):
        if len(input_shape) != 4:
            raise ValueError(
                f"Conv2D {self.name!r}: expected input of rank 4 (batch, height, width, "
                f"channels), got shape {input_shape}"
            )
        shape = (*self.kernel_size, input_shape[-1], self.filters)
        self.kernel = self.add_weight("kernel", shape, "glorot_uniform", seed=self.seed)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), "zeros")

    def check_input(self, x):
        if x.ndim != 4 or x.shape[-1] != self.input_shape[-1]:
            raise ValueError(
                f"Conv2D {self.name!r}: expected input of shape (batch, height, width, "
                f"{self.input_shape[-1]}), got {tuple(x.shape)}"
            )

    def forward(self, x):
        y = ops.conv2d(x, self.kernel, self.strides, self.padding)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y

    def extra_repr(self):
        return f"{self.filters}, kernel_size={self.kernel_size}, padding={self.padding!r}"


class _Pool(Module):
    _op = None

    def __init__(self, pool_size=2, strides=None, padding: str = "valid", name=None):
        super().__init__(name)
        self.pool_size, self.strides, self.padding = pool_size, strides, padding

    def build(self, input_shape):
        if len(input_shape) != 4:
            raise ValueError(
                f"{type(self).__name__} {self.name!r}: expected input of rank 4 (batch, height, "
                f"width, channels), got shape {input_shape}"
            )

    def check_input(self, x):
        self.build(tuple(x.shape))

    def forward(self, x):
        return type(self)._op(x, self.pool_size, self.strides, self.padding)

    def extra_repr(self):
        return f"pool_size={self.pool_size}"


class MaxPool2D(_Pool):
    """Max pooling over NHWC input (default 2x2 window, stride = window)."""

    _op = staticmethod(ops.max_pool2d)


class AvgPool2D(_Pool):
    """Average pooling over NHWC input (default 2x2 window, stride = window)."""

    _op = staticmethod(ops.avg_pool2d)


class Flatten(Module):
    """Keep the batch axis, flatten the rest: (N, H, W, C) -> (N, H*W*C)."""

    def check_input(self, x):
        pass

    def forward(self, x):
        return ops.reshape(x, (x.shape[0], -1))


class Dropout(Module):
    """Zero inputs with probability ``rate`` in training mode (scaled by 1/(1-rate)); identity
    in eval mode."""

    def __init__(self, rate: float, seed=None, name=None):
        super().__init__(name)
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate!r}")
        self.rate = float(rate)
        self._gen = generator(seed) if seed is not None else None

    def check_input(self, x):
        pass

    def forward(self, x):
        if not self.training or self.rate == 0:
            return x
        # the seed is drawn when the mask is (under tv.jit: on every call, not once)
        return dropout_drawing(x, self.rate, self._next_seed, training=True)

    def _next_seed(self) -> int:
        return int((self._gen or generator()).integers(2**31))

    def extra_repr(self):
        return f"rate={self.rate}"


class Lambda(Module):
    """Wrap any callable of one tensor as a layer: a function, a ``tv.custom_grad`` function,
    a ``DifferentiableFunction`` or ``CompiledLayer`` instance. Its ``parameters()``, if it has
    any, become the layer's.

    Example:
        >>> import tapeviz as tv
        >>> tv.nn.Lambda(lambda x: x * 2)(tv.ones((1, 2))).numpy()
        array([[2., 2.]], dtype=float32)
    """

    def __init__(self, fn, name=None):
        if not callable(fn):
            raise TypeError(f"Lambda: expected a callable, got {type(fn).__name__}")
        label = getattr(fn, "name", None)
        if not isinstance(label, str) or not label:
            label = getattr(fn, "__name__", None) or type(fn).__name__
        label = "lambda" if label == "<lambda>" else label
        super().__init__(name or _safe_name(label))
        self.fn = fn

    def check_input(self, x):
        pass

    def forward(self, x):
        y = self.fn(x)
        if not isinstance(y, Tensor):
            raise TypeError(
                f"Lambda {self.name!r}: the function must return a Tensor, got {type(y).__name__}"
            )
        return y

    def extra_repr(self):
        return getattr(self.fn, "__name__", type(self.fn).__name__)


def _safe_name(label: str) -> str:
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in snake_case(label)) or "lambda"
    return unique_name(clean)
