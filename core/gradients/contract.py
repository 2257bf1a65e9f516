"""Gradient of ``einsum`` (written with einsum, so it differentiates again).

For operand k with subscripts s_k: d x_k = einsum(dy and the other operands -> s_k). A letter
repeated in s_k (a diagonal, ``ii->i``) gets a fresh letter tied to the old one by an identity
matrix; a letter summed only inside operand k is broadcast back (the gradient is constant along
it). Size-1 broadcast axes are summed back by the engine.
"""

from __future__ import annotations

import string

import numpy as np

from .. import kernel_names as K
from .. import ops as o
from ..tensor import Tensor


def _einsum(dy, saved, attrs):
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
        if len(kept) == len(mine):
            return g
        g = o.reshape(g, tuple(n if c in seen else 1 for c, n in zip(mine, shape)))
        return o.broadcast_to(g, tuple(sizes.get(c, n) for c, n in zip(mine, shape)))

    return dx


GRADIENTS = [(K.EINSUM, _einsum, "*", ())]
