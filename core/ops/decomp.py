"""Dense linear algebra with ``numpy.linalg``'s names and semantics (``tv.linalg.inv``, ...),
on stacks of matrices ``(..., M, N)``. Real dtypes only (complex is out of scope).

Degenerate points (see ``core/primitives/decomp.py``): the forward pass behaves as numpy
(``inv`` of a singular matrix raises); a gradient that does not exist there raises a
``ValueError`` naming the function, never returns inf or nan silently.

Example:
    >>> import numpy as np, tapeviz as tv
    >>> a = tv.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]))
    >>> tv.grad(lambda a: tv.linalg.slogdet(a)[1])(a).numpy().round(2)
    array([[ 0.6, -0.2],
           [-0.2,  0.4]])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..engine.dispatch import run_kernel
from ..registry import kernel_names as K
from ..tensors.recording import tracks
from ..tensors.tensor import Tensor
from .arguments import as_tensor, cast
from .matrix import matmul
from .order import swapaxes

EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
EigResult = namedtuple("EigResult", "eigenvalues eigenvectors")
SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
SVDResult = namedtuple("SVDResult", "U S Vh")
QRResult = namedtuple("QRResult", "Q R")


def _matrix(a, op, square=False) -> Tensor:
    a = as_tensor(a, op)
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        kind = "square matrices" if square else "matrices"
        raise ValueError(f"{op}: expected a stack of {kind} (..., M, M), got shape {a.shape}")
    if a.dtype.kind != "f":
        a = cast(a, np.float64)
    return a


def inv(a) -> Tensor:
    """Matrix inverse (raises for a singular matrix, as numpy)."""
    return run_kernel(K.MATRIX_INVERSE, {"x": _matrix(a, "inv", True)})


def det(a) -> Tensor:
    """Determinant; its gradient is ``det(a) inv(a)^T``, at a singular matrix the transposed
    adjugate (which is what that product equals wherever ``a`` is invertible)."""
    return run_kernel(K.MATRIX_DETERMINANT, {"x": _matrix(a, "det", True)})


def slogdet(a) -> SlogdetResult:
    """``(sign, log|det|)``; ``sign`` is constant, ``logabsdet`` has gradient ``inv(a)^T``."""
    return SlogdetResult(*run_kernel(K.LOG_MATRIX_DETERMINANT, {"x": _matrix(a, "slogdet", True)}))


def solve(a, b) -> Tensor:
    """``x`` with ``a @ x = b``; ``b`` is a vector when 1-D, else (..., M, K) (numpy 2).

    Args:
        a: (..., M, M) non-singular matrices.
        b: (M,) or (..., M, K).

    Returns:
        ``x`` shaped like ``b``; its gradients are ``db = solve(a^T, dy)``, ``da = -db x^T``.

    Example:
        >>> import numpy as np, tapeviz as tv
        >>> tv.linalg.solve(np.diag([2.0, 4.0]), tv.tensor([2.0, 2.0])).numpy()
        array([1. , 0.5])
    """
    a = _matrix(a, "solve", True)
    b = as_tensor(b, "solve")
    if b.dtype != a.dtype:
        b = cast(b, np.result_type(a.dtype, b.dtype))
        a = a if a.dtype == b.dtype else cast(a, b.dtype)
    rows = b.shape[0] if b.ndim == 1 else (b.shape[-2] if b.ndim >= 2 else None)
    if rows != a.shape[-1]:
        raise ValueError(f"solve: a has shape {a.shape}, b has shape {b.shape} (rows differ)")
    return run_kernel(K.MATRIX_SOLVE, {"a": a, "b": b})


def cholesky(a, upper=False) -> Tensor:
    """Lower Cholesky factor ``L`` (``a = L L^T``; numpy reads the lower triangle). The
    gradient is symmetric (autograd's convention). ``upper=True`` returns ``L^T``."""
    L = run_kernel(K.CHOLESKY, {"x": _matrix(a, "cholesky", True)})
    if upper:
        return swapaxes(L, -1, -2)
    return L


def eigh(a, UPLO="L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (reads triangle
    ``UPLO``). Eigenvector gradients raise at repeated eigenvalues (the vectors are not
    unique there).

    At repeated eigenvalues a single eigenvalue is not differentiable either (``λ_max`` at
    ``I`` grows along both ``E`` and ``-E``); the gradient returned there, ``V diag(dλ) V^T``
    for the eigenvectors numpy picked (PyTorch's too), is one element of the subdifferential:
    the limit of the true gradients at ``A + t V diag(0, 1, …, n-1) V^T`` as ``t → 0+`` (for
    the convex ``λ_max``, the subgradient ``v v^T``). A function treating the tied
    eigenvalues alike (their sum, the sum of their squares) is differentiable there, and
    that is its gradient.

    Args:
        a: (..., M, M) symmetric matrices.
        UPLO: the triangle numpy reads, ``"L"`` or ``"U"``; the gradient flows to it only.

    Returns:
        ``EighResult(eigenvalues, eigenvectors)`` (a named tuple, as numpy's).

    Example:
        >>> import numpy as np, tapeviz as tv
        >>> tv.linalg.eigh(np.diag([3.0, 1.0])).eigenvalues.numpy()
        array([1., 3.])
    """
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    w, v = run_kernel(K.SELF_ADJOINT_EIG, {"x": _matrix(a, "eigh", True)}, {"UPLO": UPLO})
    return EighResult(w, v)


def eigvalsh(a, UPLO="L") -> Tensor:
    """The eigenvalues of ``eigh`` alone. Where eigenvalues repeat they are not
    differentiable one by one: the gradient there is one element of the subdifferential
    (see ``eigh``)."""
    return eigh(a, UPLO)[0]


def eig(a) -> EigResult:
    """Eigen-decomposition of a real symmetric matrix (eigenvalues ascending); a matrix that
    is not symmetric raises (its eigenvalues may be complex, which is out of scope)."""
    a = _matrix(a, "eig", True)
    d = a._array
    if not np.allclose(d, np.swapaxes(d, -1, -2), rtol=1e-10, atol=0):
        raise ValueError("eig: only real symmetric matrices are supported (complex eigenvalues "
                         "are out of scope); symmetrize it or use eigh")  # fmt: skip
    return EigResult(*eigh(a))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``U, S, Vh`` with ``a = U diag(S) Vh``, or ``S`` alone. Gradients need
    ``full_matrices=False`` for non-square ``a``; vector gradients raise at repeated
    singular values. There, and at a zero singular value, a singular value alone is not
    differentiable: its gradient ``U diag(dS) Vh`` is one element of the subdifferential,
    as for ``eigh``'s eigenvalues (e.g. a subgradient of the spectral norm). ``hermitian`` is
    accepted and ignored (the same decomposition up to the signs of paired singular
    vectors)."""
    a = _matrix(a, "svd")
    if not compute_uv:
        return run_kernel(K.SVD, {"x": a}, {"full_matrices": False})[1]
    return SVDResult(*run_kernel(K.SVD, {"x": a}, {"full_matrices": bool(full_matrices)}))


def qr(a, mode="reduced"):
    """QR decomposition as ``numpy.linalg.qr``: ``mode`` 'reduced' (``Q, R``, Q of shape
    (M, K), K = min(M, N)), 'r' (``R`` alone), 'complete' (Q of shape (M, M)) or 'raw'
    (LAPACK's ``h, tau``).

    Gradients: 'reduced' and 'r' (one ``Qr`` kernel; the gradient needs M >= N); 'complete'
    too where it equals 'reduced' (M <= N). For M > N the extra columns of a complete Q are
    any orthonormal completion (not a function of ``a``), and 'raw' is LAPACK's storage:
    their values are numpy's, and on a tensor an active tape records they raise (as
    PyTorch's 'complete'), rather than give a gradient that is not one.
    """
    if mode not in ("reduced", "r", "complete", "raw"):
        raise ValueError(f"qr: mode must be 'reduced', 'r', 'complete' or 'raw', got {mode!r}")
    a = _matrix(a, "qr")
    m, n = a.shape[-2:]
    if mode == "raw" or (mode == "complete" and m > n):
        if tracks(a):
            raise ValueError(
                f"qr: mode={mode!r} of a {m}x{n} matrix has no gradient ("
                + ("LAPACK's raw storage" if mode == "raw" else "the extra columns of Q "
                   "are any orthonormal completion")
                + "), and this tensor is recorded by an active tape; use mode='reduced' "
                "(or 'r'), or pass x.numpy() for numpy's values as constants"
            )  # fmt: skip
        out = np.linalg.qr(a._array, mode=mode)
        return QRResult(Tensor(out[0]), Tensor(out[1])) if mode == "complete" else (
            Tensor(np.asarray(out[0])), Tensor(np.asarray(out[1]))
        )  # fmt: skip
    q, r = run_kernel(K.QR, {"x": a})
    return r if mode == "r" else QRResult(q, r)


def pinv(a, rcond=None, hermitian=False) -> Tensor:
    """Moore-Penrose pseudo-inverse; the gradient assumes the rank is locally constant.
    ``hermitian`` is accepted and ignored (the same result)."""
    return run_kernel(K.PINV, {"x": _matrix(a, "pinv")}, {"rcond": rcond})


def matrix_power(a, n: int) -> Tensor:
    """``a`` multiplied by itself ``n`` times (``inv(a)`` for negative ``n``; identity for 0)."""
    a = _matrix(a, "matrix_power", True)
    if n < 0:
        a, n = inv(a), -n
    out = Tensor(np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy())
    for _ in range(int(n)):
        out = matmul(out, a)
    return out
