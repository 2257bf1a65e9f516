"""``Sequential``: a stack of layers, each a callable of one tensor; ``fit`` trains it."""

from __future__ import annotations

from .layers import Lambda
from .module import Module

__all__ = ["Sequential"]


class Sequential(Module):
    """Layers applied in order. Any callable of one tensor fits: modules, plain functions,
    ``tv.custom_grad`` functions, ``DifferentiableFunction`` and ``CompiledLayer`` instances.

    Args:
        layers: the layers, in order.
        name: model name.

    Example:
        >>> import tapeviz as tv
        >>> model = tv.nn.Sequential([tv.nn.Dense(8, "relu"), tv.nn.Dense(3)])
        >>> model(tv.ones((4, 2))).shape, model.count_params()
        ((4, 3), 51)
    """

    def __init__(self, layers=(), name=None):
        super().__init__(name)
        self.layers = []
        for layer in layers:
            self.add(layer)

    def add(self, layer) -> None:
        """Append a layer (a non-module callable is wrapped in ``Lambda``); a frozen model
        (``trainable = False``) freezes it."""
        if not isinstance(layer, Module):
            if not callable(layer):
                raise TypeError(
                    f"Sequential.add: expected a layer or a callable of one tensor, got "
                    f"{type(layer).__name__}"
                )
            layer = Lambda(layer)
        if not self.trainable:  # a layer added to a frozen model is frozen with it
            layer.trainable = False
        self.layers.append(layer)
        self.built = False

    def check_input(self, x):
        pass

    def build(self, input_shape):
        if not self.layers:
            raise ValueError(f"Sequential {self.name!r}: the model has no layers")

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, i):
        return self.layers[i]

    def __len__(self):
        return len(self.layers)

    def __repr__(self):
        lines = [f"  ({i}) {layer.name}: {layer!r}" for i, layer in enumerate(self.layers)]
        return f"Sequential({self.name!r},\n" + "\n".join(lines) + "\n)"
