"""The numpy backend: the reference, with a kernel for every primitive."""

from __future__ import annotations

from ...registry import Backend, register_backend, register_kernel
from . import contract, decomp, elementwise, elementwise_math, linalg, nn, reduce, scan, shape

NAME = "numpy"
FAMILIES = (elementwise, elementwise_math, reduce, scan, linalg, contract, decomp, shape, nn)


def register() -> None:
    """Register the backend and every kernel of every family (one explicit list)."""
    register_backend(NAME, lambda: Backend(NAME, priority=1), priority=1)
    for family in FAMILIES:
        for kernel_name, fn in family.KERNELS.items():
            register_kernel(kernel_name, NAME, fn)
