"""Oracle cases for linear algebra (matmul, the fused dense kernel), shape and indexing
kernels, conv2d and pooling (with their backprop kernels, differentiated by the HVPs), and
the fused softmax cross-entropy, whose labels need not sum to 1 (issue 12, class 3).
"""

from __future__ import annotations

import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
from oracle import OracleCase
from oracle_cases_ops import NAN, rand

import tapeviz.core as tv
from tapeviz.core.ops.matrix import fused_matmul
from tapeviz.core.ops.nn import softmax_cross_entropy_with_logits as sce
from tapeviz.core.registry import kernel_names as K

CASES: list[OracleCase] = []


def case(id, kernels, tv_fn, ag_fn, *args, **kw):
    CASES.append(OracleCase(id, tuple(kernels), tv_fn, ag_fn, tuple(args), **kw))


# --- matmul: numpy's rules (batch broadcast, 1-D operands, size 0); both operands
MATMUL_SHAPES = [((2, 3), (3, 4)), ((2, 2, 3), (3, 4)), ((1, 2, 3), (2, 3, 2)), ((3,), (3, 4)),
                 ((2, 3), (3,)), ((3,), (3,)), ((2, 0), (0, 3)), ((0, 3), (3, 2))]  # fmt: skip
for sa, sb in MATMUL_SHAPES:
    kernels = [K.MATMUL] + ([K.FUSED_MATMUL] if len(sa) == len(sb) == 2 else [])
    case(
        f"matmul{list(sa)}{list(sb)}",
        kernels,
        lambda a, b: tv.matmul(a, b) ** 2,
        lambda a, b: anp.matmul(a, b) ** 2,
        rand(sa, "mma"),
        rand(sb, "mmb"),
        argnums=(0, 1),
    )

_ACT = {"linear": lambda z: z, "relu": lambda z: anp.where(z > 0, z, 0.0), "tanh": anp.tanh,
        "sigmoid": asp.expit}  # fmt: skip
for act in _ACT:
    for ta, tb in ((False, False), (True, False), (False, True), (True, True)):
        a = rand((3, 2) if ta else (2, 3), "fa" + act)
        b = rand((4, 3) if tb else (3, 4), "fb" + act)
        kernels = [K.FUSED_MATMUL] + {"relu": [K.RELU_GRAD], "tanh": [K.TANH_GRAD],
                                      "sigmoid": [K.SIGMOID_GRAD]}.get(act, [])  # fmt: skip

        def tv_fn(a, b, c, act=act, ta=ta, tb=tb):
            return fused_matmul(a, b, c, act, ta, tb) ** 2

        def ag_fn(a, b, c, act=act, ta=ta, tb=tb):
            return _ACT[act](anp.matmul(a.T if ta else a, b.T if tb else b) + c) ** 2

        case(f"fused_matmul[{act},{ta},{tb}]", kernels, tv_fn, ag_fn, a, b,
             rand((4,), "fc" + act), argnums=(0, 1, 2))  # fmt: skip


def _ag_pad(x, pads):
    """Zero padding by concatenation (autograd 1.9.1: its pad VJP raises a TypeError)."""
    for axis, (before, after) in enumerate(pads):
        shape = list(anp.shape(x))
        parts = []
        for n in (before, 0, after):
            shape[axis] = n
            parts.append(np.zeros(shape) if n else None)
        parts[1] = x
        x = anp.concatenate([p for p in parts if p is not None], axis)
    return x


# --- shape and indexing
X = rand((2, 3, 4), "shape")
case("reshape", [K.RESHAPE], lambda x: tv.reshape(x, (4, 6)) ** 2,
     lambda x: anp.reshape(x, (4, 6)) ** 2, X)  # fmt: skip
case("transpose", [K.TRANSPOSE], lambda x: tv.transpose(x, (2, 0, 1)) ** 2,
     lambda x: anp.transpose(x, (2, 0, 1)) ** 2, X)  # fmt: skip
case(
    "concat",
    [K.CONCAT, K.SLICE],
    lambda a, b: tv.concat([a, b * b], 1),
    lambda a, b: anp.concatenate([a, b * b], 1),
    X,
    rand((2, 1, 4), "cat"),
    argnums=(0, 1),
)
case(
    "split",
    [K.SPLIT, K.CONCAT],
    lambda x: _split_mix(tv.split(x, [1, 3, 0], 2), tv.concat),
    lambda x: _split_mix([x[..., :1], x[..., 1:], x[..., 4:]], anp.concatenate),
    X,
)


def _split_mix(parts, concat):
    a, b, c = parts
    return concat([b * b, a * 3, c], -1)


case("getitem[basic]", [K.SLICE, K.SLICE_GRAD], lambda x: x[1:, ::2, -1] ** 2,
     lambda x: x[1:, ::2, -1] ** 2, X)  # fmt: skip
case("getitem[reversed, None]", [K.SLICE, K.SLICE_GRAD], lambda x: x[::-1, None, 1:] ** 2,
     lambda x: x[::-1, None, 1:] ** 2, X)  # fmt: skip
case("getitem[repeated index]", [K.SLICE, K.SLICE_GRAD],
     lambda x: tv.getitem(x, (np.array([0, 1, 0]), slice(None), 2)) ** 2,
     lambda x: x[np.array([0, 1, 0]), :, 2] ** 2, X)  # fmt: skip
case("getitem[bool mask]", [K.SLICE, K.SLICE_GRAD], lambda x: tv.getitem(x, X > 0) ** 2,
     lambda x: x[X > 0] ** 2, X)  # fmt: skip
case("pad", [K.PAD, K.SLICE], lambda x: tv.pad(x, ((1, 0), (0, 2), (1, 1))) ** 2,
     lambda x: _ag_pad(x, ((1, 0), (0, 2), (1, 1))) ** 2, X)  # fmt: skip
case("tile", [K.TILE], lambda x: tv.tile(x, (2, 1, 3)) ** 2,
     lambda x: anp.tile(x, (2, 1, 3)) ** 2, X)  # fmt: skip
case("broadcast_to", [K.BROADCAST_TO], lambda x: tv.broadcast_to(x, (3, 2, 1, 4)) ** 2,
     lambda x: (x + np.zeros((3, 2, 1, 4))) ** 2, rand((2, 1, 4), "bcast"))  # fmt: skip


# --- conv2d (NHWC, HWIO) and pooling; autograd's versions are sums of strided slices
def _ag_conv(x, w, stride, pads):
    (t, b), (lft, r) = pads
    x = _ag_pad(x, ((0, 0), (t, b), (lft, r), (0, 0)))
    kh, kw = w.shape[:2]
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = 0.0
    for p in range(kh):
        for q in range(kw):
            window = x[:, p : p + stride * oh : stride, q : q + stride * ow : stride, :]
            out = out + anp.matmul(window, w[p, q])
    return out


CONV = [("valid", 1, ((0, 0), (0, 0))), ("same", 1, ((1, 1), (1, 1))), ("valid", 2, ((0, 0),) * 2)]
for padding, stride, pads in CONV:
    case(f"conv2d[{padding},{stride}]",
         [K.CONV2D, K.CONV2D_BACKPROP_INPUT, K.CONV2D_BACKPROP_FILTER],
         lambda x, w, p=padding, s=stride: tv.conv2d(x, w, s, p) ** 2,
         lambda x, w, s=stride, pd=pads: _ag_conv(x, w, s, pd) ** 2,
         rand((2, 5, 5, 2), "convx"), rand((3, 3, 2, 3), "convw"), argnums=(0, 1))  # fmt: skip


def _ag_windows(x, k, stride):
    oh, ow = (x.shape[1] - k) // stride + 1, (x.shape[2] - k) // stride + 1
    return [x[:, p : p + stride * oh : stride, q : q + stride * ow : stride, :]
            for p in range(k) for q in range(k)]  # fmt: skip


def _ag_max_pool(x, k=2, stride=2):
    return anp.max(anp.stack(_ag_windows(x, k, stride)), axis=0)


def _ag_avg_pool_same(x):
    """3x3 windows, stride 1, 'same': the mean over each window's real elements."""
    padded = _ag_pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    counts = sum(_ag_windows(np.pad(np.ones(x.shape), ((0, 0), (1, 1), (1, 1), (0, 0))), 3, 1))
    return sum(_ag_windows(padded, 3, 1)) / counts


PX = rand((2, 4, 5, 3), "pool")
# the Hessian-vector product runs MaxPoolGrad's gradient, MaxPoolGather
case("max_pool", [K.MAX_POOL, K.MAX_POOL_GRAD, K.MAX_POOL_GATHER], lambda x: tv.max_pool2d(x, 2) ** 2,
     lambda x: _ag_max_pool(x) ** 2, PX)  # fmt: skip
case(
    "max_pool[stride 1]",
    [K.MAX_POOL, K.MAX_POOL_GRAD],
    lambda x: tv.max_pool2d(x, 2, 1) ** 2,
    lambda x: _ag_max_pool(x, 2, 1) ** 2,
    PX,
)
case(
    "avg_pool[same]",
    [K.AVG_POOL, K.AVG_POOL_GRAD],
    lambda x: tv.avg_pool2d(x, 3, 1, "same") ** 2,
    lambda x: _ag_avg_pool_same(x) ** 2,
    PX,
)

# ties and NaN inside a window: dy goes to the window's first maximum, and to a NaN (which
# is the window's maximum) as in PyTorch and TensorFlow; autograd shares a tie evenly and
# gives NaN for a NaN window (no element equals NaN)
PT = np.array([[1.0, 1.0, 0.5, NAN], [0.2, 1.0, 2.0, 3.0]]).reshape(1, 2, 4, 1)


def _first_max_grad(w, x):
    g = np.zeros_like(x)
    for j in range(2):
        window = x[0, :, 2 * j : 2 * j + 2, 0]
        p, q = divmod(int(np.argmax(window)), 2)  # numpy's argmax: first maximum, NaN first
        g[0, p, 2 * j + q, 0] = w[0, 0, j, 0]
    return [g]


case("max_pool[tie, nan]", [K.MAX_POOL], lambda x: tv.max_pool2d(x, 2), _ag_max_pool, PT,
     hvp=False, expect=_first_max_grad,
     note="a tie's gradient goes to the first maximum and a NaN window's to its NaN "
          "(PyTorch, TensorFlow); autograd shares ties and gives NaN")  # fmt: skip


# --- softmax cross-entropy: rows of labels that do not sum to 1, second order in both
def _ag_sce(labels, logits):
    rows = max(logits.size // logits.shape[-1], 1)
    log_p = logits - asp.logsumexp(logits, axis=-1, keepdims=True)
    return -anp.sum(labels * log_p) / rows


LABELS = {
    "one-hot": np.eye(4)[[1, 3, 0]],
    "soft": np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]]),
    "rows not summing to 1": np.array(
        [[0.5, 0.2, 0.0, 0.9], [2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    ),  # fmt: skip
    "negative": np.array([[-0.5, 1.0, 0.25, 0.0], [0.0, -1.0, 3.0, 0.5], [0.1, 0.1, 0.1, -0.2]]),
}
for label, t in LABELS.items():
    case(f"softmax_cross_entropy[{label}]",
         [K.SOFTMAX_CROSS_ENTROPY, K.SOFTMAX_CROSS_ENTROPY_GRAD], sce, _ag_sce,
         t, rand((3, 4), "logits") * 2, argnums=(0, 1))  # fmt: skip
case(
    "softmax_cross_entropy[batch, 3-D]",
    [K.SOFTMAX_CROSS_ENTROPY],
    sce,
    _ag_sce,
    rand((2, 2, 3), "labels3", "positive"),
    rand((2, 2, 3), "logits3"),
    argnums=(0, 1),
)
case("softmax_cross_entropy[squared]", [K.SOFTMAX_CROSS_ENTROPY_GRAD],
     lambda t, z: sce(t, z) ** 2, lambda t, z: _ag_sce(t, z) ** 2,
     LABELS["rows not summing to 1"], rand((3, 4), "logits2"), argnums=(0, 1))  # fmt: skip
