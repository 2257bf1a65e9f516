"""Oracle cases (shared format, tests/core/oracle.py) for issue 13's contractions and dense
linear algebra, against HIPS autograd at random and edge points (empty, 1x1, stacks).

Functions of eigen- and singular vectors are written sign-invariantly (``v v^T``,
``u s v^T``): both systems are free to choose a vector's sign.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
from oracle_cases_numpy import OracleCase, make_case, rand, spd

import tapeviz.core as tv
from tapeviz.core.registry import kernel_names as K

CASES: list[OracleCase] = []
case = make_case(CASES)
x234 = rand(2, 3, 4)
_I4 = np.arange(4)


def _uv(usv):  # u_k v_k^T summed with weights: invariant to the paired signs
    u, s, vh = usv
    return (u[:, :2] * s[:2]) @ vh[:2]


# --- contraction ----------------------------------------------------------------------------
a34, b45, sq = rand(3, 4), rand(4, 5), rand(4, 4)
case("einsum[ii->i]", K.EINSUM, lambda x: tv.einsum("ii->i", x), lambda x: x[_I4, _I4], sq,
     note="autograd's einsum gradient rejects repeated indices")  # fmt: skip
case("einsum[ii]", K.EINSUM, lambda x: tv.einsum("ii", x), anp.trace, sq)
case("einsum[iij->ji]", K.EINSUM, lambda x: tv.einsum("iij->ji", x),
     lambda x: anp.stack([x[i, i] for i in range(3)], 1), rand(3, 3, 2))  # fmt: skip
for subs, args in [
    ("ij,jk->ik", (a34, b45)), ("ij->", (a34,)),
    ("...ij,...jk", (rand(2, 3, 4), rand(2, 4, 2))), ("i,i->", (rand(4), rand(4))),
    ("ij,j->ij", (a34, rand(4))), ("ijk,ik->j", (x234, rand(2, 4))), ("bij,j->bi", (x234, rand(4))),
    ("ij,kj->ikj", (rand(3, 1), rand(2, 4))),
]:  # fmt: skip
    nums = tuple(range(len(args)))
    case(f"einsum[{subs}]", K.EINSUM, lambda *xs, s=subs: tv.einsum(s, *xs),
         lambda *xs, s=subs: anp.einsum(s, *xs), *args, argnums=nums)  # fmt: skip
case("tensordot", K.EINSUM, lambda a, b: tv.tensordot(a, b, ([1, 2], [0, 1])),
     lambda a, b: anp.tensordot(a, b, ([1, 2], [0, 1])), x234, rand(3, 4, 2), argnums=(0, 1))  # fmt: skip
case("inner", K.EINSUM, tv.inner, anp.inner, a34, rand(2, 4), argnums=(0, 1))
case("outer", K.MUL, tv.outer, lambda a, b: a[:, None] * anp.ravel(b)[None, :], rand(3),
     rand(2, 2), argnums=(0, 1), note="autograd's outer gradient fails for a 2-D operand")  # fmt: skip
case("kron", K.MUL, tv.kron, anp.kron, rand(2, 3), rand(3, 2), argnums=(0, 1))


def _ag_cross(a, b):  # autograd's cross fails on broadcast operands
    x, y = [a[..., i] for i in range(3)], [b[..., i] for i in range(3)]
    return anp.stack([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2],
                      x[0] * y[1] - x[1] * y[0]], -1)  # fmt: skip


case("cross", K.MUL, tv.cross, _ag_cross, rand(4, 3), rand(3), argnums=(0, 1))
case("cross[same]", K.MUL, tv.cross, anp.cross, rand(3), rand(3), argnums=(0, 1))
case("trace", K.EINSUM, tv.trace, anp.trace, sq)
case("trace[offset]", K.EINSUM, lambda x: tv.trace(x, 1, 1, 2),
     lambda x: sum(x[:, i, i + 1] for i in range(3)), x234)  # fmt: skip
case(
    "diagonal[offset]",
    K.EINSUM,
    lambda x: tv.diagonal(x, -1),
    lambda x: x[1:][_I4[:2], _I4[:2]],
    a34,
)
case("diag[vector]", K.PAD, lambda x: tv.diag(x, 1), lambda x: anp.diag(x, 1), rand(3))
case("diag[matrix]", K.EINSUM, tv.diag, lambda x: x[_I4[:3], _I4[:3]], a34,
     note="autograd's diagonal has no second derivative: indexing instead")  # fmt: skip
case("tril", K.SELECT, lambda x: tv.tril(x, -1), lambda x: anp.tril(x, -1), a34)
case("triu", K.SELECT, lambda x: tv.triu(x, 1), lambda x: anp.triu(x, 1), x234)
for sa, sb in [((), (3,)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3, 4), (4, 2)),
               ((2, 3), (2, 3, 4))]:  # fmt: skip
    # numpy's dot is a product, a matrix product or a contraction, by the operands' ranks
    kernel = K.MUL if not sa else K.EINSUM if len(sa) + len(sb) > 3 else K.MATMUL
    case(f"dot{list(sa)}{list(sb)}", kernel, tv.dot, anp.dot, rand(*sa), rand(*sb), argnums=(0, 1))

# --- dense linear algebra -------------------------------------------------------------------
la = tv.linalg
case("inv", K.MATRIX_INVERSE, la.inv, anp.linalg.inv, sq + 3 * np.eye(4))
case("inv[batch]", K.MATRIX_INVERSE, la.inv, anp.linalg.inv, rand(2, 3, 3) + 3 * np.eye(3))
case("det", K.MATRIX_DETERMINANT, la.det, anp.linalg.det, sq)
case("slogdet", K.LOG_MATRIX_DETERMINANT, lambda a: la.slogdet(a)[1],
     lambda a: anp.linalg.slogdet(a)[1], sq)  # fmt: skip
case("slogdet[negative det]", K.LOG_MATRIX_DETERMINANT, lambda a: la.slogdet(a)[1] * la.slogdet(a)[0],
     lambda a: anp.linalg.slogdet(a)[1] * anp.linalg.slogdet(a)[0], np.diag([-1.0, 2.0, 3.0]) + 0.1)  # fmt: skip
case("solve[matrix]", K.MATRIX_SOLVE, la.solve, anp.linalg.solve, sq + 3 * np.eye(4), rand(4, 2),
     argnums=(0, 1))  # fmt: skip
case("solve[vector]", K.MATRIX_SOLVE, la.solve, anp.linalg.solve, sq + 3 * np.eye(4), rand(4),
     argnums=(0, 1))  # fmt: skip
case("cholesky", K.CHOLESKY, lambda a: la.cholesky(a @ a.T + 4 * tv.tensor(np.eye(4, dtype=a.dtype))),
     lambda a: anp.linalg.cholesky(a @ a.T + 4 * np.eye(4)), sq)  # fmt: skip


def _lower_fold(w, a):
    """autograd's symmetric gradient folded onto the lower triangle numpy reads (eigh's and
    now cholesky's convention in tapeviz: the derivative of what numpy computes)."""
    g = autograd.grad(lambda a: anp.sum(anp.linalg.cholesky(a) * w))(a)
    n = len(a)
    return [g * (np.tril(np.ones((n, n)), -1) * 2 + np.eye(n))]


case("cholesky[direct]", K.CHOLESKY, la.cholesky, anp.linalg.cholesky, spd(3), hvp=False,
     expect=_lower_fold,
     note="the gradient lives on the lower triangle numpy reads (autograd: symmetric)")  # fmt: skip


def _sym(m):
    return (m + m.T) / 2


def _proj(v, k):  # v_k v_k^T: invariant to the eigenvector's sign
    return v[:, k : k + 1] * v[:, k]


case("eigh[values]", K.SELF_ADJOINT_EIG, lambda a: la.eigh(_sym(a))[0],
     lambda a: anp.linalg.eigh(_sym(a))[0], sq)  # fmt: skip
case("eigh[vectors]", K.SELF_ADJOINT_EIG, lambda a: _proj(la.eigh(_sym(a))[1], 1),
     lambda a: _proj(anp.linalg.eigh(_sym(a))[1], 1), sq)  # fmt: skip
case("eigh[lower]", K.SELF_ADJOINT_EIG, lambda a: la.eigh(a)[0] + _proj(la.eigh(a)[1], 0)[0],
     lambda a: anp.linalg.eigh(a)[0] + _proj(anp.linalg.eigh(a)[1], 0)[0], sq,
     hvp=False, note="reads the lower triangle only; gradient as autograd's")  # fmt: skip
case("eig[symmetric]", K.SELF_ADJOINT_EIG, lambda a: la.eig(_sym(a))[0],
     lambda a: anp.linalg.eigh(_sym(a))[0], sq, float32=False,
     note="eig of a real symmetric matrix is eigh (ascending eigenvalues)")  # fmt: skip
for shape in [(4, 4), (5, 3), (3, 5)]:
    a = rand(*shape)
    case(f"svd{list(shape)}", K.SVD,
         lambda a: la.svd(a, full_matrices=False)[1] + tv.sum(_uv(la.svd(a, full_matrices=False))),
         lambda a: anp.linalg.svd(a, full_matrices=False)[1]
         + anp.sum(_uv(anp.linalg.svd(a, full_matrices=False))), a)  # fmt: skip
case("svd[values]", K.SVD, lambda a: la.svd(a, compute_uv=False),
     lambda a: anp.linalg.svd(a, compute_uv=False), rand(3, 5))  # fmt: skip
case("pinv", K.PINV, la.pinv, anp.linalg.pinv, rand(5, 3))
case("pinv[wide]", K.PINV, la.pinv, anp.linalg.pinv, rand(2, 4))
for ord_, axis, shape in [(None, None, (2, 3)), (2, 1, (2, 3)), (3, 0, (2, 3)), (1, None, (4,)),
                          (np.inf, None, (4,)), ("fro", None, (3, 3)), ("nuc", None, (3, 4)),
                          (None, (0, 2), (2, 3, 4)), (2.5, -1, (3, 4))]:  # fmt: skip
    case(f"norm[{ord_},{axis}]", K.SUM if ord_ != "nuc" else K.SVD,
         lambda x, o=ord_, ax=axis: la.norm(x, o, ax),
         lambda x, o=ord_, ax=axis: anp.linalg.norm(x, o, ax), rand(*shape))  # fmt: skip
# autograd's norm gradient is wrong or missing for ord 1 and inf: the composites instead
CASES[:] = [c for c in CASES if c.id not in ("norm[1,None]", "norm[inf,None]")]
case("norm[1]", K.ABS, lambda x: la.norm(x, 1), lambda x: anp.sum(anp.abs(x)), rand(4))
case("norm[inf]", K.MAX, lambda x: la.norm(x, np.inf), lambda x: anp.max(anp.abs(x)), rand(4))
case("norm[-inf,0]", K.MIN, lambda x: la.norm(x, -np.inf, 0),
     lambda x: anp.min(anp.abs(x), 0), rand(3, 2))  # fmt: skip
case("norm[matrix 1]", K.MAX, lambda x: la.norm(x, 1), lambda x: anp.max(anp.sum(anp.abs(x), 0)),
     rand(3, 4))  # fmt: skip
case("norm[matrix 2]", K.SVD, lambda x: la.norm(x, 2),
     lambda x: anp.linalg.svd(x, compute_uv=False)[0], rand(3, 4))  # fmt: skip


def _norm_zero_rows(w, x, p=2.0):
    """PyTorch's subgradient: 0 where a row's norm is 0, x |x|^(p-2) / norm^(p-1) elsewhere."""
    n = np.sum(np.abs(x) ** p, -1, keepdims=True) ** (1 / p)
    safe = np.where(n == 0, 1.0, n)
    g = np.sign(x) * np.abs(x) ** (p - 1) / safe ** (p - 1)
    return [np.where(n == 0, 0.0, g) * w[..., None]]


# a zero norm: gradient 0 (PyTorch; std at zero spread too), autograd's is 0/0 = NaN
_ZERO_ROWS = np.array([[0.0, 0.0, 0.0], [0.6, -0.8, 0.5]])
for ord_ in (None, 2, 3, 1.5):
    case(f"norm[{ord_}, zero row]", [K.SUM], lambda x, o=ord_: la.norm(x, o, -1),
         lambda x, o=ord_: anp.linalg.norm(x, o, -1), _ZERO_ROWS, hvp=False,
         expect=lambda w, x, o=ord_: _norm_zero_rows(w, x, 2.0 if o is None else o),
         note="gradient 0 where the norm is 0 (PyTorch; autograd gives 0/0 = NaN)")  # fmt: skip
case(
    "norm[zero vector]",
    [K.SUM],
    la.norm,
    anp.linalg.norm,
    np.zeros(3),
    hvp=False,
    expect=lambda w, x: [np.zeros(3)],
    note="gradient 0 at 0 (PyTorch; autograd: NaN)",
)
case("norm[fro, zero]", [K.SUM], lambda x: la.norm(x, "fro"), lambda x: anp.linalg.norm(x, "fro"),
     np.zeros((2, 2)), hvp=False, expect=lambda w, x: [np.zeros((2, 2))],
     note="gradient 0 at 0 (PyTorch; autograd: NaN)")  # fmt: skip

# --- edge shapes: empty, 1x1, stacks of matrices ----------------------------------------------
case("einsum[empty]", K.EINSUM, lambda a, b: tv.einsum("ij,jk->ik", a, b),
     lambda a, b: anp.einsum("ij,jk->ik", a, b), rand(2, 0), rand(0, 3), argnums=(0, 1))  # fmt: skip
case("inv[1x1]", K.MATRIX_INVERSE, la.inv, anp.linalg.inv, np.array([[0.7]]))
case("det[batch]", K.MATRIX_DETERMINANT, la.det, anp.linalg.det, rand(2, 3, 3))
case("slogdet[batch]", K.LOG_MATRIX_DETERMINANT, lambda a: la.slogdet(a)[1],
     lambda a: anp.linalg.slogdet(a)[1], rand(2, 3, 3) + 2 * np.eye(3))  # fmt: skip
case("solve[batch]", K.MATRIX_SOLVE, la.solve, anp.linalg.solve, rand(2, 3, 3) + 3 * np.eye(3),
     rand(2, 3, 2), argnums=(0, 1))  # fmt: skip


def _from_lower(a, np_=np):
    """The symmetric matrix numpy's cholesky sees: the lower triangle of ``a``, mirrored."""
    low = np_.tril(a)
    return low + np_.swapaxes(np_.tril(a, -1), -1, -2)


case("cholesky[batch]", K.CHOLESKY, lambda a: la.cholesky(_from_lower(a, tv)),
     lambda a: anp.linalg.cholesky(_from_lower(a, anp)), np.stack([spd(3), spd(3)]))  # fmt: skip
case("eigh[batch]", K.SELF_ADJOINT_EIG,
     lambda a: la.eigh(a)[0] + tv.sum(la.eigh(a)[1] ** 2 * np.arange(3.0, dtype=a.dtype), -1),
     lambda a: anp.linalg.eigh(a)[0] + anp.sum(anp.linalg.eigh(a)[1] ** 2 * np.arange(3.0), -1),
     np.stack([spd(3), spd(3)]))  # fmt: skip
case("svd[batch]", K.SVD, lambda a: la.svd(a, compute_uv=False),
     lambda a: anp.linalg.svd(a, compute_uv=False), rand(2, 4, 3))  # fmt: skip
case("pinv[batch]", K.PINV, la.pinv, anp.linalg.pinv, rand(2, 4, 3))


def _qr_tv(a):
    return tv.concat([tv.ravel(m) for m in tv.linalg.qr(a)])


def _qr_np(a):
    return np.concatenate([np.ravel(m) for m in np.linalg.qr(a)])


def _numerical_grad(f):
    """``expect`` from central differences in float64 (step 1e-5, error ~1e-10)."""

    def expect(w, a):
        g, h = np.zeros_like(a), 1e-5
        for i in np.ndindex(a.shape):
            e = np.zeros_like(a)
            e[i] = h
            g[i] = (np.sum(f(a + e) * w) - np.sum(f(a - e) * w)) / (2 * h)
        return (g,)

    return expect


for shape in [(4, 3), (3, 3), (2, 4, 3)]:
    case(f"qr{list(shape)}", K.QR, _qr_tv, _qr_np, rand(*shape), hvp=False,
         note="autograd has no qr gradient: the expected one is numerical (float64 central "
         "differences); test_numpy_dispatch.py checks second order with tv.check_grads",
         expect=_numerical_grad(_qr_np))  # fmt: skip
