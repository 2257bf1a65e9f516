"""``FunctionProblem``: a function at given arguments, as the gradient checker sees it.

It is the problem ``core.check.runner`` checks for ``check_grads`` (audit's is
``node_problem.py``): direct calls (the ground truth for finite differences, with
``stop_gradient``'s recorded values held), reverse mode on a persistent tape, forward mode
(``tv.jvp``) and batched replay of the recorded kernels.
"""

from __future__ import annotations

import numpy as np

from ..autodiff.functional import jvp
from ..autodiff.tape import Tape
from ..ops.elementwise import FROZEN_STOPS, stop_gradient
from ..tensors import recording
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor
from .batched_replay import Unbatchable, replay

__all__ = ["FunctionProblem", "wrap_arguments"]


def _wrap(a, variable=False):
    """An argument as f is called with it: an array becomes a Tensor, or a Variable where the
    user passed a Variable (no-op forms copy a Variable but not a Tensor, so f may record a
    different computation for each: the checker checks the one the user runs)."""
    if not isinstance(a, (np.ndarray, np.generic)):
        return a
    return Variable(np.array(a)) if variable else Tensor(np.asarray(a))


def wrap_arguments(args, variables=(), diff=None):
    """The arguments as ``f`` is called with them: each checked one (index in ``diff``; every
    array when None) a Tensor or Variable, the others exactly as given."""
    return [_wrap(a, i in variables) if diff is None or i in diff else a
            for i, a in enumerate(args)]  # fmt: skip


class FunctionProblem:
    """``f`` at ``args`` as the checker sees it: direct calls (the ground truth for finite
    differences), reverse mode on a persistent tape, forward mode and batched replay."""

    def __init__(self, f, args, diff, name, variables=()):
        self.f, self.args, self.diff, self.name = f, list(args), list(diff), name
        self.variables = frozenset(variables)  # indices of the arguments given as Variables
        self.xs = wrap_arguments(self.args, self.variables, self.diff)
        self.tape = Tape(persistent=True)
        self.stops: list = []  # the values f's stop_gradient calls gave, in order
        token = FROZEN_STOPS.set(self._record_stop)
        try:
            with recording.no_grad(), self.tape:
                self.tape.watch([self.xs[i] for i in self.diff])
                out = f(*self.xs)
        finally:
            FROZEN_STOPS.reset(token)
        if not isinstance(out, Tensor) or out.dtype.kind != "f":
            raise TypeError(f"check_grads({name}): f must return a floating Tensor, got {out!r}")
        self.out, self.y, self.unconnected = out, out.numpy().astype(np.float64), set()
        self.nodes = self.tape.nodes

    def _record_stop(self, x):
        FROZEN_STOPS.set(None)  # run it as usual (a node on the tape), then keep its value
        try:
            y = stop_gradient(x)
        finally:
            FROZEN_STOPS.set(self._record_stop)
        self.stops.append(y._array)
        return y

    def call(self, args) -> np.ndarray:
        values = iter(self.stops)

        def held(x):  # the recorded value (f's own when f took another path this time)
            v = next(values, None)
            return Tensor(v.astype(x.dtype)) if v is not None and v.shape == x.shape else x

        token = FROZEN_STOPS.set(held) if self.stops else None
        try:
            with recording.no_grad():
                out = self.f(*wrap_arguments(args, self.variables, self.diff))
        finally:
            if token is not None:
                FROZEN_STOPS.reset(token)
        return np.asarray(out.numpy() if isinstance(out, Tensor) else out, dtype=np.float64)

    def vjp(self, dy) -> list:
        sources = [self.xs[i] for i in self.diff]
        with recording.no_grad():
            gs = self.tape.gradient(self.out, sources, Tensor(dy.astype(self.out.dtype)))
        out = []
        for k, (g, x) in enumerate(zip(gs, sources)):
            if g is None:
                self.unconnected.add(k)
            out.append(np.zeros(x.shape) if g is None else g.numpy().astype(np.float64))
        return out

    def jvp(self, tangents) -> np.ndarray:
        def fd(*diff_xs):
            full = list(self.xs)
            for i, t in zip(self.diff, diff_xs):
                full[i] = t
            return self.f(*full)

        fd.__name__ = self.name
        with recording.no_grad():
            primals = [self.xs[i] for i in self.diff]
            _, out = jvp(fd, primals, [Tensor(t) for t in tangents])
        return out.numpy().astype(np.float64)

    def batched(self, k, X):
        """f on a stack of values of differentiable arg ``k``: (outputs, strategy)."""
        x = self.xs[self.diff[k]]
        try:
            env = replay(self.tape.nodes, {x.id: X}, size=len(X))
            Y = env.get(self.out.id)
            Y = np.broadcast_to(self.y, (len(X),) + self.y.shape) if Y is None else Y
            return np.asarray(Y, dtype=np.float64), "batched replay"
        except Unbatchable:
            pass
        args = list(self.args)
        args[self.diff[k]] = X
        try:
            Y = self.call(args)
        except Exception as e:
            raise Unbatchable(str(e)) from None
        if Y.shape != (len(X),) + self.y.shape:
            raise Unbatchable("f does not map a batch to a batch")
        return Y, "batched call"
