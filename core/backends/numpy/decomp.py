"""numpy kernels: dense linear algebra through LAPACK (``numpy.linalg``), on stacks of
matrices (``(..., M, N)``) as numpy does."""

from __future__ import annotations

import numpy as np

from ... import kernel_names as K


def _solve(i, a):
    return np.linalg.solve(i["a"], i["b"])


def _svd(i, a):
    return tuple(np.linalg.svd(i["x"], full_matrices=a["full_matrices"]))


KERNELS = {
    K.MATRIX_INVERSE: lambda i, a: np.linalg.inv(i["x"]),
    K.MATRIX_DETERMINANT: lambda i, a: np.asarray(np.linalg.det(i["x"])),
    K.LOG_MATRIX_DETERMINANT: lambda i, a: tuple(map(np.asarray, np.linalg.slogdet(i["x"]))),
    K.MATRIX_SOLVE: _solve,
    K.CHOLESKY: lambda i, a: np.linalg.cholesky(i["x"]),
    K.SELF_ADJOINT_EIG: lambda i, a: tuple(np.linalg.eigh(i["x"], UPLO=a["UPLO"])),
    K.SVD: _svd,
    K.QR: lambda i, a: tuple(np.linalg.qr(i["x"], mode="reduced")),
    K.PINV: lambda i, a: np.linalg.pinv(i["x"], rcond=a["rcond"]),
}
