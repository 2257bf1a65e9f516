"""Pure numba implementations of elementwise kernels on flat (1-D) float arrays.

No tapeviz imports: each function takes plain arrays and writes ``out``, so it can be tested
against numpy alone. Only the kernel that beats numpy is here (``elementwise``'s docstring).
"""

from __future__ import annotations

from numba import njit, prange


@njit(parallel=True, cache=True)
def leaky_relu(x, out, alpha):
    """out[i] = x[i] if x[i] > 0 else alpha * x[i] (NaN stays NaN), in one pass."""
    a = x.dtype.type(alpha)  # x's type in every branch: a float64 constant stops vectorising
    zero = x.dtype.type(0)
    for i in prange(x.size):
        v = x[i]
        out[i] = v if v > zero else v * a
    return out
