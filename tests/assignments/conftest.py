"""The assignments' tests run students' notebooks in this process (``in_process.py``), and a
notebook registers kernels and gradients (assignment A's ``Softsign``...): each test gets
the registry back as it found it, so no later test sees a student's kernel (a numpy kernel
with no numba counterpart failed ``test_every_numpy_kernel_exists_on_numba`` after them)."""

from __future__ import annotations

import pytest

from tapeviz.core.registry.kernels import BUILTIN_GRADIENTS, PRIMITIVES, edited


@pytest.fixture(autouse=True)
def registry_restored():
    prims = dict(PRIMITIVES)
    fields = {
        name: (dict(p.kernels), p.grad, p.batch, p.decomposition) for name, p in prims.items()
    }
    builtin = set(BUILTIN_GRADIENTS)
    yield
    PRIMITIVES.clear()
    PRIMITIVES.update(prims)
    for name, (kernels, grad, batch, decomposition) in fields.items():
        p = prims[name]
        p.kernels.clear()
        p.kernels.update(kernels)
        p.grad, p.batch, p.decomposition = grad, batch, decomposition
    BUILTIN_GRADIENTS.clear()
    BUILTIN_GRADIENTS.update(builtin)
    edited()
