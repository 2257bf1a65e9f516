"""core: the tapeviz autodiff engine. numpy only (numba optional); knows nothing of widgets.

Example:
    >>> import core
    >>> core.grad(lambda x: core.sum(x ** 2))(core.tensor([1.0, 2.0, 3.0])).numpy()
    array([2., 4., 6.], dtype=float32)
"""

from __future__ import annotations

from . import kernel_names
from .backends import numpy as _numpy_backend
from .backward import GradientError
from .engine import KernelError, name_scope, no_grad, record_node, run_kernel, settings
from .functional import (
    grad,
    grads,
    hessian,
    jacobian,
    jvp,
    value_and_grad,
    value_and_grads,
    variable_grads,
    vjp,
)
from .gradcheck import GradCheckReport, GradientCheckError, check_grads, numerical_jacobian
from .gradients import register as _register_gradients
from .memory import dispose, keep, memory, tidy
from .ops import *  # noqa: F403 - the op namespace is the public API
from .ops import __all__ as _ops_all
from .registry import (
    Backend,
    GradConfig,
    KernelConfig,
    backend,
    get_backend,
    get_gradient,
    get_kernel,
    gradient_override,
    kernels_for_backend,
    list_backends,
    register_backend,
    register_gradient,
    register_kernel,
    set_backend,
    unregister_gradient,
    unregister_kernel,
)
from .tape import BackwardStep, Node, SavedValue, Tape
from .tensor import DisposedError, Tensor, Variable, tensor, variable

_numpy_backend.register()
_register_gradients()

__version__ = "0.1.0"

__all__ = [
    *_ops_all,
    "Backend",
    "BackwardStep",
    "DisposedError",
    "GradCheckReport",
    "GradConfig",
    "GradientCheckError",
    "GradientError",
    "KernelConfig",
    "KernelError",
    "Node",
    "SavedValue",
    "Tape",
    "Tensor",
    "Variable",
    "backend",
    "check_grads",
    "dispose",
    "get_backend",
    "get_gradient",
    "get_kernel",
    "grad",
    "gradient_override",
    "grads",
    "hessian",
    "jacobian",
    "jvp",
    "keep",
    "kernel_names",
    "kernels_for_backend",
    "list_backends",
    "memory",
    "name_scope",
    "no_grad",
    "numerical_jacobian",
    "record_node",
    "register_backend",
    "register_gradient",
    "register_kernel",
    "run_kernel",
    "set_backend",
    "settings",
    "tensor",
    "tidy",
    "unregister_gradient",
    "unregister_kernel",
    "value_and_grad",
    "value_and_grads",
    "variable",
    "variable_grads",
    "vjp",
]
