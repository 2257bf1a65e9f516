"""The numpy backend: the reference, with a kernel for every built-in primitive.

Its kernels are named in the primitives' definition tables (``core/primitives/<family>.py``),
one row per primitive with its VJP; the modules here hold the kernels that are more than
one numpy call.
"""

from __future__ import annotations

from ...registry.kernels import Backend, register_backend

NAME = "numpy"


def register() -> None:
    """Register the backend (``core.primitives.register`` registers its kernels)."""
    register_backend(NAME, lambda: Backend(NAME, priority=1), priority=1)
