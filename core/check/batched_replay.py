"""Batched replay: run a tape's recorded kernels once on a stack of perturbed inputs.

A numerical Jacobian needs ``f(x ± eps e_k)`` for every element ``k``. Instead of ``2n``
Python calls, ``replay`` re-runs the recorded kernels on raw arrays that carry a leading batch
axis. Each primitive may carry a batching rule (``core/registry/batching.py``: elementwise kernels run
as they are, broadcasting kernels align ranks, reductions and shape kernels shift their
axes); a kernel without one runs once per batch row on raw arrays, and a custom primitive
runs its ``forward`` per row. The caller checks the result against direct calls of
the function (a replay cannot see value-dependent Python control flow or numpy escapes).
"""

from __future__ import annotations

import contextlib

import numpy as np

__all__ = ["Unbatchable", "replay"]


class Unbatchable(Exception):
    """The recorded computation cannot be replayed (a node without a kernel or forward)."""


def replay(nodes, batched: dict, values: dict | None = None, size: int = 0) -> dict:
    """Re-run ``nodes`` with some tensors replaced by batches.

    Args:
        nodes: recorded ``Node`` objects in execution order.
        batched: ``{tensor id: array}``, each array with a leading batch axis of ``size``.
        values: ``{tensor id: array}`` overriding unbatched recorded values (e.g. float64).
        size: the batch size.

    Returns:
        ``{tensor id: batched array}`` for every tensor that depends on a batched one.
    """
    env = dict(batched)
    values = values or {}
    with _blas_limit(sum(a.size for a in batched.values())):
        _replay_nodes(nodes, env, values, size)
    return env


_CONTROLLER: list = []


def _blas_limit(elements: int):
    """One BLAS thread for small batches: on a busy machine, waking BLAS threads for a
    0.1 ms product can cost tens of ms (threadpoolctl is optional)."""
    if elements > 1_000_000:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController

            libs = ThreadpoolController().select(user_api="blas").lib_controllers
            _CONTROLLER.append(list(libs) or None)
        except Exception:  # not installed, or no BLAS found: leave threads alone
            _CONTROLLER.append(None)
    if _CONTROLLER[0] is None:
        return contextlib.nullcontext()
    return _OneBlasThread(_CONTROLLER[0])


class _OneBlasThread:
    """Every BLAS library at one thread inside the block, restored after (threadpoolctl's
    ``limit()`` re-reads every library's state each time: 10x slower for small replays)."""

    def __init__(self, libs):
        self.libs, self.before = libs, ()

    def __enter__(self):
        self.before = [(lib, lib.num_threads) for lib in self.libs]
        for lib, n in self.before:
            if n != 1:
                lib.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        for lib, n in self.before:
            if n != 1:
                lib.set_num_threads(n)
        return False


def _replay_nodes(nodes, env, values, size) -> None:
    for node in nodes:
        if node.kernel == "StopGradient":  # a constant by design: its recorded value stays
            continue
        if not any(t.id in env for t in node.inputs.values()):
            continue
        ins = {}
        for k, t in node.inputs.items():
            if t.id in env:
                ins[k] = (env[t.id], True)
            else:
                ins[k] = (values.get(t.id, t.peek()), False)
        outs = _run(node, ins, size)
        for o, arr in zip(node.outputs, outs):
            env[o.id] = arr


def _run(node, ins, size) -> tuple:
    prim = node.primitive
    config = prim.kernels.get(node.backend)
    if config is None:
        return _evaluated(node, ins, size)
    fn, attrs = config.fn, node.attrs
    if prim.batch is not None:
        try:
            return prim.batch(fn, ins, attrs, size)
        except (ValueError, IndexError, TypeError):
            pass  # the rule did not fit these shapes: the row loop below is always right
    return _loop(lambda arrays: _as_tuple(fn(arrays, attrs)), ins, size)


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _loop(run, ins, size) -> tuple:
    rows = []
    for r in range(size):
        rows.append(run({k: (a[r] if b else a) for k, (a, b) in ins.items()}))
    return tuple(np.stack([np.asarray(row[i]) for row in rows]) for i in range(len(rows[0])))


def _evaluated(node, ins, size):
    """A node without a kernel (a custom primitive): its ``forward``, once per row."""
    prim = node.primitive
    if prim.forward is None:
        raise Unbatchable(
            f"node {node.id} ({node.label}) has no kernel and its primitive no forward"
        )
    return _loop(lambda arrays: prim.evaluate(node, arrays), ins, size)
