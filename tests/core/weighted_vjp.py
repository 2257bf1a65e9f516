"""Value and gradients of ``sum(f(*xs) * w)`` in tapeviz and in PyTorch, float64, with the same
fixed weight ``w`` (``linspace(0.5, 1.5)`` over the output), so that every output element's
gradient is seen: the comparison the surface tests make against PyTorch."""

from __future__ import annotations

import numpy as np
import torch

import tapeviz.core as tv


def _weights(shape, n):
    return np.linspace(0.5, 1.5, n).reshape(shape)


def tv_grads(f, *arrays):
    """tapeviz: (value, [gradient per array]); an input ``f`` does not use gets zeros."""
    xs = [tv.tensor(a) for a in arrays]
    with tv.Tape() as tape:
        tape.watch(*xs)
        y = f(*xs)
        loss = tv.sum(y * tv.tensor(_weights(y.shape, y.size)))
    gs = tape.gradient(loss, xs, unconnected_gradients="zero")
    return y.numpy(), [g.numpy() for g in gs]


def torch_grads(f, *arrays):
    """PyTorch: (value, [gradient per array]); an input ``f`` does not use gets zeros."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = f(*ts)
    w = torch.tensor(_weights(tuple(y.shape), y.numel()))
    gs = torch.autograd.grad((y * w).sum(), ts, allow_unused=True)
    grads = [np.zeros_like(a) if g is None else g.numpy() for a, g in zip(arrays, gs)]
    return y.detach().numpy(), grads
