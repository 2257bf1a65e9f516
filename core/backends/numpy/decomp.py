"""numpy kernels: dense linear algebra through LAPACK (``numpy.linalg``), on stacks of
matrices (``(..., M, N)``) as numpy does."""

from __future__ import annotations

import numpy as np


def solve(i, a):
    return np.linalg.solve(i["a"], i["b"])


def svd(i, a):
    return tuple(np.linalg.svd(i["x"], full_matrices=a["full_matrices"]))
