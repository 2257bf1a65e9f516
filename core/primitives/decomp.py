"""The dense linear algebra primitives (one ``Primitive`` row each) and their VJPs, written
with ops (so they differentiate again), on stacks of matrices. The formulas are autograd's (``autograd/numpy/linalg.py``) unless noted.

inv: da = -y^T dy y^T.  det: da = dy y inv(a)^T, at a singular a the adjugate (SVD).  slogdet: da = dlogabs inv(a)^T.
solve (x = a^-1 b): db = solve(a^T, dy), da = -db x^T.
cholesky (Murray 2016): S = L^-T Phi(L^T dy) L^-1, G = (S + S^T) / 2 is the gradient for a
symmetric input (autograd's, PyTorch's); numpy reads the lower triangle only, so, as for eigh,
da is G folded onto it: 2 G below the diagonal, G on it, 0 above (the derivative of what
numpy computes; the same gradient for any input built symmetric, such as a a^T).
eigh: da = V (diag(dw) + F o (V^T dV)) V^T, F_ij = 1 / (w_j - w_i), read through the lower
triangle (UPLO="L") as numpy reads it.  svd (Townsend 2016, thin).  qr (m >= n): see _qr.
pinv (Golub and Pereyra): constant rank assumed.

Degenerate points raise ``ValueError`` naming the function: a singular matrix (inv,
slogdet, solve), repeated eigenvalues or singular values when eigenvector or singular-vector
gradients flow (the derivative does not exist there). When only the values flow, the
gradient at repeated values is one element of the subdifferential (documented on the ops).
"""

from __future__ import annotations

import numpy as np

from .. import ops as o
from ..backends.numpy.decomp import solve, svd
from ..engine.dispatch import KernelError
from ..registry import kernel_names as K
from ..registry.primitive import Primitive
from ..tensors.recording import tracks
from ..tensors.tensor import Tensor
from ..tensors.tracing import check_values, traced


def _T(t):
    return o.swapaxes(t, -1, -2)


def _eye(n, like):
    return Tensor(np.eye(n, dtype=like.dtype))


def _add2d(t):
    return o.reshape(t, t.shape + (1, 1))


def _inv_of(a, op):
    try:
        return o.linalg.inv(a)
    except KernelError as e:  # numpy's LinAlgError: an exactly singular matrix
        raise ValueError(f"{op}: the gradient at a singular matrix is not defined here (it "
                         f"needs inv(a), as autograd's does): {e}") from None  # fmt: skip


def _inv(dy, saved, attrs):
    """inv: dx = -y^T dy y^T"""
    (y,) = saved
    return {"x": lambda: o.neg(o.matmul(o.matmul(_T(y), dy), _T(y)))}


def _det(dy, saved, attrs):
    """det: dx = dy y inv(x)^T"""
    x, y = saved

    def grad_x():
        try:
            inv = o.linalg.inv(x)
        except KernelError:  # exactly singular: det(a) inv(a) is still adj(a), through the SVD
            return _add2d(dy) * _adjugate_T(x)
        return _add2d(dy * y) * _T(inv)

    return {"x": grad_x}


def _adjugate_T(a):
    """``adj(a)^T`` at a singular ``a``, with ops (so it differentiates again): at rank n-1
    from the SVD, ``det(U) det(Vh) U diag(p) Vh`` with ``p_i`` the product of the other
    singular values (stable); at lower rank, where the SVD's zero singular values are a kink,
    from the characteristic polynomial (a polynomial in ``a``: right at every order)."""
    n = a.shape[-1]
    s_np = np.linalg.svd(a._array, compute_uv=False)
    tol = s_np[..., :1] * n * np.finfo(a.dtype).eps
    if n > 1 and np.any(s_np[..., -2:-1] <= tol):
        return _T(_adjugate_leverrier(a))
    u, s, vh = o.linalg.svd(a)
    ones = o.ones_like(s[..., :1])
    before = o.concat([ones, o.cumprod(s, -1)[..., :-1]], -1)
    after = o.flip(o.concat([ones, o.cumprod(o.flip(s, -1), -1)[..., :-1]], -1), -1)
    sign = o.stop_gradient(o.sign(o.linalg.det(u) * o.linalg.det(vh)))
    return _add2d(sign) * o.matmul(u * o.expand_dims(before * after, -2), vh)


def _adjugate_leverrier(a):
    """Faddeev-LeVerrier: M_1 = I, c = -tr(a); M_k = a M_(k-1) + c I, c = -tr(a M_k) / k;
    ``adj(a) = (-1)^(n+1) M_n``."""
    n = a.shape[-1]
    eye = _eye(n, a)
    m, c = eye + o.zeros_like(a), -o.trace(a, axis1=-2, axis2=-1)
    for k in range(2, n + 1):
        m = o.matmul(a, m) + _add2d(c) * eye
        c = -o.trace(o.matmul(a, m), axis1=-2, axis2=-1) / k
    return m if n % 2 else -m


def _slogdet(dy, saved, attrs):
    """slogdet: dx = dlogabs inv(x)^T"""
    (x,) = saved
    return {"x": lambda: _add2d(dy[1]) * _T(_inv_of(x, "slogdet"))}


def _solve(dy, saved, attrs):
    """solve (y = a^-1 b): db = solve(a^T, dy), da = -db y^T"""
    a, b, x = saved
    vec = b.ndim == 1
    up = (lambda t: o.reshape(t, t.shape + (1,))) if vec else (lambda t: t)
    db = [None]

    def grad_b():
        if db[0] is None:
            db[0] = o.linalg.solve(_T(a), dy)
        return db[0]

    return {"a": lambda: o.neg(o.matmul(up(grad_b()), _T(up(x)))), "b": grad_b}


def _cholesky(dy, saved, attrs):
    """cholesky: dx = sym(L^-T Phi(L^T dy) L^-1), read through the lower triangle"""
    (L,) = saved

    def dx():
        n = L.shape[-1]
        phi = o.tril(o.matmul(_T(L), dy)) / (_eye(n, L) + 1)
        s = o.linalg.solve(_T(L), _T(o.linalg.solve(_T(L), _T(phi))))
        fold = np.tril(np.ones((n, n)), -1) * 2 + np.eye(n)  # numpy reads the lower triangle
        return (s + _T(s)) / 2 * Tensor(fold.astype(s.dtype))

    return {"x": dx}


def _gaps(w, op, what):
    """Refuse repeated values of ``w`` (on every call of a tv.jit program too)."""

    def check(values):
        d = values[..., None, :] - values[..., :, None]
        off = ~np.eye(values.shape[-1], dtype=bool)
        scale = np.finfo(values.dtype).eps * max(1.0, float(np.max(np.abs(values), initial=0)))
        if np.any(np.abs(d[..., off]) <= scale):
            raise ValueError(f"{op}: repeated {what}; the gradient of the vectors does not "
                             f"exist there (they are not unique). The {what} alone are not "
                             f"differentiable there either; their gradient is one element of "
                             f"the subdifferential (tv.linalg.{op}'s docs)")  # fmt: skip

    check_values(check, w)


def _no_zero_singular_value(values) -> None:
    if np.any(values == 0):
        raise ValueError("svd: a zero singular value of a non-square matrix; the gradient "
                         "of the singular vectors does not exist there")  # fmt: skip


def _flows(dy) -> bool:
    """True when the gradient ``dy`` of eigen- or singular vectors can be non-zero: it is,
    or an outer tape records it (``jvp``'s double VJP differentiates with respect to a dy
    that is all zeros at the point, so skipping the term on its value would lose it)."""
    return traced(dy) or bool(np.any(dy._array)) or tracks(dy)  # tv.jit: any next dy


def _inv_gaps(w, square):
    """F_ij = 1 / (f(w_j) - f(w_i)) off the diagonal, 0 on it (ops: differentiable in w)."""
    f = w * w if square else w
    n = w.shape[-1]
    eye = Tensor(np.eye(n, dtype=bool))
    diff = o.expand_dims(f, -2) - o.expand_dims(f, -1)
    return o.where(eye, o.zeros_like(diff), 1 / o.where(eye, o.ones_like(diff), diff))


def _eigh(dy, saved, attrs):
    """eigh: dx = V (diag(dw) + F o (V^T dV)) V^T, F_ij = 1 / (w_j - w_i)"""
    w, v = saved
    dw, dv = dy

    def dx():
        n = w.shape[-1]
        t = o.matmul(v * o.expand_dims(dw, -2), _T(v))
        if _flows(dv):
            _gaps(w, "eigh", "eigenvalues")
            t = t + o.matmul(o.matmul(v, _inv_gaps(w, False) * o.matmul(_T(v), dv)), _T(v))
        k = -1 if attrs["UPLO"] == "L" else 1
        tri = np.tril(np.ones((n, n)), -1) if k == -1 else np.triu(np.ones((n, n)), 1)
        return t * _eye(n, t) + (t + _T(t)) * Tensor(tri.astype(t.dtype))

    return {"x": dx}


def _svd(dy, saved, attrs):
    """svd: dx from dU, dS, dV (Townsend 2016, thin SVD)"""
    x, u, s, vh = saved
    if attrs["full_matrices"] and x.shape[-1] != x.shape[-2]:
        raise ValueError("svd: the gradient needs full_matrices=False for a non-square matrix")
    return {"x": lambda: _svd_thin(dy, x, u, s, vh)}


def _svd_thin(dy, x, u, s, vh):
    gu, gs, gvh = dy
    m, n = x.shape[-2:]
    k = min(m, n)
    flows = _flows(gu) or _flows(gvh)
    if flows:
        _gaps(s, "svd", "singular values")
        if m != n:
            check_values(_no_zero_singular_value, s)
    v, gv = _T(vh), _T(gvh)
    t = _eye(k, x) * o.expand_dims(gs, -1)
    if flows:
        f = _inv_gaps(s, True)
        utgu, vtgv = o.matmul(_T(u), gu), o.matmul(_T(v), gv)
        t = t + (f * (utgu - _T(utgu))) * o.expand_dims(s, -2)
        t = t + o.expand_dims(s, -1) * (f * (vtgv - _T(vtgv)))
    t = o.matmul(o.matmul(u, t), vh)
    if flows and m < n:
        t = t + o.matmul(o.matmul(u / o.expand_dims(s, -2), _T(gv)), _eye(n, x) - o.matmul(v, vh))
    elif flows and m > n:
        rest = o.matmul(o.matmul(v / o.expand_dims(s, -2), _T(gu)), _eye(m, x) - o.matmul(u, _T(u)))
        t = t + _T(rest)
    return t


# qr (m >= n; Walter and Lehmann 2018): M = R dR^T - dQ^T Q, b = dQ + Q copyltu(M),
# da = b R^-T, copyltu(M) = tril(M, -1) + tril(M, -1)^T + diag(M)
def _qr(dy, saved, attrs):
    """qr: dx = (dQ + Q copyltu(M)) R^-T, M = R dR^T - dQ^T Q"""
    x, q, r = saved
    dq, dr = dy

    def dx():
        if x.shape[-2] < x.shape[-1]:
            raise ValueError("qr: the gradient is implemented for m >= n (tall or square)")
        mm = o.matmul(r, _T(dr)) - o.matmul(_T(dq), q)
        low = o.tril(mm, -1)
        sym = low + _T(low) + mm * _eye(mm.shape[-1], mm)
        b = dq + o.matmul(q, sym)
        return _T(o.linalg.solve(r, _T(b)))

    return {"x": dx}


def _pinv(dy, saved, attrs):
    """pinv: dx by Golub and Pereyra's formula (constant rank)"""
    a, p = saved

    def dx():
        m, n = a.shape[-2:]
        t1 = o.neg(o.matmul(o.matmul(p, _T(dy)), p))
        t2 = o.matmul(o.matmul(o.matmul(p, _T(p)), dy), _eye(m, a) - o.matmul(a, p))
        t3 = o.matmul(o.matmul(o.matmul(_eye(n, a) - o.matmul(p, a), dy), _T(p)), p)
        return _T(t1 + t2 + t3)

    return {"x": dx}


def _tuple(fn):
    return lambda i, a: tuple(fn(i["x"]))


ROWS = (
    Primitive(
        K.MATRIX_INVERSE, kernel=lambda i, a: np.linalg.inv(i["x"]), vjp=_inv, outputs_to_save=(0,)
    ),
    Primitive(
        K.MATRIX_DETERMINANT,
        kernel=lambda i, a: np.asarray(np.linalg.det(i["x"])),
        vjp=_det,
        inputs_to_save=("x",),
        outputs_to_save=(0,),
    ),
    Primitive(
        K.LOG_MATRIX_DETERMINANT,
        kernel=lambda i, a: tuple(map(np.asarray, np.linalg.slogdet(i["x"]))),
        vjp=_slogdet,
        inputs_to_save=("x",),
    ),
    Primitive(
        K.MATRIX_SOLVE, kernel=solve, vjp=_solve, inputs_to_save=("a", "b"), outputs_to_save=(0,)
    ),
    Primitive(
        K.CHOLESKY,
        kernel=lambda i, a: np.linalg.cholesky(i["x"]),
        vjp=_cholesky,
        outputs_to_save=(0,),
    ),
    Primitive(
        K.SELF_ADJOINT_EIG,
        kernel=lambda i, a: tuple(np.linalg.eigh(i["x"], UPLO=a["UPLO"])),
        vjp=_eigh,
        outputs_to_save=(0, 1),
    ),
    Primitive(K.SVD, kernel=svd, vjp=_svd, inputs_to_save=("x",), outputs_to_save=(0, 1, 2)),
    Primitive(
        K.QR,
        kernel=lambda i, a: tuple(np.linalg.qr(i["x"], mode="reduced")),
        vjp=_qr,
        inputs_to_save=("x",),
        outputs_to_save=(0, 1),
    ),
    Primitive(
        K.PINV,
        kernel=lambda i, a: np.linalg.pinv(i["x"], rcond=a["rcond"]),
        vjp=_pinv,
        inputs_to_save=("x",),
        outputs_to_save=(0,),
    ),
)
