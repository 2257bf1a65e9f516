"""numpy kernel: ``einsum`` on explicit subscripts (``ij,jk->ik``; no ellipsis, the op
expands it). Inputs are ``x0, x1, ...``."""

from __future__ import annotations

import numpy as np


def einsum(i, a):
    operands = [i[f"x{k}"] for k in range(len(i))]
    return np.asarray(np.einsum(a["subscripts"], *operands, optimize=len(operands) > 1))
