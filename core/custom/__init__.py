"""Custom gradients, one style per seed, each in its own folder:

* ``tfjs/``: TensorFlow.js's ``customGrad`` (``tv.custom_grad``);
* ``matlab/``: MATLAB's ``DifferentiableFunction`` (``tv.DifferentiableFunction``);
* ``wolfram/``: Wolfram's ``CompiledLayer`` on numba (``tv.CompiledLayer``).

Each folder holds what a call records and (``vjp.py``) what runs when a gradient flows
through its node. Each records one tape node (labelled with the user's function or class
name) holding exactly the values its backward needs; ``builder.py`` is what they share.
"""

from __future__ import annotations

from .matlab.differentiable_function import DifferentiableFunction
from .tfjs.custom_grad import custom_grad

__all__ = ["custom_grad", "DifferentiableFunction"]
