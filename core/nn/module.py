"""``Module``: the base of layers and models (Keras-style lazy build, PyTorch-style modes).

A module creates its variables on the first call, from the input's shape (``build``), then
checks every later input against that shape. ``parameters()`` walks the module's attributes
in order (variables, sub-modules, lists of them, and any object with a ``parameters()``).
"""

from __future__ import annotations

import numpy as np

from ..tensors.arrays import to_array
from ..tensors.kinds import Variable
from ..tensors.recording import name_scope, no_grad
from ..tensors.tensor import Tensor
from . import training, weights
from .init import generator, initial_value, set_seed
from .naming import snake_case, unique_name

__all__ = ["Module", "set_seed", "summary_table"]


def _as_input(x, where: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    arr = to_array(x, where=where)
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float32)
    return Tensor(arr)


class Module:
    """Base class: subclass it, create variables in ``build``, compute in ``forward``.

    Attributes:
        name: unique name (``dense``, ``dense_1``, ...), used as the tape's name scope.
        training: True in training mode (``train()``), False after ``eval()``.
        trainable: False freezes the module (as TensorFlow.js's ``Layer.trainable``): every
            Variable it holds, its sub-modules' too and those ``build`` creates later, is set
            ``trainable=False``, so ``fit`` and ``minimize`` leave it unchanged and
            ``summary()`` counts it non-trainable; True unfreezes exactly what it froze.
        built: whether ``build`` has run.

    Example:
        >>> import tapeviz as tv
        >>> class Scale(tv.nn.Module):
        ...     def build(self, input_shape):
        ...         self.w = self.add_weight("w", (input_shape[-1],), "ones")
        ...     def forward(self, x):
        ...         return x * self.w
        >>> Scale()(tv.ones((2, 3))).shape
        (2, 3)
    """

    def __init__(self, name: str | None = None):
        self.name = name or unique_name(snake_case(type(self).__name__))
        # what ``trainable = False`` froze, to unfreeze: attribute paths and weight names,
        # not the Variables (a copy of the module must unfreeze its own; a set of strings is
        # not walked by ``parameters()`` and pickles)
        self._frozen: set = set()
        self._trainable = True
        self.training = True
        self.built = False
        self.stop_training = False
        self.input_shape = None  # feature shape (batch axis dropped) seen at build
        self.output_shape = None  # (None, ...) of the last output
        self.dtype = np.dtype("float32")  # the input's float dtype, set at build

    # --- subclass API --------------------------------------------------------------------
    def build(self, input_shape: tuple) -> None:
        """Create variables for inputs of ``input_shape`` (batch axis included)."""

    def forward(self, x):
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def check_input(self, x: Tensor) -> None:
        """Raise a ValueError when ``x`` does not match the shape seen at build."""
        if self.input_shape is not None and tuple(x.shape[1:]) != self.input_shape:
            raise ValueError(
                f"{type(self).__name__} {self.name!r}: expected input of shape "
                f"{(None, *self.input_shape)}, got {tuple(x.shape)}"
            )

    def add_weight(self, name, shape, initializer="glorot_uniform", dtype=None, seed=None):
        """A new Variable named ``<module name>/<name>`` (dtype: the input's), trainable
        unless the module is frozen (``trainable = False``)."""
        dtype = np.dtype(dtype or self.dtype)
        value = initial_value(initializer, tuple(shape), dtype, generator(seed))
        v = Variable(value, f"{self.name}/{name}", trainable=self.trainable)
        if not self.trainable:  # a frozen module builds frozen weights, unfrozen with it
            self.__dict__.setdefault("_frozen", set()).add(("name", v.name))
        return v

    # --- calling -------------------------------------------------------------------------
    def __call__(self, x):
        x = _as_input(x, f"{type(self).__name__} {self.name!r}")
        with name_scope(self.name):
            if not self.built:
                self.dtype = x.dtype if x.dtype.kind == "f" else np.dtype("float32")
                self.build(tuple(x.shape))
                self.input_shape = tuple(x.shape[1:])
                self.built = True
            else:
                self.check_input(x)
            y = self.forward(x)
        if isinstance(y, Tensor):
            self.output_shape = (None, *y.shape[1:])
        return y

    # --- modes and parameters ------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active) on this module and its children; returns self."""
        self.training = bool(mode)
        for m in self.children():
            if isinstance(m, Module):
                m.train(mode)
        return self

    @property
    def trainable(self) -> bool:
        """Whether ``fit``/``minimize`` may change this module's weights (see the class)."""
        return self.__dict__.get("_trainable", True)

    @trainable.setter
    def trainable(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(
                f"{type(self).__name__} {self.name!r}: trainable must be True or False, "
                f"got {type(value).__name__} {value!r}"
            )
        value = bool(value)
        frozen = self.__dict__.setdefault("_frozen", set())
        for path, v in self._own_variables():
            if not value and v.trainable:  # freeze what is trainable now; remember it
                v.trainable = False
                frozen.add(("path", path))
            elif value and (("path", path) in frozen or ("name", v.name) in frozen):
                v.trainable = True  # unfreeze only what freezing froze
        if value:
            frozen.clear()
        self._trainable = value
        for m in self.children():
            if isinstance(m, Module):
                m.trainable = value

    def _own_variables(self) -> list:
        """``(path, variable)`` for the Variables this module holds itself (not through a
        sub-module)."""
        out = []
        for key, value in vars(self).items():
            items = enumerate(value) if isinstance(value, (list, tuple)) else [(None, value)]
            for i, item in items:
                if not isinstance(item, Module):
                    out += _params_of(item, key + ("" if i is None else f".{i}"))
        return out

    def eval(self) -> Module:
        """Evaluation mode (dropout off); returns self."""
        return self.train(False)

    def children(self) -> list:
        """Direct sub-modules (and parameter-carrying callables) in attribute order."""
        out = []
        for value in vars(self).values():
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, Module) or (
                    not isinstance(item, Tensor) and hasattr(item, "parameters")
                ):
                    out.append(item)
        return out

    def named_parameters(self, prefix: str = "") -> list[tuple[str, Variable]]:
        """``(path, variable)`` pairs: ``kernel``, ``layers.0.kernel``, ... (no repeats)."""
        out, seen = [], set()
        for key, value in vars(self).items():
            items = enumerate(value) if isinstance(value, (list, tuple)) else [(None, value)]
            for i, item in items:
                path = prefix + key + ("" if i is None else f".{i}")
                for name, v in _params_of(item, path):
                    if id(v) not in seen:
                        seen.add(id(v))
                        out.append((name, v))
        return out

    def parameters(self) -> list[Variable]:
        """Every Variable of this module and its children, in order."""
        return [v for _, v in self.named_parameters()]

    def trainable_parameters(self) -> list[Variable]:
        return [v for v in self.parameters() if v.trainable]

    def count_params(self) -> int:
        return int(sum(v.size for v in self.parameters()))

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"

    def build_for(self, input_shape) -> Module:
        """Build every layer for inputs of feature shape ``input_shape`` (no batch axis)."""
        with no_grad():
            self(np.zeros((1, *input_shape), np.float32))
        return self

    def summary(self, input_shape=None, print_fn=print) -> None:
        """Print a table of layers, output shapes and parameter counts (Keras style).

        Args:
            input_shape: feature shape (no batch axis) to build an unbuilt model with.
            print_fn: where the lines go.
        """
        if input_shape is not None and not self.built:
            self.build_for(input_shape)
        if not self.built:
            raise ValueError(
                f"{type(self).__name__} {self.name!r}.summary: the model is not built yet; call it on a "
                "batch or pass input_shape=(features...)"
            )
        print_fn(summary_table(self))

    def predict(self, x, batch_size: int = 256) -> Tensor:
        """Outputs for ``x`` in eval mode, without recording, in batches."""
        return training.predict(self, x, batch_size)

    def evaluate(self, x, y, loss, batch_size: int = 256, metrics="auto") -> dict:
        """Mean loss (and metrics) over ``x, y`` in eval mode: ``{"loss": ..., ...}``."""
        return training.evaluate(self, x, y, loss, batch_size, metrics)

    def fit(self, x, y, loss, optimizer, epochs: int = 1, batch_size: int = 32, **kwargs):
        """Train; see ``core.nn.training.fit`` for every argument. Returns a ``History``."""
        return training.fit(self, x, y, loss, optimizer, epochs, batch_size, **kwargs)

    # --- weights on disk -----------------------------------------------------------------
    def save_weights(self, path) -> None:
        """Write every parameter to an ``.npz`` file (no pickle), keyed by its path."""
        weights.save_weights(self, path)

    def load_weights(self, path) -> None:
        """Read weights saved by ``save_weights``; on any mismatch raise and change nothing."""
        weights.load_weights(self, path)


def _params_of(item, path):
    if isinstance(item, Variable):
        return [(path, item)]
    if isinstance(item, Module):
        return item.named_parameters(path + ".")
    if not isinstance(item, Tensor) and callable(getattr(item, "parameters", None)):
        params = [p for p in item.parameters() if isinstance(p, Variable)]
        return [(f"{path}.{j}", p) for j, p in enumerate(params)]
    return []


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
