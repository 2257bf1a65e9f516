"""Assignment C's hidden tests: the notebook's ``average_gradient`` and ``train`` on fresh
random data, parameters, ``k`` and learning rate, in the submission's process; their numbers
come back and are compared here with a reference loop on tapeviz's engine. ``train`` is
graded on its own: a loop that is right on the student's own ``average_gradient`` (the
same steps, driven from here) is accepted, so a slip in question 1 (a missing /k) costs
question 1 only."""

from __future__ import annotations

import numpy as np
from checks import Failed, array, close, test

import tapeviz as tv

QUESTIONS = {"q1": 4, "q2": 5}

PROBES = r'''
import numpy as np
import tapeviz as tv


def average_gradient(ns, params, X, y, k, calls=1):
    """The notebook's average_gradient on variables made from ``params`` (the last call's
    answer, after ``calls`` calls), as arrays."""
    ps = [tv.variable(p) for p in params]
    for _ in range(calls):
        got = ns["average_gradient"](ps, X, y, k)
    return [np.array(g.numpy() if hasattr(g, "numpy") else g, dtype=float) for g in got]


def train(ns, params, X, y, steps, lr, k):
    """The parameters after the notebook's train(steps), and the losses it returned."""
    ps = [tv.variable(p) for p in params]
    losses = ns["train"](ps, X, y, steps, lr, k)
    return {"params": [p.numpy() for p in ps], "losses": [float(v) for v in losses]}
'''


def loss(params, X, y):
    """The notebook's model (tanh MLP) and logistic loss, kept here."""
    h = tv.tensor(X)
    for k in range(0, len(params) - 2, 2):
        h = tv.tanh(h @ params[k] + params[k + 1])
    logits = tv.reshape(h @ params[-2] + params[-1], (-1,))
    return tv.mean(tv.softplus(-tv.tensor(y) * logits))


def gradient(params, X, y):
    """Equal micro-batches: their mean gradient is the full batch's."""
    ps = [tv.variable(p) for p in params]
    with tv.Tape() as tape:
        value = loss(ps, X, y)
    return [g.numpy() for g in tape.gradient(value, ps)]


def problem(rng, n=40):
    """Random data (n examples, labels +-1) and parameters of a 2-h-h-1 MLP."""
    h = int(rng.integers(4, 10))
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] + rng.normal(0, 0.3, n) > 0, 1.0, -1.0)
    params = []
    for n_in, n_out in ((2, h), (h, h), (h, 1)):
        params += [rng.normal(0, n_in**-0.5, (n_in, n_out)), rng.normal(0, 0.1, n_out)]
    return X, y, params


def _average(sub, rng, calls):
    X, y, params = problem(rng)
    want = gradient(params, X, y)
    for k in (2, 5):
        got = sub.call("average_gradient", params=params, X=X, y=y, k=k, calls=calls)
        if not isinstance(got, list) or len(got) != len(want):
            raise Failed("average_gradient: expected one array per parameter")
        for i, (g, w) in enumerate(zip(got, want)):
            g = array(g, f"k = {k}, parameter {i}", w.shape)
            if np.allclose(g, k * w, rtol=1e-6) and np.abs(w).max() > 1e-8:
                raise Failed(f"k = {k}: the gradients are summed over the micro-batches, "
                             "not averaged")  # fmt: skip
            what = f"k = {k}, parameter {i}" + (f" (call {calls})" if calls > 1 else "")
            close(g, w, what, rtol=1e-6, atol=1e-10)


@test("q1", 3)
def average_gradient_against_a_reference(sub, rng):
    _average(sub, rng, 1)


@test("q1", 1)
def average_gradient_starts_from_zero(sub, rng):
    _average(sub, rng, 3)


def _reference(params, X, y, steps, lr):
    ps = [p.copy() for p in params]
    for _ in range(steps):
        ps = [p - lr * g for p, g in zip(ps, gradient(ps, X, y))]
    return ps


def _train(sub, setting, steps):
    """The parameters train(steps) gives (checked arrays) and the reference's."""
    X, y, params, lr, k = setting
    got = sub.call("train", params=params, X=X, y=y, steps=steps, lr=lr, k=k)
    if not isinstance(got, dict) or len(got.get("params", ())) != len(params):
        raise Failed(f"train(steps={steps}): no parameters came back")
    want = _reference(params, X, y, steps, lr)
    losses = array(got.get("losses"), f"the losses of train(steps={steps})")
    if losses.shape != (steps,):
        raise Failed(f"train(steps={steps}): expected {steps} losses, got {losses.shape}")
    got = [array(g, f"parameter {i}", w.shape) for i, (g, w) in enumerate(zip(got["params"], want))]
    return got, want, losses[-1]


def _setting(rng):
    return (*problem(rng), float(rng.uniform(0.1, 0.5)), int(rng.choice([2, 4, 5])))


def _right(got, want) -> bool:
    return all(np.allclose(g, w, rtol=1e-6, atol=1e-10) for g, w in zip(got, want))


def _own_loop(sub, setting, steps):
    """The parameters after ``steps`` steps p -= lr * g, g from the notebook's own
    average_gradient (asked here at every step); None if it gives no usable gradient (all
    zeros included: a loop that does not move is not accepted on it)."""
    X, y, params, lr, k = setting
    ps = [p.copy() for p in params]
    try:
        for _ in range(steps):
            gs = sub.call("average_gradient", params=ps, X=X, y=y, k=k)
            gs = [array(g, "g", p.shape) for g, p in zip(gs, ps)]
            if len(gs) != len(ps) or not all(np.isfinite(g).all() for g in gs):
                return None
            if not any(np.abs(g).max() > 1e-12 for g in gs):
                return None
            ps = [p - lr * g for p, g in zip(ps, gs)]
    except Exception:  # no answer, a wrong shape: no loop to accept
        return None
    return ps


def _check_train(sub, setting, steps, got, want, last):
    """Pass if ``got`` is the reference's, or the same loop on the student's own
    average_gradient (then the loss is not compared: it follows their gradient)."""
    if not _right(got, want):
        own = _own_loop(sub, setting, steps)
        if own is not None and _right(got, own):
            return
    for i, (g, w) in enumerate(zip(got, want)):
        close(g, w, f"parameter {i} after {steps} step{'s' if steps > 1 else ''}",
              rtol=1e-6, atol=1e-10)  # fmt: skip
    if steps > 1:
        X, y = setting[:2]
        close(last, loss([tv.tensor(w) for w in want], X, y).item(), "the loss after step 4")


@test("q2", 2)
def train_one_step(sub, rng):
    setting = _setting(rng)
    got, want, last = _train(sub, setting, 1)
    _check_train(sub, setting, 1, got, want, last)


@test("q2", 3)
def train_four_steps(sub, rng):
    setting = _setting(rng)
    got, want, last = _train(sub, setting, 4)
    if not _right(got, want) and _right(*_train(sub, setting, 1)[:2]):
        raise Failed(
            "1 step is right, 4 steps are not: gradients from earlier steps are still "
            "in the update (reset the accumulator every step: the missing zero_grad)"
        )
    _check_train(sub, setting, 4, got, want, last)
