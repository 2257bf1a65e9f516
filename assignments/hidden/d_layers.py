"""Assignment D's hidden tests: the notebook's numpy backward passes (affine, ReLU, softmax
cross-entropy, batch normalization and its simplified form, a naive convolution, the
two-layer net) called in the submission's process on inputs and shapes the grader draws
anew (a batch of 1, a 1x1 kernel, a kernel as large as the image among them); the arrays come
back and are compared here with tapeviz's engine on the same forward passes. The engine's
reverse mode is refused in the calls: the answers are numpy."""

from __future__ import annotations

import numpy as np
from checks import Failed, array, close, test

import tapeviz as tv
from tapeviz.teach.slips import DOUT_LEFT_OUT, name_slip

QUESTIONS = {"q1": 4, "q2": 2, "q3": 4, "q4": 5, "q5": 2, "q6": 5, "q7": 4}

PROBES = r'''
import numpy as np
import tapeviz as tv

RULE = "assignment D: write each backward pass in numpy, not with tapeviz's engine"


def plain(value):
    """The answer as channel data: arrays of floats, lists, dicts; None stays None."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return np.asarray(value, dtype=np.float64)


def layer(ns, name, dout, cache):
    """ns[name](dout, cache): a list cache becomes the tuple the notebook unpacks."""
    cache = tuple(cache) if isinstance(cache, list) else cache
    with tv.refuse_reverse_mode(RULE):
        return plain(ns[name](np.asarray(dout, np.float64), cache))


def softmax(ns, scores, y):
    with tv.refuse_reverse_mode(RULE):
        return plain(ns["softmax_loss"](np.asarray(scores, np.float64), np.asarray(y, np.int64)))


def two_layer(ns, params, X, y):
    with tv.refuse_reverse_mode(RULE):
        got = ns["two_layer_loss"](dict(params), X, np.asarray(y, np.int64))
    if isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict):
        return {"loss": plain(got[0]), "grads": plain(got[1])}
    return {"other": type(got).__name__}
'''


def vjp(f, arrays, dout):
    """The engine's gradients of sum(f(*arrays) * dout) for each array (float64)."""
    ts = [tv.tensor(np.asarray(a, np.float64)) for a in arrays]
    with tv.Tape() as tape:
        tape.watch(ts)
        loss = tv.sum(f(*ts) * tv.tensor(dout))
    return [g.numpy() for g in tape.gradient(loss, ts)]


def results(got, names, what):
    """``got`` as ``len(names)`` results; else Failed saying what came back."""
    if got is None:
        raise Failed(f"{what}: returned None (the placeholder is still there?)")
    if not isinstance(got, list) or len(got) != len(names):
        raise Failed(f"{what}: expected {len(names)} results ({', '.join(names)})")
    return got


def compare(got, want, names, what, slips=None, **tol):
    """Each result against the reference; a result equal to what a known slip computes
    (``slips[name] = {sentence: value}``) is named by that slip's sentence."""
    rtol, atol = tol.get("rtol", 1e-6), tol.get("atol", 1e-9)
    for name, g, w in zip(names, got, want):
        g = array(g, f"{what}: {name}", np.shape(w))
        words = name_slip(g, w, (slips or {}).get(name), rtol=rtol, atol=atol)
        if words is not None:
            raise Failed(f"{what}: {name}: {words}")


def _affine(sub, rng, cases):
    for n, d, m in cases:
        x, w, b, dout = (rng.normal(size=s) for s in [(n, d), (d, m), (m,), (n, m)])
        want = vjp(lambda x, w, b: x @ w + b, [x, w, b], dout)
        got = sub.call("layer", name="affine_backward", dout=dout, cache=[x, w, b])
        got = results(got, ["dx", "dw", "db"], "affine_backward")
        ones = vjp(lambda x, w, b: x @ w + b, [x, w, b], np.ones_like(dout))
        slips = {k: {DOUT_LEFT_OUT: o} for k, o in zip(["dx", "dw", "db"], ones)}
        compare(got, want, ["dx", "dw", "db"], f"affine_backward at (N, D, M) = {(n, d, m)}",
                slips)  # fmt: skip


def _shapes(rng, k, low=1, high=7):
    return [tuple(int(v) for v in rng.integers(low, high, k)) for _ in range(2)]


@test("q1", 1)
def affine_batch_of_one(sub, rng):
    _affine(sub, rng, [(1, int(rng.integers(2, 6)), int(rng.integers(2, 6))), (3, 1, 1)])


@test("q1", 3)
def affine_random_shapes(sub, rng):
    _affine(sub, rng, _shapes(rng, 3))


def _relu(sub, rng, shapes):
    for shape in shapes:
        x = rng.normal(size=shape)
        x.flat[0] = 0.0  # at the kink: the slope on the left, 0
        dout = rng.normal(size=shape)
        (want,) = vjp(tv.relu, [x], dout)
        got = array(sub.call("layer", name="relu_backward", dout=dout, cache=x),
                    f"relu_backward: dx on shape {shape}", shape)  # fmt: skip
        words = name_slip(got, want, {DOUT_LEFT_OUT: 1.0 * (x > 0)}, where={"x < 0": x < 0})
        if words is not None:
            raise Failed(f"relu_backward: dx on shape {shape}: {words}")


@test("q2", 1)
def relu_small_shapes(sub, rng):
    _relu(sub, rng, [(1, 1), (1, int(rng.integers(2, 9)))])


@test("q2", 1)
def relu_random_shapes(sub, rng):
    _relu(sub, rng, [*_shapes(rng, 2), tuple(int(v) for v in rng.integers(1, 5, 3))])


def _softmax(sub, rng, cases, scale=1.0):
    for n, c in cases:
        scores = rng.normal(size=(n, c)) * scale
        y = rng.integers(0, c, n)
        t = tv.tensor(scores)
        with tv.Tape() as tape:
            tape.watch(t)
            loss = -tv.sum(tv.tensor(np.eye(c)[y]) * tv.log_softmax(t, axis=1)) / n
        want = tape.gradient(loss, t).numpy()
        got = results(sub.call("softmax", scores=scores, y=y), ["loss", "dscores"],
                      "softmax_loss")  # fmt: skip
        what = f"softmax_loss at (N, C) = {(n, c)}"
        close(got[0], loss.item(), f"{what}: the loss", rtol=1e-6)
        if n > 1 and np.allclose(np.asarray(got[1], float), want * n, rtol=1e-6, atol=1e-10):
            raise Failed(f"{what}: dscores is the gradient of the sum over the examples, "
                         "where the loss is their mean")  # fmt: skip
        close(got[1], want, f"{what}: dscores", rtol=1e-6, atol=1e-10)


@test("q3", 1)
def softmax_batch_of_one(sub, rng):
    _softmax(sub, rng, [(1, int(rng.integers(2, 6)))])


@test("q3", 3)
def softmax_random_and_large_scores(sub, rng):
    _softmax(sub, rng, [(int(rng.integers(2, 10)), int(rng.integers(2, 11)))])
    _softmax(sub, rng, [(int(rng.integers(2, 6)), int(rng.integers(3, 8)))], scale=40.0)


def _batchnorm(sub, rng, name, cases):
    eps = 1e-5
    for n, d in cases:
        x = rng.normal(rng.uniform(-2, 2), rng.uniform(0.5, 3), size=(n, d))
        gamma, beta, dout = rng.normal(size=d), rng.normal(size=d), rng.normal(size=(n, d))

        def forward(tx, tg, tb):
            mu = tv.mean(tx, axis=0)
            var = tv.mean(tv.square(tx - mu), axis=0)
            return (tx - mu) / tv.sqrt(var + eps) * tg + tb

        want = vjp(forward, [x, gamma, beta], dout)
        mu, var = x.mean(axis=0), x.var(axis=0)
        cache = [x, (x - mu) / np.sqrt(var + eps), mu, var, gamma, eps]
        got = results(sub.call("layer", name=name, dout=dout, cache=cache),
                      ["dx", "dgamma", "dbeta"], name)  # fmt: skip
        compare(got, want, ["dx", "dgamma", "dbeta"], f"{name} at (N, D) = {(n, d)}",
                {"dx": _bn_slips(x, gamma, dout, eps)}, rtol=1e-5, atol=1e-8)  # fmt: skip


def _bn_slips(x, gamma, dout, eps):
    """What dx is when a path of the batch-norm graph is left out (x -> mean, x -> var)."""
    n = x.shape[0]
    mu, var = x.mean(axis=0), x.var(axis=0)
    inv = 1.0 / np.sqrt(var + eps)
    dxhat = dout * gamma
    dvar = (dxhat * (x - mu)).sum(axis=0) * -0.5 * inv**3
    dmu = -(dxhat * inv).sum(axis=0) + dvar * -2.0 * (x - mu).mean(axis=0)
    return {
        "the path through the mean is missing": dxhat * inv + dvar * 2.0 * (x - mu) / n,
        "the path through the variance is missing": dxhat * inv + dmu / n,
        "the paths through the mean and the variance are both missing": dxhat * inv,
    }


def _bn_cases(rng):
    return [(int(rng.integers(2, 5)), int(rng.integers(1, 5))),
            (int(rng.integers(8, 20)), int(rng.integers(2, 7)))]  # fmt: skip


@test("q4", 1)
def batchnorm_batch_of_one(sub, rng):
    _batchnorm(sub, rng, "batchnorm_backward", [(1, int(rng.integers(2, 5)))])


@test("q4", 4)
def batchnorm_random_shapes(sub, rng):
    _batchnorm(sub, rng, "batchnorm_backward", _bn_cases(rng))


@test("q5", 1)
def batchnorm_alt_batch_of_one(sub, rng):
    _batchnorm(sub, rng, "batchnorm_backward_alt", [(1, int(rng.integers(2, 5)))])


@test("q5", 1)
def batchnorm_alt_random_shapes(sub, rng):
    _batchnorm(sub, rng, "batchnorm_backward_alt", _bn_cases(rng))


def _conv(sub, rng, cases):
    for xs, ws in cases:
        x, w, b = rng.normal(size=xs), rng.normal(size=ws), rng.normal(size=ws[3])
        dout = rng.normal(size=(xs[0], xs[1] - ws[0] + 1, xs[2] - ws[1] + 1, ws[3]))
        want = vjp(lambda x, w, b: tv.conv2d(x, w) + b, [x, w, b], dout)
        got = sub.call("layer", name="conv_backward_naive", dout=dout, cache=[x, w, b])
        got = results(got, ["dx", "dw", "db"], "conv_backward_naive")
        compare(got, want, ["dx", "dw", "db"], f"conv_backward_naive at x {xs}, w {ws}")


@test("q6", 1)
def conv_one_by_one_kernel(sub, rng):
    c, f = (int(v) for v in rng.integers(1, 4, 2))
    _conv(sub, rng, [((int(rng.integers(1, 3)), 4, 5, c), (1, 1, c, f))])


@test("q6", 4)
def conv_random_shapes(sub, rng):
    n, h, w, c, f = (int(v) for v in rng.integers(1, 4, 5))
    h, w = h + 3, w + 3
    kh, kw = int(rng.integers(2, h)), int(rng.integers(1, w))
    _conv(sub, rng, [((n, h, w, c), (kh, kw, c, f)), ((1, 3, 3, c), (3, 3, c, f))])


NAMES = ["W1", "b1", "W2", "b2"]


def _engine(params, X, y):
    def loss_of(w1, b1, w2, b2):
        scores = tv.relu(tv.tensor(X) @ w1 + b1) @ w2 + b2
        onehot = tv.tensor(np.eye(scores.shape[1])[y])
        return -tv.sum(onehot * tv.log_softmax(scores, axis=1)) / len(y)

    ts = [tv.tensor(params[k]) for k in NAMES]
    with tv.Tape() as tape:
        tape.watch(ts)
        loss = loss_of(*ts)
    return loss.item(), dict(zip(NAMES, (g.numpy() for g in tape.gradient(loss, ts))))


def _chained(sub, params, X, y):
    """The student's own layers chained here, each called in the submission's process:
    what two_layer_loss gives when it chains them right (a layer's slip is its question's)."""
    h = X @ params["W1"] + params["b1"]
    a = np.maximum(h, 0.0)
    scores = a @ params["W2"] + params["b2"]
    _, dscores = sub.call("softmax", scores=scores, y=y)
    da, dw2, db2 = sub.call("layer", name="affine_backward", dout=dscores,
                            cache=[a, params["W2"], params["b2"]])  # fmt: skip
    dh = sub.call("layer", name="relu_backward", dout=np.asarray(da, float), cache=h)
    _, dw1, db1 = sub.call("layer", name="affine_backward", dout=np.asarray(dh, float),
                           cache=[X, params["W1"], params["b1"]])  # fmt: skip
    return dict(zip(NAMES, (dw1, db1, dw2, db2)))


def _two_layer(sub, rng, cases):
    for n, d, hid, c in cases:
        shapes = [(d, hid), (hid,), (hid, c), (c,)]
        params = {k: rng.normal(size=s) for k, s in zip(NAMES, shapes)}
        X, y = rng.normal(size=(n, d)), rng.integers(0, c, n)
        got = sub.call("two_layer", params=params, X=X, y=y)
        what = f"two_layer_loss at (N, D, H, C) = {(n, d, hid, c)}"
        if not isinstance(got, dict) or "grads" not in got:
            raise Failed(f"{what}: expected (loss, grads), grads a dict with keys {NAMES}")
        grads = got["grads"]
        if set(grads) != set(NAMES):
            raise Failed(f"{what}: expected grads with the keys {NAMES}, got {sorted(grads)}")
        loss, want = _engine(params, X, y)
        close(got["loss"], loss, f"{what}: the loss", rtol=1e-6)
        try:
            own = _chained(sub, params, X, y)
        except Exception:  # a layer that raises or returns something else: no chain
            own = None
        if own is not None and not any(np.abs(np.asarray(v, float)).max() > 1e-12
                                       for v in own.values()):  # fmt: skip
            own = None  # layers that answer zeros: no chain to accept
        for k in NAMES:
            g = array(grads[k], f"{what}: {k}")
            if own is not None and np.shape(own[k]) == g.shape:
                if np.allclose(g, np.asarray(own[k], float), rtol=1e-6, atol=1e-10):
                    continue
            close(g, want[k], f"{what}: {k}", rtol=1e-6, atol=1e-10)


@test("q7", 1)
def two_layer_batch_of_one(sub, rng):
    _two_layer(sub, rng, [(1, 3, 4, 2)])


@test("q7", 3)
def two_layer_random_shapes(sub, rng):
    d, hid, c = (int(v) for v in rng.integers(2, 7, 3))
    _two_layer(sub, rng, [(int(rng.integers(4, 12)), d, hid, c), (5, 4, 1, 5)])
