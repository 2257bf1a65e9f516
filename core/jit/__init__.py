"""``tv.jit``: trace a function once per signature (forward and backward: gradients are
ops) and run it as generated straight-line Python of backend kernel calls.

Modules: ``function`` (``jit``, the cache and the call path), ``tracer`` (what the engine
reports while tracing), ``traced_array`` (values that refuse to be read outside kernels),
``ir`` (values and statements), ``names`` (readable names), ``codegen`` (the Python source),
``compiled`` (one signature's program), ``pytree``, ``bindings``, ``errors``.
"""

from __future__ import annotations

from .errors import ConcretizationError, JitError, OpaqueFunctionError
from .function import JitFunction, jit

__all__ = ["jit", "JitFunction", "JitError", "ConcretizationError", "OpaqueFunctionError"]
