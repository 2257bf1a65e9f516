"""Custom gradients, one style per seed: TensorFlow.js ``custom_grad`` and MATLAB
``DifferentiableFunction`` (Wolfram's ``CompiledLayer`` lives in ``compiled_layer.py``).

Each records one tape node (style ``"custom_grad"`` / ``"DifferentiableFunction"``, labelled
with the user's function or class name) holding exactly the values its backward needs.
"""

from __future__ import annotations

from .custom_grad import custom_grad
from .differentiable_function import DifferentiableFunction

__all__ = ["custom_grad", "DifferentiableFunction"]
