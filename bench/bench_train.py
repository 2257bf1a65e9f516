"""One training step of a 784-256-256-10 ReLU MLP (batch 128, float32, softmax cross entropy,
SGD): tapeviz (every registered backend) against the same step written by hand in numpy, and
in PyTorch (CPU) when it is importable. Prints milliseconds per step and ratios.

    .venv/bin/python bench/bench_train.py [--steps N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tapeviz.core as core  # noqa: E402

SIZES, BATCH, LR = (784, 256, 256, 10), 128, 0.01


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    ws = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        limit = np.sqrt(6 / (fan_in + fan_out))
        ws += [
            rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32),
            np.zeros(fan_out, np.float32),
        ]
    return ws


def _batch(seed=1):
    rng = np.random.default_rng(seed)
    return rng.random((BATCH, SIZES[0]), dtype=np.float32), rng.integers(0, 10, BATCH)


def numpy_step_fn():
    """Forward, backward and SGD update written by hand."""
    ws, (x, y) = _weights(), _batch()
    onehot = np.eye(10, dtype=np.float32)[y]

    def step():
        w1, b1, w2, b2, w3, b3 = ws
        h1 = np.maximum(x @ w1 + b1, 0)
        h2 = np.maximum(h1 @ w2 + b2, 0)
        z = h2 @ w3 + b3
        z = z - z.max(1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(1, keepdims=True)
        loss = -np.mean(np.sum(onehot * (z - np.log(e.sum(1, keepdims=True))), 1))
        dz = (p - onehot) / BATCH
        dh2 = (dz @ w3.T) * (h2 > 0)
        dh1 = (dh2 @ w2.T) * (h1 > 0)
        grads = [x.T @ dh1, dh1.sum(0), h1.T @ dh2, dh2.sum(0), h2.T @ dz, dz.sum(0)]
        for i, g in enumerate(grads):
            ws[i] = ws[i] - LR * g
        return loss

    return step


def tapeviz_step_fn():
    ws, (x, y) = _weights(), _batch()
    model = core.nn.Sequential(
        [core.nn.Dense(256, "relu"), core.nn.Dense(256, "relu"), core.nn.Dense(10)]
    ).build_for((784,))
    for v, w in zip(model.parameters(), ws):
        v.assign(w)
    opt, xt = core.optim.SGD(LR), core.tensor(x)
    params = model.trainable_parameters()

    def step():
        loss = opt.minimize(
            lambda: core.losses.softmax_cross_entropy(y, model(xt)),
            var_list=params,
            return_cost=True,
        )
        return loss.item()

    return step


def functional_step_fn():
    """The same step with the functional API: ops on plain tensors, ``value_and_grads``,
    and the update by hand (no nn, no optim)."""
    ws, (x, y) = _weights(), _batch()
    params, xt = [core.tensor(w) for w in ws], core.tensor(x)

    def loss_fn(w1, b1, w2, b2, w3, b3):
        h = core.relu(xt @ w1 + b1)
        h = core.relu(h @ w2 + b2)
        return core.losses.softmax_cross_entropy(y, h @ w3 + b3)

    step_grads = core.value_and_grads(loss_fn)

    def step():
        loss, grads = step_grads(*params)
        for i, g in enumerate(grads):
            params[i] = params[i] - LR * g
        return loss.item()

    return step


def torch_step_fn():
    try:
        import torch
    except ImportError:
        return None
    ws, (x, y) = _weights(), _batch()
    params = [torch.tensor(w.T.copy() if w.ndim == 2 else w, requires_grad=True) for w in ws]
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()
    opt = torch.optim.SGD(params, lr=LR)

    def step():
        h = xt
        for i in range(0, 6, 2):
            h = torch.nn.functional.linear(h, params[i], params[i + 1])
            if i < 4:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def _on_backend(name, step):
    def run():
        with core.backend(name):
            return step()

    return run


def _candidates():
    out = [("numpy (by hand)", numpy_step_fn())]
    for name in core.list_backends():
        for api, make in (("nn+optim", tapeviz_step_fn), ("functional", functional_step_fn)):
            label = f"tapeviz {api} [{name}]"
            try:
                with core.backend(name):
                    step = make()
                    step()
                out.append((label, _on_backend(name, step)))
            except Exception as e:  # a backend that cannot run the step is reported, not fatal
                print(f"  {label} failed: {type(e).__name__}: {e}")
    out.append(("torch (CPU)", torch_step_fn()))
    return out


def measure(candidates, steps, rounds):
    """Best ms/step of each candidate; rounds interleave them so load hits all alike."""
    best = {label: float("inf") for label, step in candidates if step is not None}
    for _ in range(rounds):
        for label, step in candidates:
            if step is None:
                continue
            step()
            t = time.perf_counter()
            for _ in range(steps):
                step()
            best[label] = min(best[label], (time.perf_counter() - t) / steps * 1e3)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="steps per timing")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (best kept)")
    args = parser.parse_args()
    a, b, c = numpy_step_fn()(), tapeviz_step_fn()(), functional_step_fn()()
    assert abs(a - b) < 1e-4 * max(1.0, abs(a)), (a, b)  # the same computation
    assert abs(a - c) < 1e-4 * max(1.0, abs(a)), (a, c)
    candidates = _candidates()
    best = measure(candidates, args.steps, args.rounds)
    base = best["numpy (by hand)"]
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    print(
        f"784-256-256-10 MLP, batch {BATCH}, float32, one SGD step; best of {args.rounds} "
        f"rounds x {args.steps} steps; BLAS threads: {threads}"
    )
    torch_ms = best.get("torch (CPU)")
    for label, _ in candidates:
        ms = best.get(label)
        if ms is None:
            print(f"  {label:<32} not installed")
            continue
        vs_torch = (
            f"   {ms / torch_ms:5.2f}x torch" if torch_ms and label.startswith("tapeviz") else ""
        )
        print(f"  {label:<32} {ms:8.3f} ms/step   {ms / base:5.2f}x numpy{vs_torch}")


if __name__ == "__main__":
    main()
