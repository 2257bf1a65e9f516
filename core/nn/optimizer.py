"""``Optimizer``: what every optimizer shares, with TensorFlow.js's ``minimize`` and
``apply_gradients``; the update rules themselves are in ``core.nn.optim``.

``minimize`` runs the loss under a fresh tape, takes the gradients and releases the tape
(nothing saved outlives a step). ``apply_gradients`` checks each pair, adds PyTorch's L2
``weight_decay`` term to the gradient (not for a decoupled rule such as AdamW), and lands the
subclass's ``_update(w, g, state)`` with ``Variable.assign``: updates run on the variables'
arrays and are not recorded.
"""

from __future__ import annotations

import numpy as np

from ..autodiff.tape import Tape
from ..tensors.kinds import Variable
from ..tensors.tensor import Tensor

__all__ = ["Optimizer"]


class Optimizer:
    """Base: subclasses implement ``_update(var, g, state) -> new value``.

    Attributes:
        learning_rate: step size (may be changed between steps).
        iterations: number of ``apply_gradients`` calls so far.
    """

    _decoupled = False  # AdamW: weight decay applied to the weights, not added to g

    def __init__(self, learning_rate: float, weight_decay: float = 0.0):
        self.learning_rate = self._check("learning_rate", learning_rate, 0.0, np.inf, low_ok=False)
        self.weight_decay = self._check("weight_decay", weight_decay, 0.0, np.inf)
        self.iterations = 0
        self._state: dict[int, dict] = {}

    def minimize(self, loss_fn, var_list=None, return_cost: bool = False, jit: bool = False):
        """Run ``loss_fn()`` under a tape, differentiate, update the variables, release.

        Args:
            loss_fn: no-argument function returning a scalar loss Tensor.
            var_list: variables to train (default: every trainable variable the loss used);
                the non-trainable ones in it are left unchanged (TensorFlow.js's
                ``variableGrads`` prunes them the same way), so a frozen layer stays frozen.
            return_cost: return the loss tensor.
            jit: run the loss and its gradients as a compiled program (``tv.jit``), traced
                once per ``loss_fn`` code; the update itself stays as it is.

        Returns:
            The loss (when ``return_cost``), else None.

        Example:
            >>> import tapeviz as tv
            >>> w = tv.variable([3.0])
            >>> opt = tv.optim.SGD(0.1)
            >>> for _ in range(50):
            ...     opt.minimize(lambda: tv.sum(w * w))
            >>> abs(w.item()) < 1e-3
            True
        """
        who = f"{type(self).__name__}.minimize"
        if var_list is not None:
            var_list = [v for v in _check_vars(var_list, who) if v.trainable]
        if jit:
            from ..jit.train import minimize_step

            loss, grads, var_list = minimize_step(self, _loss_and_grads, loss_fn, var_list, who)
        else:
            loss, grads, var_list = _loss_and_grads(loss_fn, var_list, who)
        self.apply_gradients(list(zip(grads, var_list)), _who=who)
        return loss if return_cost else None

    def apply_gradients(self, grads_and_vars, _who=None) -> None:
        """Update each variable with its gradient: a list of ``(gradient, variable)`` pairs.
        Pairs whose gradient is None are skipped (the loss does not depend on them)."""
        who = _who or f"{type(self).__name__}.apply_gradients"
        pairs = list(grads_and_vars)
        _check_vars([v for _, v in pairs], who)
        used = [(g, v) for g, v in pairs if g is not None]
        if not used:
            raise ValueError(
                f"{who}: no gradients to apply: the loss does not depend on any of the "
                f"{len(pairs)} variables"
            )
        # a schedule may change it between steps: an inf or NaN step size is caught here too
        self._check("learning_rate", self.learning_rate, 0.0, np.inf, low_ok=False)
        self.iterations += 1
        for g, v in used:
            garr = g._array if isinstance(g, Tensor) else np.asarray(g)
            if garr.shape != v.shape:
                raise ValueError(
                    f"{who}: gradient of shape {garr.shape} for variable {v._label()} of shape "
                    f"{v.shape}"
                )
            state = self._state.setdefault(v.id, {})
            garr = garr.astype(v.dtype, copy=False)
            if self.weight_decay and not self._decoupled:  # L2: PyTorch's weight_decay
                garr = garr + self.weight_decay * v._array
            v.assign(self._update(v._array, garr, state))

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict) -> np.ndarray:
        raise NotImplementedError

    def _check(self, arg: str, value, low: float, high: float, low_ok=True) -> float:
        """``value`` as a float, or a ValueError naming the optimizer and ``arg``: it must
        be finite and in ``[low, high)`` (``(low, high)`` when not ``low_ok``)."""
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"{type(self).__name__}: {arg} must be a number, got {type(value).__name__}"
            ) from None
        above = v >= low if low_ok else v > low
        if not (np.isfinite(v) and above and v < high):
            interval = f"{'[' if low_ok else '('}{low:g}, {high:g})"
            why = _WHY.get((arg, v >= high), "") if np.isfinite(v) else ""
            raise ValueError(
                f"{type(self).__name__}: {arg} must be a finite number in {interval}, got "
                f"{value!r}{why}"
            )
        return v

    def _zeros(self, state, key, like):
        arr = state.get(key)
        if arr is None:
            arr = state[key] = np.zeros_like(like)
        return arr

    def __repr__(self):
        args = ", ".join(f"{k}={v}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


_WHY = {  # (argument, at or above the top) -> what the value would do to the weights
    ("epsilon", False): (
        " (PyTorch allows 0, but then a weight whose gradient is 0 becomes 0 / 0 = NaN; "
        "below 0 the denominator can be 0 or change sign)"
    ),
    ("beta1", True): " (at 1 the moment never moves and the bias correction divides by 0)",
    ("beta2", True): " (at 1 the moment never moves and the bias correction divides by 0)",
}


def _loss_and_grads(loss_fn, var_list, who):
    """(loss, gradients, variables) of one ``minimize`` step; nothing saved outlives it."""
    tape = Tape()
    try:
        with tape:
            if var_list is not None:
                tape.watch(var_list)
            loss = loss_fn()
        _check_loss(loss, who)
        if var_list is None:
            var_list = [v for v in tape.watched.values() if isinstance(v, Variable)]
            var_list = [v for v in var_list if v.trainable]
            if not var_list:
                raise ValueError(
                    f"{who}: the loss uses no trainable variable; pass var_list or use "
                    "tv.variable(...) in loss_fn"
                )
        grads = tape.gradient(loss, var_list)
    finally:
        tape.release()  # nothing saved for backward outlives the step, even on errors
        del tape
    return loss, grads, var_list


def _check_vars(var_list, who):
    var_list = list(var_list)
    bad = [type(v).__name__ for v in var_list if not isinstance(v, Variable)]
    if bad:
        raise TypeError(f"{who}: var_list must hold Variables, got {bad[0]}")
    if not any(v.trainable for v in var_list):
        raise ValueError(f"{who}: no trainable variables ({len(var_list)} given, none trainable)")
    return var_list


def _check_loss(loss, who):
    if not isinstance(loss, Tensor):
        raise TypeError(f"{who}: loss_fn must return a scalar Tensor, got {type(loss).__name__}")
    if loss.size != 1:
        raise ValueError(
            f"{who}: loss_fn must return a scalar, got a tensor of shape {loss.shape}; "
            "reduce it, e.g. tv.mean(...)"
        )
    if loss.dtype.kind != "f":
        raise TypeError(f"{who}: the loss must be floating, got {loss.dtype}")
