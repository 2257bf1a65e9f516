"""core: the tapeviz autodiff engine. numpy only (numba optional); knows nothing of widgets.

Example:
    >>> import tapeviz as tv
    >>> tv.grad(lambda x: tv.sum(x ** 2))(tv.tensor([1.0, 2.0, 3.0])).numpy()
    array([2., 4., 6.], dtype=float32)
"""

from __future__ import annotations

import importlib.util as _importlib_util

from . import ops as _ops_module
from .autodiff.backward import GradientError, NotDifferentiableError, StaleValueError
from .autodiff.functional import (
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
from .autodiff.refusal import (
    AutodiffRefusedError,
    allow_next_pass,
    refuse_reverse_mode,
    reverse_mode_refused,
)
from .autodiff.tape import BackwardStep, Node, SavedValue, Tape
from .backends import numpy as _numpy_backend
from .check.anomaly import AnomalyError, detect_anomaly
from .check.audit import AuditReport, audit
from .check.gradcheck import GradCheckReport, GradientCheckError, check_grads, numerical_jacobian
from .custom import DifferentiableFunction, custom_grad
from .custom.wolfram.compiled_layer import AutoDiffError, CompiledLayer
from .engine.dispatch import KernelError, bind, record, run_kernel, settings
from .jit import ConcretizationError, JitError, JitFunction, OpaqueFunctionError, jit
from .memory import dispose, keep, memory, tidy
from .ops import *  # noqa: F403 - the op namespace is the public API
from .ops import __all__ as _ops_all
from .ops import arguments as _ops_arguments
from .ops import numpy_dispatch as _numpy_dispatch
from .ops.creation import tensor
from .ops.numpy_dispatch import NumpyDispatchError
from .ops.numpy_dispatch import supported as supported_numpy
from .primitives import register as _register_gradients
from .primitives.define import define_op, remove_op
from .registry import kernel_names
from .registry.gradients import (
    GradConfig,
    get_gradient,
    gradient_override,
    register_gradient,
    unregister_gradient,
)
from .registry.kernels import (
    Backend,
    KernelConfig,
    Primitive,
    backend,
    get_backend,
    get_kernel,
    kernels_for_backend,
    list_backends,
    primitive,
    register_backend,
    register_batching,
    register_decomposition,
    register_kernel,
    set_backend,
    unregister_backend,
    unregister_kernel,
)
from .tensors import upward as _upward
from .tensors.kinds import Variable, variable
from .tensors.recording import name_scope, no_grad
from .tensors.tensor import DisposedError, Tensor

# --- wiring: the one place the layers are connected upward -------------------------------
# The value layer (core/tensor) imports nothing above it; a tensor's operators and numpy's
# protocols on a tensor reach the ops through this plug. Then the backends' kernels and the
# primitives' rows fill the registries (core/registry).
_upward.plug(ops=_ops_module, unchanged=_ops_arguments.unchanged, numpy=_numpy_dispatch)
_numpy_backend.register()


def _load_numba_backend():
    """The numba backend, imported when first used (``tv.backend("numba")``, a numba kernel
    looked up): numba and its compiler take ~300 ms to import, so ``import tapeviz`` does not.
    Importing ``core.backends.numba`` registers its kernels."""
    try:
        from .backends import numba as nb
    except ImportError as e:  # pragma: no cover - a broken numba install
        raise ImportError(f"backend 'numba': numba is installed but does not import: {e}") from e
    return nb._factory()


# the compiled backend, only where numba is installed (priority 0: numpy stays the default);
# registered by name now, imported on first use
def _installed(name: str) -> bool:
    try:
        return _importlib_util.find_spec(name) is not None
    except (ImportError, ValueError):  # an import hook that refuses it: not available
        return False


if _installed("numba"):
    register_backend("numba", _load_numba_backend, priority=0)
_register_gradients()

# the training API, built on the ops above. `nn` by import_module: `from .ops import *` has
# already bound the name `nn` to core.ops.nn, which `from . import nn` would keep
from importlib import import_module as _import_module  # noqa: E402

from .nn import data, losses, optim  # noqa: E402

nn = _import_module(".nn", __name__)

__version__ = "0.1.0"

__all__ = [
    "AutodiffRefusedError",
    "allow_next_pass",
    "refuse_reverse_mode",
    "reverse_mode_refused",
    *_ops_all,
    "Backend",
    "BackwardStep",
    "DifferentiableFunction",
    "DisposedError",
    "NumpyDispatchError",
    "supported_numpy",
    "AnomalyError",
    "AuditReport",
    "GradCheckReport",
    "GradConfig",
    "GradientCheckError",
    "GradientError",
    "NotDifferentiableError",
    "StaleValueError",
    "KernelConfig",
    "KernelError",
    "Node",
    "SavedValue",
    "Tape",
    "Tensor",
    "Variable",
    "backend",
    "audit",
    "check_grads",
    "custom_grad",
    "CompiledLayer",
    "AutoDiffError",
    "dispose",
    "get_backend",
    "get_gradient",
    "get_kernel",
    "grad",
    "gradient_override",
    "grads",
    "hessian",
    "jacobian",
    "jit",
    "JitFunction",
    "JitError",
    "ConcretizationError",
    "OpaqueFunctionError",
    "jvp",
    "keep",
    "kernel_names",
    "nn",
    "optim",
    "losses",
    "data",
    "kernels_for_backend",
    "list_backends",
    "memory",
    "name_scope",
    "no_grad",
    "detect_anomaly",
    "numerical_jacobian",
    "Primitive",
    "primitive",
    "register_batching",
    "register_backend",
    "register_gradient",
    "register_kernel",
    "run_kernel",
    "bind",
    "record",
    "define_op",
    "remove_op",
    "register_decomposition",
    "set_backend",
    "settings",
    "tensor",
    "tidy",
    "unregister_backend",
    "unregister_gradient",
    "unregister_kernel",
    "value_and_grad",
    "value_and_grads",
    "variable",
    "variable_grads",
    "vjp",
]
