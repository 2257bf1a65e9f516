"""Activation layers (ReLU, Tanh, Sigmoid, Softmax, ...) and the name -> function table."""

from __future__ import annotations

import functools

from .. import ops
from .module import Module

__all__ = [
    "Activation",
    "ReLU",
    "LeakyReLU",
    "ELU",
    "GELU",
    "Tanh",
    "Sigmoid",
    "Softplus",
    "Softmax",
    "LogSoftmax",
    "get_activation",
]

ACTIVATIONS = {
    "relu": ops.relu,
    "tanh": ops.tanh,
    "sigmoid": ops.sigmoid,
    "softmax": ops.softmax,
    "log_softmax": ops.log_softmax,
    "leaky_relu": ops.leaky_relu,
    "elu": ops.elu,
    "selu": ops.selu,
    "gelu": ops.gelu,
    "softplus": ops.softplus,
}


def get_activation(activation, where: str = "activation"):
    """None, ``"linear"``, a name from ``ACTIVATIONS`` or a callable -> a callable (or None)."""
    if activation is None or activation == "linear":
        return None
    if isinstance(activation, str):
        fn = ACTIVATIONS.get(activation)
        if fn is None:
            raise ValueError(
                f"{where}: unknown activation {activation!r} (expected one of "
                f"{', '.join(sorted(ACTIVATIONS))}, 'linear', None or a callable)"
            )
        return fn
    if not callable(activation):
        raise TypeError(
            f"{where}: activation must be a name or a callable, got {type(activation).__name__}"
        )
    return activation


class Activation(Module):
    """Apply an activation, by name or callable, as a layer.

    Example:
        >>> import tapeviz as tv
        >>> tv.nn.Activation("relu")(tv.tensor([[-1.0, 2.0]])).numpy()
        array([[0., 2.]], dtype=float32)
    """

    def __init__(self, activation, name=None):
        self.fn = get_activation(activation, "Activation")
        label = activation if isinstance(activation, str) else None
        super().__init__(name or (label and f"{label}_act"))

    def check_input(self, x):
        pass

    def forward(self, x):
        return x if self.fn is None else self.fn(x)

    def extra_repr(self):
        return getattr(self.fn, "__name__", "") if self.fn else "linear"


def _activation_class(cls_name: str, op, doc: str, **defaults):
    def __init__(self, name=None, **kwargs):
        params = {**defaults, **kwargs}
        unknown = set(params) - set(defaults)
        if unknown:
            raise TypeError(f"{cls_name}: unexpected arguments {sorted(unknown)}")
        Activation.__init__(self, functools.partial(op, **params) if params else op, name)
        self.params = params

    def extra_repr(self):
        return ", ".join(f"{k}={v!r}" for k, v in self.params.items())

    return type(
        cls_name, (Activation,), {"__init__": __init__, "extra_repr": extra_repr, "__doc__": doc}
    )


ReLU = _activation_class("ReLU", ops.relu, "``max(x, 0)`` as a layer.")
LeakyReLU = _activation_class("LeakyReLU", ops.leaky_relu, "Leaky ReLU layer.", alpha=0.2)
ELU = _activation_class("ELU", ops.elu, "ELU layer.", alpha=1.0)
GELU = _activation_class("GELU", ops.gelu, "GELU layer.")
Tanh = _activation_class("Tanh", ops.tanh, "``tanh(x)`` as a layer.")
Sigmoid = _activation_class("Sigmoid", ops.sigmoid, "``1/(1+exp(-x))`` as a layer.")
Softplus = _activation_class("Softplus", ops.softplus, "``log(1+exp(x))`` as a layer.")
Softmax = _activation_class("Softmax", ops.softmax, "Softmax along ``axis`` (-1).", axis=-1)
LogSoftmax = _activation_class(
    "LogSoftmax", ops.log_softmax, "Log-softmax along ``axis`` (-1).", axis=-1
)
