"""Reverse mode refused inside ``refuse_reverse_mode``: every way into it (``Tape.gradient``
and what is built on it, a jitted program holding a backward pass) raises with the reason;
``allow_next_pass`` lets one top-level pass run, whose nested gradient functions are still
refused; the rule ends with its block, also on an error."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz.core as core

WAYS = {
    "tape.gradient": lambda x: _tape_gradient(x),
    "grad": lambda x: core.grad(lambda t: core.sum(t * t))(x),
    "value_and_grads": lambda x: core.value_and_grads(lambda t: core.sum(t * t))(x),
    "vjp": lambda x: core.vjp(lambda t: t * t, x)[1](core.ones_like(x)),
    "jvp": lambda x: core.jvp(lambda t: t * t, [x], [core.ones_like(x)]),
    "jacobian": lambda x: core.jacobian(lambda t: t * t)(x),
    "hessian": lambda x: core.hessian(lambda t: core.sum(t * t * t))(x),
}


def _tape_gradient(x):
    with core.Tape() as tape:
        tape.watch(x)
        y = core.sum(x * x)
    return tape.gradient(y, x)


@pytest.mark.parametrize("way", WAYS)
def test_every_way_into_reverse_mode_is_refused(way):
    x = core.tensor(np.array([1.0, 2.0]))
    WAYS[way](x)  # allowed outside
    with core.refuse_reverse_mode("the reason"):
        with pytest.raises(core.AutodiffRefusedError, match="not allowed here: the reason"):
            WAYS[way](x)
    WAYS[way](x)  # and again after the block


def test_a_jitted_gradient_traced_before_is_refused():
    f = core.jit(core.grad(lambda t: core.sum(t * t)))
    x = core.tensor(np.array([1.0, 2.0]))
    f(x)  # traced and cached: the next call runs the compiled backward pass
    with core.refuse_reverse_mode("r"), pytest.raises(core.AutodiffRefusedError):
        f(x)
    g = core.jit(lambda t: t * 2.0)  # a forward-only program still runs
    g(x)
    with core.refuse_reverse_mode("r"):
        np.testing.assert_allclose(g(x).numpy(), [2.0, 4.0])


def test_one_allowed_pass_refuses_what_its_gradients_ask():
    core.register_kernel("RefusalProbe", "numpy", lambda inputs, attrs: inputs["x"] * 1.0)
    asked = core.grad(lambda t: core.sum(t * t))
    core.register_gradient("RefusalProbe", lambda dy, saved, attrs: {"x": lambda: dy * asked(saved[0])},
                           inputs_to_save=["x"])  # fmt: skip
    try:
        x = core.tensor(np.array([3.0]))
        with core.refuse_reverse_mode("by hand"):
            with core.Tape() as tape:
                tape.watch(x)
                y = core.run_kernel("RefusalProbe", {"x": x})
            core.allow_next_pass()
            with pytest.raises(core.AutodiffRefusedError, match="by hand"):
                tape.gradient(y, x)
            with core.Tape() as tape:
                tape.watch(x)
                y = core.sum(x * x)
            with pytest.raises(core.AutodiffRefusedError):  # the allowance was used up
                tape.gradient(y, x)
            with core.Tape() as tape:
                tape.watch(x)
                y = core.sum(x * x)
            core.allow_next_pass()
            assert tape.gradient(y, x).item() == 6.0  # built-in gradients run as usual
        with pytest.raises(RuntimeError, match="not refused"):
            core.allow_next_pass()
        with pytest.raises(ValueError), core.refuse_reverse_mode("r"):
            raise ValueError
        assert core.reverse_mode_refused() is None
    finally:
        core.unregister_gradient("RefusalProbe")
        core.unregister_kernel("RefusalProbe", "numpy")
