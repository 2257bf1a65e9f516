"""The ``einsum`` primitive; its VJP is written with einsum, so it differentiates again.

For operand k with subscripts s_k: d x_k = einsum(dy and the other operands -> s_k). A letter
repeated in s_k (a diagonal, ``ii->i``) gets a fresh letter tied to the old one by an identity
matrix; a letter summed only inside operand k is broadcast back (the gradient is constant along
it). An axis of size 1 in operand k that broadcasts against a longer one elsewhere (``...``
broadcasting, ``(3, 1, 4)`` with ``(2, 4)``) is summed back to size 1 here.
"""

from __future__ import annotations

import string

import numpy as np

from .. import ops as o
from ..backends.numpy.contract import einsum
from ..registry import kernel_names as K
from ..registry.primitive import Primitive
from ..tensors.tensor import Tensor


def _einsum(dy, saved, attrs):
    """einsum: d x_k = einsum of dy with the other operands, to x_k's subscripts"""
    ins, out = attrs["subscripts"].split("->")
    subs = ins.split(",")
    return {f"x{k}": _operand_grad(dy, saved, subs, out, k) for k in range(len(subs))}


def _operand_grad(dy, xs, subs, out, k):
    def dx():
        used = set("".join(subs) + out)
        fresh = iter(c for c in string.ascii_letters if c not in used)
        sizes = {c: n for s, x in zip(subs, xs) for c, n in zip(s, x.shape) if n != 1}
        mine, eyes = [], []
        for c in subs[k]:  # a repeated letter: a fresh one, tied by an identity matrix
            if c in mine:
                d = next(fresh)
                eyes.append((c + d, Tensor(np.eye(sizes.get(c, 1), dtype=dy.dtype))))
                c = d
            mine.append(c)
        others = [(s, x) for j, (s, x) in enumerate(zip(subs, xs)) if j != k]
        terms = [(out, dy)] + others + eyes
        seen = set("".join(s for s, _ in terms))
        kept = "".join(c for c in mine if c in seen)
        g = o.einsum(",".join(s for s, _ in terms) + "->" + kept, *[x for _, x in terms])
        shape = xs[k].shape
        if len(kept) != len(mine):  # letters only operand k has: size 1, broadcast below
            dims = iter(g.shape)
            g = o.reshape(g, tuple(next(dims) if c in seen else 1 for c in mine))
        wide = tuple(i for i, (n, m) in enumerate(zip(shape, g.shape)) if n == 1 and m != 1)
        if wide:  # operand k broadcast along these axes: its gradient is their sum
            g = o.sum(g, wide, keepdims=True)
        return g if g.shape == shape else o.broadcast_to(g, shape)

    return dx


ROWS = (
    Primitive(K.EINSUM, kernel=einsum, vjp=_einsum, save_all_inputs=True),
)  # "*": it saves every input
