"""Optimizers: the update rules (SGD, Momentum, RMSProp, Adam, AdamW) and ``get`` by name.

Each is an ``Optimizer`` (``core.nn.optimizer``: TensorFlow.js's ``minimize`` and
``apply_gradients``). Updates run on the variables' arrays (not recorded) and land with
``Variable.assign``:
sgd: w -= lr*g; momentum: a = m*a + g, w -= lr*a (nesterov: w -= lr*(g + m*a));
rmsprop: s = d*s + (1-d)*g^2, w -= lr*g/sqrt(s + eps) (centered: s - mean^2);
adam: m = b1*m + (1-b1)*g, v = b2*v + (1-b2)*g^2, w -= lr*m^/(sqrt(v^) + eps) with
m^ = m/(1-b1^t), v^ = v/(1-b2^t) (TensorFlow.js's form).

``weight_decay=`` (SGD, Momentum, RMSProp, Adam) adds the L2 term to the gradient before the
update, PyTorch's rule: g <- g + weight_decay * w. ``AdamW`` decouples it, as PyTorch's
AdamW: w <- w * (1 - lr * weight_decay), then Adam's step with the plain gradient.
"""

from __future__ import annotations

import numpy as np

from .optimizer import Optimizer

__all__ = ["Optimizer", "SGD", "Momentum", "RMSProp", "Adam", "AdamW", "get"]


class SGD(Optimizer):
    """Plain gradient descent: ``w -= learning_rate * g``."""

    def __init__(self, learning_rate: float = 0.01, weight_decay: float = 0.0):
        super().__init__(learning_rate, weight_decay)

    def _update(self, w, g, state):
        return w - self.learning_rate * g


class Momentum(Optimizer):
    """Gradient descent with momentum (TensorFlow.js ``train.momentum``)."""

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, use_nesterov=False,
                 weight_decay: float = 0.0):  # fmt: skip
        super().__init__(learning_rate, weight_decay)
        self.momentum = self._check("momentum", momentum, 0.0, 1.0)
        self.use_nesterov = bool(use_nesterov)

    def _update(self, w, g, state):
        a = self._zeros(state, "accum", w)
        a *= self.momentum
        a += g
        step = g + self.momentum * a if self.use_nesterov else a
        return w - self.learning_rate * step


class RMSProp(Optimizer):
    """RMSProp: divide the step by a running RMS of the gradient."""

    def __init__(self, learning_rate=0.001, decay=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 weight_decay=0.0):  # fmt: skip
        super().__init__(learning_rate, weight_decay)
        self.decay = self._check("decay", decay, 0.0, 1.0)
        self.momentum = self._check("momentum", momentum, 0.0, 1.0)
        self.epsilon = self._check("epsilon", epsilon, 0.0, np.inf, low_ok=False)
        self.centered = bool(centered)

    def _update(self, w, g, state):
        s = self._zeros(state, "ms", w)
        s *= self.decay
        s += (1 - self.decay) * g * g
        denom = s
        if self.centered:
            mg = self._zeros(state, "mg", w)
            mg *= self.decay
            mg += (1 - self.decay) * g
            denom = s - mg * mg
        step = self.learning_rate * g / np.sqrt(denom + self.epsilon)
        if self.momentum:
            mom = self._zeros(state, "mom", w)
            mom *= self.momentum
            mom += step
            step = mom
        return w - step


class Adam(Optimizer):
    """Adam with bias correction (Kingma and Ba)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-7, weight_decay=0.0):
        super().__init__(learning_rate, weight_decay)
        self.beta1 = self._check("beta1", beta1, 0.0, 1.0)
        self.beta2 = self._check("beta2", beta2, 0.0, 1.0)
        self.epsilon = self._check("epsilon", epsilon, 0.0, np.inf, low_ok=False)

    def _update(self, w, g, state):
        m, v = self._zeros(state, "m", w), self._zeros(state, "v", w)
        t = state["t"] = state.get("t", 0) + 1
        m *= self.beta1
        m += (1 - self.beta1) * g
        v *= self.beta2
        v += (1 - self.beta2) * (g * g)
        m_hat = m / (1 - self.beta1**t)
        v_hat = v / (1 - self.beta2**t)
        return w - (self.learning_rate * m_hat / (np.sqrt(v_hat) + self.epsilon)).astype(
            w.dtype, copy=False
        )


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter; PyTorch's ``AdamW``): each
    step first shrinks the weights, ``w *= 1 - learning_rate * weight_decay``, then takes
    Adam's step with the plain gradient (no L2 term in it). PyTorch's default decay 0.01."""

    _decoupled = True

    def __init__(
        self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-7, weight_decay=0.01
    ):
        super().__init__(learning_rate, beta1, beta2, epsilon, weight_decay)

    def _update(self, w, g, state):
        if self.weight_decay:
            w = w * (1.0 - self.learning_rate * self.weight_decay)
        return super()._update(w, g, state)


_NAMES = {"sgd": SGD, "momentum": Momentum, "rmsprop": RMSProp, "adam": Adam, "adamw": AdamW}


def get(optimizer) -> Optimizer:
    """An optimizer from an instance or a name (``"sgd"``, ``"momentum"``, ``"adam"``, ...)."""
    if isinstance(optimizer, Optimizer):
        return optimizer
    cls = _NAMES.get(optimizer.lower()) if isinstance(optimizer, str) else None
    if cls is None:
        raise ValueError(
            f"optim.get: expected an Optimizer or one of {', '.join(_NAMES)}, got {optimizer!r}"
        )
    return cls()
