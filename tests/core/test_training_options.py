"""Training options that match PyTorch, checked against it in float64: ``weight_decay=`` on
SGD, Momentum, RMSProp and Adam (L2 added to the gradient), ``AdamW`` (decoupled); losses with
``reduction=``, ``class_weights=`` (PyTorch's ``weight``), ``label_smoothing=``; ``weights=``
is TensorFlow.js's per-example weights (checked against its formula written out in numpy).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from weighted_vjp import torch_grads, tv_grads

import tapeviz.core as tv
from tapeviz.core.nn import losses, optim

RNG = np.random.default_rng(31)


# --- optimizers ----------------------------------------------------------------------------------
def _quadratic_run(make_tv, make_torch, steps=6):
    """The same quadratic-and-tanh loss, stepped by tapeviz and by PyTorch from one start."""
    w0 = RNG.normal(size=(3, 2))
    a = RNG.normal(size=(4, 3))
    v = tv.variable(w0)
    opt = make_tv()
    at = torch.tensor(a)
    wt = torch.tensor(w0, requires_grad=True)
    topt = make_torch([wt])
    for _ in range(steps):
        opt.minimize(lambda: tv.sum(tv.tanh(tv.tensor(a) @ v) ** 2) + tv.sum(v * v) * 0.1)
        topt.zero_grad()
        loss = (torch.tanh(at @ wt) ** 2).sum() + (wt * wt).sum() * 0.1
        loss.backward()
        topt.step()
    return v.numpy(), wt.detach().numpy()


TINY = 1e-30  # RMSProp's epsilon: tapeviz sqrt(s + eps) (TensorFlow.js), PyTorch sqrt(s) + eps
CASES = {
    "sgd": (lambda: optim.SGD(0.1, weight_decay=0.3),
            lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.3)),
    "momentum": (lambda: optim.Momentum(0.1, 0.9, weight_decay=0.2),
                 lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.2)),
    "nesterov": (lambda: optim.Momentum(0.1, 0.9, use_nesterov=True, weight_decay=0.2),
                 lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.2)),
    "rmsprop": (lambda: optim.RMSProp(0.01, 0.9, epsilon=TINY, weight_decay=0.5),
                lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=TINY, weight_decay=0.5)),
    "rmsprop_centered_momentum": (
        lambda: optim.RMSProp(0.01, 0.8, momentum=0.5, epsilon=TINY, centered=True, weight_decay=0.1),
        lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.8, momentum=0.5, eps=TINY, centered=True,
                                      weight_decay=0.1)),
    "adam": (lambda: optim.Adam(0.05, 0.8, 0.95, 1e-8, weight_decay=0.4),
             lambda p: torch.optim.Adam(p, lr=0.05, betas=(0.8, 0.95), eps=1e-8, weight_decay=0.4)),
    "adamw": (lambda: optim.AdamW(0.05, 0.8, 0.95, 1e-8, weight_decay=0.4),
              lambda p: torch.optim.AdamW(p, lr=0.05, betas=(0.8, 0.95), eps=1e-8, weight_decay=0.4)),
    "adamw_default_decay": (lambda: optim.AdamW(0.05, epsilon=1e-8),
                            lambda p: torch.optim.AdamW(p, lr=0.05, eps=1e-8)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_weight_decay_and_adamw_match_pytorch(name):
    got, want = _quadratic_run(*CASES[name])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_weight_decay_changes_the_step_and_adamw_differs_from_adam_l2():
    plain, _ = _quadratic_run(lambda: optim.Adam(0.05, epsilon=1e-8),
                              lambda p: torch.optim.Adam(p, lr=0.05, eps=1e-8))  # fmt: skip
    global RNG
    RNG = np.random.default_rng(31)
    a, _ = _quadratic_run(*CASES["adam"])
    RNG = np.random.default_rng(31)
    w, _ = _quadratic_run(*CASES["adamw"])
    RNG = np.random.default_rng(31)
    p2, _ = _quadratic_run(lambda: optim.Adam(0.05, 0.8, 0.95, 1e-8),
                           lambda p: torch.optim.Adam(p, lr=0.05, betas=(0.8, 0.95), eps=1e-8))  # fmt: skip
    assert not np.allclose(a, p2) and not np.allclose(w, p2) and not np.allclose(a, w)
    assert plain.shape == (3, 2)


def test_weight_decay_is_checked_and_named():
    with pytest.raises(ValueError, match="SGD: weight_decay must be a finite number"):
        optim.SGD(0.1, weight_decay=-1.0)
    assert isinstance(optim.get("adamw"), optim.AdamW)
    assert "weight_decay=0.01" in repr(optim.AdamW())


# --- losses --------------------------------------------------------------------------------------
N, C = 6, 4
Y = np.array([0, 3, 1, 2, 2, 0])
CW = np.array([0.5, 2.0, 1.0, 3.0])


def _both(tv_loss, torch_loss, z):
    """Value and gradient for the logits, tapeviz and PyTorch (reduction "none": summed with a
    fixed weight so each element's gradient is seen)."""
    out, (g,) = tv_grads(tv_loss, z)
    outt, (gt,) = torch_grads(torch_loss, z)
    return out, outt, g, gt


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("cw", [None, CW])
@pytest.mark.parametrize("ls", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("labels", ["int", "onehot", "soft"])
def test_softmax_cross_entropy_options_match_pytorch(reduction, cw, ls, labels):
    z = RNG.normal(size=(N, C)) * 2
    if labels == "int":
        y, yt = Y, torch.tensor(Y)
    else:
        y = np.eye(C)[Y] if labels == "onehot" else RNG.dirichlet(np.ones(C), N)
        yt = torch.tensor(y)
    got, want, g, gw = _both(
        lambda zz: losses.softmax_cross_entropy(y, zz, reduction=reduction, class_weights=cw,
                                                label_smoothing=ls),
        lambda zz: F.cross_entropy(zz, yt, weight=None if cw is None else torch.tensor(cw),
                                   reduction=reduction, label_smoothing=ls),
        z,
    )  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g, gw, rtol=1e-10, atol=1e-14)


def test_softmax_cross_entropy_per_example_weights_are_tfjs():
    """``weights=`` multiplies each example's loss; "mean" divides by the weights' sum (times
    the class weights' with integer labels): TensorFlow.js's MEAN, written out."""
    z = RNG.normal(size=(N, C))
    w = RNG.uniform(0.1, 2.0, N)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    per = -logp[np.arange(N), Y]
    tz = tv.tensor(z)
    np.testing.assert_allclose(
        losses.softmax_cross_entropy(Y, tz, weights=w).item(), (w * per).sum() / w.sum(), rtol=1e-12
    )
    np.testing.assert_allclose(
        losses.softmax_cross_entropy(Y, tz, weights=w, reduction="none").numpy(),
        w * per,
        rtol=1e-12,
    )
    both = losses.softmax_cross_entropy(Y, tz, weights=w, class_weights=CW).item()
    np.testing.assert_allclose(both, (w * CW[Y] * per).sum() / (w * CW[Y]).sum(), rtol=1e-12)
    with pytest.raises(ValueError, match="weights of shape \\(5,\\) do not broadcast"):
        losses.softmax_cross_entropy(Y, tz, weights=np.ones(5))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_options_match_pytorch_and_weights_are_tfjs(reduction):
    p, y = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
    got, want, g, gw = _both(
        lambda pp: losses.mean_squared_error(y, pp, reduction=reduction),
        lambda pp: F.mse_loss(pp, torch.tensor(y), reduction=reduction), p,
    )  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(g, gw, rtol=1e-12)
    w = RNG.uniform(0.1, 2.0, 5)
    got = losses.mean_squared_error(y, tv.tensor(p), weights=w, reduction=reduction).numpy()
    wl = w[:, None] * (p - y) ** 2
    want = {"none": wl, "sum": wl.sum(), "mean": wl.sum() / (w.sum() * 3)}[reduction]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("from_logits", [False, True])
def test_binary_cross_entropy_options_match_pytorch(reduction, from_logits):
    y = RNG.integers(0, 2, (5, 2)).astype(np.float64)
    x = RNG.normal(size=(5, 2)) if from_logits else RNG.uniform(0.05, 0.95, (5, 2))
    ref = F.binary_cross_entropy_with_logits if from_logits else F.binary_cross_entropy
    for ls in (0.0, 0.2):  # TensorFlow.js's smoothing: PyTorch given the smoothed labels
        ys = torch.tensor(y * (1 - ls) + 0.5 * ls)
        got, want, g, gw = _both(
            lambda xx: losses.binary_cross_entropy(y, xx, from_logits, reduction=reduction,
                                                   label_smoothing=ls),
            lambda xx: ref(xx, ys, reduction=reduction), x,
        )  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g, gw, rtol=1e-10, atol=1e-14)


def test_loss_options_are_checked():
    z = tv.tensor(RNG.normal(size=(N, C)))
    with pytest.raises(ValueError, match="softmax_cross_entropy: reduction must be"):
        losses.softmax_cross_entropy(Y, z, reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing must be in \\[0, 1\\]"):
        losses.softmax_cross_entropy(Y, z, label_smoothing=1.5)
    with pytest.raises(ValueError, match="class_weights must have shape \\(4,\\)"):
        losses.softmax_cross_entropy(Y, z, class_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="mean_squared_error: reduction must be"):
        losses.mean_squared_error(np.zeros(3), tv.tensor(np.zeros(3)), reduction=None)


def test_default_softmax_cross_entropy_is_still_one_kernel():
    z = tv.tensor(RNG.normal(size=(N, C)))
    with tv.Tape() as tape:
        tape.watch(z)
        losses.softmax_cross_entropy(Y, z)
    assert [n.kernel for n in tape.nodes][-1] == "SoftmaxCrossEntropyWithLogits"
