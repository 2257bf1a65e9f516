"""``Sequential``: a stack of layers, each a callable of one tensor; ``fit`` trains it."""

from __future__ import annotations

from .layers import Lambda
from .module import Module

__all__ = ["Sequential", "summary_table"]


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
        """Append a layer (a non-module callable is wrapped in ``Lambda``)."""
        if not isinstance(layer, Module):
            if not callable(layer):
                raise TypeError(
                    f"Sequential.add: expected a layer or a callable of one tensor, got "
                    f"{type(layer).__name__}"
                )
            layer = Lambda(layer)
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


def summary_table(model: Module) -> str:
    """The Keras-style table of ``model``'s child layers, output shapes and parameters."""
    rows = [("Layer (type)", "Output shape", "Param #")]
    for layer in [c for c in model.children() if isinstance(c, Module)]:
        rows.append(
            (
                f"{layer.name} ({type(layer).__name__})",
                str(layer.output_shape),
                f"{layer.count_params():,}",
            )
        )
    widths = [max(len(r[i]) for r in rows) + 2 for i in range(3)]
    rule = "-" * sum(widths)
    body = [f"{a:<{widths[0]}}{b:<{widths[1]}}{c:>{widths[2]}}" for a, b, c in rows]
    total = model.count_params()
    trainable = sum(v.size for v in model.trainable_parameters())
    return "\n".join(
        [
            f'Model: "{model.name}"',
            rule,
            body[0],
            rule,
            *body[1:],
            rule,
            f"Total params: {total:,}",
            f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}",
        ]
    )
