"""Finite differences of a checking problem (``core.check.runner`` describes the protocol):
directional derivatives along a direction, and numerical Jacobians, batched over every
perturbation when the recorded computation allows (``batched_replay``), else one pair of
direct calls per element. Each comes central and one-sided (the two sides tell a kink)."""

from __future__ import annotations

import numpy as np

from .batched_replay import Unbatchable

__all__ = ["perturbed", "directional", "jacobians", "jacobians_per_element"]


def perturbed(args, index, delta):
    out = list(args)
    out[index] = np.asarray(args[index] + delta)  # 0-d arrays would become numpy scalars
    return out


def directional(p, k, u, eps) -> tuple:
    """Derivatives of f along ``u`` for differentiable arg ``k``: central, (f(x + eps u) -
    f(x - eps u)) / (2 eps), and the two one-sided ones (for kinks)."""
    i = p.diff[k]
    plus = p.call(perturbed(p.args, i, eps * u))
    minus = p.call(perturbed(p.args, i, -eps * u))
    return (plus - minus) / (2 * eps), (plus - p.y) / eps, (p.y - minus) / eps


def jacobians(p, k, eps, u, d):
    """Numerical Jacobians (y.size, x.size) of differentiable arg ``k``: central and the two
    one-sided ones, ``((J, J_plus, J_minus), strategy)``. Batched when a batch reproduces the
    direct directional derivative ``d`` along ``u``, else one call per element."""
    x = p.args[p.diff[k]]
    n, flat = x.size, x.reshape(-1)
    if n == 0 or p.y.size == 0:
        return (np.zeros((p.y.size, n)),) * 3, "empty"
    biggest = max([n] + [o.size for node in p.nodes for o in node.outputs if o.peek() is not None])
    chunk = max(1, int(4e6 // (2 * max(biggest, 1))))
    try:
        parts = []
        for start in range(0, n, chunk):
            idx = np.arange(start, min(n, start + chunk))
            c, rows = len(idx), np.arange(len(idx))
            X = np.repeat(flat[None], 2 * c, axis=0)
            X[rows, idx] += eps
            X[c + rows, idx] -= eps
            Y, strategy = p.batched(k, X.reshape((2 * c,) + x.shape))
            Y = Y.reshape(2 * c, -1)
            parts.append(_columns(Y[:c], Y[c:], X[rows, idx], X[c + rows, idx], flat[idx], p.y))
        if len(parts) == 1:  # one chunk: no copies
            J, Jp, Jm = parts[0]
        else:
            J, Jp, Jm = (np.concatenate([q[j] for q in parts], axis=1) for j in range(3))
        scale = np.abs(d).max(initial=0) + 1.0
        noise = np.sqrt(n) * 1e3 * np.finfo(float).eps * (np.abs(p.y).max(initial=0) + 1) / eps
        if np.abs(J @ u.reshape(-1) - d.reshape(-1)).max(initial=0) <= 1e-5 * scale + noise:
            return (J, Jp, Jm), strategy
    except (Unbatchable, ValueError, TypeError, IndexError, MemoryError):
        pass
    return jacobians_per_element(p, k, eps), "per element"


def _columns(y_plus, y_minus, x_plus, x_minus, x0, y0):
    """Central and one-sided difference quotients, one column per perturbed element."""
    y0 = y0.reshape(1, -1)
    central = (y_plus - y_minus) / (x_plus - x_minus)[:, None]
    plus = (y_plus - y0) / (x_plus - x0)[:, None]
    minus = (y0 - y_minus) / (x0 - x_minus)[:, None]
    return central.T, plus.T, minus.T


def jacobians_per_element(p, k, eps):
    """``(J, J_plus, J_minus)`` with two direct calls per element."""
    i = p.diff[k]
    x = p.args[i]
    flat = x.reshape(-1)
    y_plus, y_minus = np.zeros((x.size, p.y.size)), np.zeros((x.size, p.y.size))
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = eps
        y_plus[j] = p.call(perturbed(p.args, i, e.reshape(x.shape))).reshape(-1)
        y_minus[j] = p.call(perturbed(p.args, i, -e.reshape(x.shape))).reshape(-1)

    def step(sign):  # the perturbed value as the forward sees it (float32 rounds)
        return (flat + sign * eps).astype(x.dtype).astype(np.float64)

    return _columns(y_plus, y_minus, step(1), step(-1), flat.astype(np.float64), p.y)
