"""``minimize(..., jit=True)`` and ``fit(..., jit=True)``: the loss and its gradients run as
a compiled program; the optimizer's update stays as it is (numpy on the variables' arrays,
reading the learning rate at each step).
"""

from __future__ import annotations

from ..autodiff.tape import Tape
from .function import JitFunction, display_name

__all__ = ["minimize_step", "fit_step"]


def minimize_step(opt, loss_and_grads, loss_fn, var_list, who):
    """``loss_and_grads(loss_fn, var_list, who)`` compiled, one program per ``loss_fn`` code:
    a fresh ``lambda`` each step over the same objects runs the same program."""
    cache = opt.__dict__.setdefault("_jit_steps", {})
    key = getattr(loss_fn, "__code__", loss_fn)

    def minimize_step(var_list):
        return loss_and_grads(loss_fn, var_list, who)

    jitted = cache.get(key)
    if jitted is None:
        jitted = cache[key] = JitFunction(minimize_step)
        jitted.name = f"minimize_{display_name(loss_fn)}"
    return jitted.call(minimize_step, (var_list,), {})


def fit_step(model, loss_fn, check_loss) -> JitFunction:
    """One training step of ``fit`` compiled: ``step(x, y, training)`` returns the loss, the
    predictions, the gradients and the parameters they belong to."""

    def train_step(x, y, training):
        tape = Tape()
        try:
            with tape:
                pred = model(x)
                value = loss_fn(y, pred)
            check_loss(value, loss_fn)
            params = model.trainable_parameters()
            grads = tape.gradient(value, params)
        finally:
            tape.release()
        return value, pred, grads, params

    jitted = JitFunction(train_step, static_argnums=(2,))
    jitted.name = f"train_step_{type(model).__name__}"
    return jitted
