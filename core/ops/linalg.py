"""numpy.linalg's names: ``tv.linalg.inv``, ``tv.linalg.norm``, ... (the namespace module;
the ops live in ``matmul``, ``contract``, ``decomp`` and ``norm``)."""

from __future__ import annotations

from .contract import dot
from .decomp import (
    cholesky,
    det,
    eig,
    eigh,
    eigvalsh,
    inv,
    matrix_power,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
)
from .matrix import matmul
from .norm import matrix_norm, norm, vector_norm

__all__ = ["matmul", "dot", "cholesky", "det", "eig", "eigh", "eigvalsh", "inv",
           "matrix_power", "matrix_norm", "norm", "pinv", "vector_norm", "qr", "slogdet", "solve", "svd"]  # fmt: skip
