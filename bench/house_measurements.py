"""What the performance machinery in code meant for reading buys (bench/house_measurements.md).

Not a test. Run: ``.venv/bin/python bench/house_measurements.py [backward|assign|pictures|checks]``
(all four without an argument). Each part prints what it measured:

* ``backward``: an MLP's ``gradient()`` peak and retained memory (tracemalloc) and time, with
  the backward pass's shape-only stand-ins (``settings.backward_keep_bytes``) and without.
* ``assign``: an MLP training step's CPU time with ``Variable.assign`` keeping an unshared
  temporary and with the copy it skips.
* ``pictures``: GraphWidget sessions (clicks on the controls one step away, the kernel
  drawing ahead as ``widget_ahead`` does), the kernel's and the view's picture caches
  replayed at several caps.
* ``checks``: a GradCheckWidget check's cost, and simulated slider sessions with the
  positions checked ahead kept at several caps.
"""

from __future__ import annotations

import contextlib
import gc
import json
import random
import sys
import time
import tracemalloc
from collections import OrderedDict

import numpy as np

import tapeviz as tv
import tapeviz.core as core
from tapeviz.core.tensors import kinds as tensor_kinds

MiB = 1 << 20
SIZES = (784, 512, 512, 512, 10)


def _mlp(batch):
    rng = np.random.default_rng(0)
    ws = [core.variable(rng.standard_normal((a, b)).astype(np.float32) * 0.05)
          for a, b in zip(SIZES, SIZES[1:])]  # fmt: skip
    bs = [core.variable(np.zeros(b, np.float32)) for b in SIZES[1:]]
    x = core.tensor(rng.standard_normal((batch, SIZES[0])).astype(np.float32))

    def loss_fn():
        h = x
        for i, (w, b) in enumerate(zip(ws, bs)):
            h = h @ w + b
            if i < len(ws) - 1:
                h = core.tanh(h)
        return core.mean(core.sum(h * h, axis=1))

    return ws + bs, loss_fn


# --- the backward pass's stand-ins ----------------------------------------------------------
def backward(batches=(256, 2048)):
    for batch in batches:
        params, loss_fn = _mlp(batch)
        for limit in (1 << 16, None):
            core.settings.backward_keep_bytes = limit
            peaks, held = [], []
            for _ in range(5):
                with core.Tape() as tape:
                    loss = loss_fn()
                gc.collect()
                tracemalloc.start()
                base = tracemalloc.get_traced_memory()[0]
                grads = tape.gradient(loss, params)
                now, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                peaks.append(peak - base)
                held.append(now - base - sum(g.numpy().nbytes for g in grads))
                del tape, loss, grads
            print(f"batch {batch}, backward_keep_bytes={limit}: gradient() peak "
                  f"{min(peaks) / MiB:.1f} MiB, left on the tape {min(held) / MiB:.1f} MiB")  # fmt: skip
        times = {1 << 16: [], None: []}
        for _ in range(15):
            for limit in times:  # alternately: the machine's load falls on both
                core.settings.backward_keep_bytes = limit
                with core.Tape() as tape:
                    loss = loss_fn()
                t0 = time.perf_counter()
                tape.gradient(loss, params)
                times[limit].append(time.perf_counter() - t0)
        for limit, v in times.items():
            v.sort()
            print(f"batch {batch}, backward_keep_bytes={limit}: gradient() best "
                  f"{v[0] * 1e3:.1f} ms, median {v[7] * 1e3:.1f} ms")  # fmt: skip
    core.settings.backward_keep_bytes = 1 << 16
    x = core.tensor(np.linspace(-1, 1, 16).astype(np.float32))
    ts = []
    for _ in range(400):
        with core.Tape() as tape:
            tape.watch(x)
            y = x
            for _ in range(50):
                y = core.tanh(y) * 0.9
            s = core.sum(y)
        t0 = time.perf_counter()
        tape.gradient(s, x)
        ts.append(time.perf_counter() - t0)
    ts.sort()
    print(f"101-node chain on 16 float32: gradient() p10 {ts[40] * 1e6 / 101:.2f} us per node")


# --- Variable.assign's unshared temporary ---------------------------------------------------
def _one_blas_thread():
    """One BLAS thread (threadpoolctl, when installed): CPU time per step is the step's."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # run with OPENBLAS_NUM_THREADS=1 instead
        return contextlib.nullcontext()
    return threadpool_limits(1)


def assign(batch=16):
    with _one_blas_thread():
        _assign(batch)


def _assign(batch):
    params, loss_fn = _mlp(batch)
    refs = tensor_kinds._TEMPORARY_REFS
    for jit in (True, False):
        opt = core.optim.SGD(1e-6)
        for _ in range(3):
            opt.minimize(loss_fn, params, jit=jit)
        res = {"kept": [], "copied": []}
        for _ in range(150 if jit else 60):
            for mode in res:  # alternately
                tensor_kinds._TEMPORARY_REFS = refs if mode == "kept" else 0  # 0: always copy
                t0 = time.process_time()
                opt.minimize(loss_fn, params, jit=jit)
                res[mode].append(time.process_time() - t0)
        tensor_kinds._TEMPORARY_REFS = refs
        for mode, v in res.items():
            v.sort()
            n = len(v)
            print(f"batch {batch}, jit={jit}, temporary {mode:6}: CPU per step min "
                  f"{v[0] * 1e3:.2f} ms, p10 {v[n // 10] * 1e3:.2f}, median {v[n // 2] * 1e3:.2f}")  # fmt: skip


# --- the GraphWidget's picture caches -------------------------------------------------------
def _blocks_tape(blocks):
    h = tv.tensor(np.ones((2, 4), np.float32), name="x")
    ws = [tv.variable(np.eye(4, dtype=np.float32) * 0.3) for _ in range(blocks)]
    with tv.Tape(persistent=True) as tape:
        tape.watch(h)
        for i, v in enumerate(ws):
            with tv.name_scope(f"block{i}"):
                for _ in range(5):
                    h = tv.tanh(h @ v) * 0.5 + h
        loss = tv.sum(h)
    tape.gradient(loss, ws)
    return tape


def _mlp_tape():
    rng = np.random.default_rng(0)
    model = tv.nn.Sequential([tv.nn.Dense(16, activation="tanh"),
                              tv.nn.Dense(16, activation="tanh"), tv.nn.Dense(1)])  # fmt: skip
    xb = tv.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    with tv.Tape(persistent=True) as tape:
        loss = tv.sum((model(xb) - 1.0) ** 2)
    tape.gradient(loss, model.parameters())
    return tape


def picture_session(tape, clicks, seed) -> list:
    """Log a session: ("get", key, chars, render s) per picture asked of the kernel's
    cache, ("send", key, chars) per picture the view receives, ("click", key)."""
    from tapeviz.graph.widget import ahead as WA

    WA.CACHE_CHARS = 1 << 40  # unbounded while logging: the caps are replayed after
    w = tv.GraphWidget(tape)
    log, last = [], [0.0]
    draw = w.ahead._draw

    def timed(state):
        t0 = time.perf_counter()
        out = draw(state)
        last[0] = time.perf_counter() - t0
        return out

    w.ahead._draw = timed
    picture = w.ahead.picture

    def logged(state, shown=False):
        last[0] = 0.0
        out = picture(state, shown)
        log.append(["get", repr(WA.picture_id(state)), len(out[0]), last[0]])
        return out

    w.ahead.picture = logged
    k0 = repr(WA.picture_id(w._state()))
    log += [["get", k0, len(w.svg), 0.5], ["send", k0, len(w.svg)]]
    log += [["send", repr(WA.picture_id(v[0])), len(v[1])] for v in w.views]
    sent = {e[1] for e in log if e[0] == "send"}

    def ahead():  # as PicturesAhead.restart, without an event loop
        budget, deadline = WA.AHEAD_CHARS, WA.AHEAD_S
        for state in WA.neighbours(w._shown()):
            k = repr(WA.picture_id(state))
            if k in sent:
                continue
            t0 = time.perf_counter()
            svg, _ = w.ahead.picture(state)
            budget -= len(svg)
            deadline -= time.perf_counter() - t0
            if budget < 0:
                break
            sent.add(k)
            log.append(["send", k, len(svg)])
            if deadline < 0:
                break

    rng, history = random.Random(seed), []
    ahead()
    for _ in range(clicks):
        options = WA.neighbours(w._shown())
        if history and rng.random() < 0.25:
            target = history.pop()  # back: a toggle undone, a group folded again
        else:
            target = options[min(int(rng.expovariate(0.35)), len(options) - 1)]
            history.append(w._state())
        k = repr(WA.picture_id(target))
        log.append(["click", k])
        with w.hold_trait_notifications():
            for name in ("mode", "show_saved", "show_values", "collapse", "rankdir"):
                setattr(w, name, target[name])
            w.expanded = list(target["expanded"])
        log.append(["send", k, len(w.svg)])  # the view remembers what it shows
        sent.add(k)
        ahead()
    WA.CACHE_CHARS = 16 << 20
    return log


def replay_kernel(log, cap) -> tuple:
    """The kernel's cache (``PicturesAhead.picture``: LRU by characters) at ``cap``, and the
    widget's 12 layouts (``_renders``): hits, gets, render seconds saved and spent."""
    cost = {}
    for e in log:
        if e[0] == "get" and e[3]:
            cost.setdefault(e[1], e[3])
    cache, size, renders = OrderedDict(), 0, OrderedDict()
    hits = gets = 0
    saved = spent = 0.0
    for e in log:
        if e[0] != "get":
            continue
        k, chars = e[1], e[2]
        gets += 1
        if k in cache:
            hits += 1
            saved += cost.get(k, 0.0)
            cache.move_to_end(k)
            continue
        if k not in renders:
            spent += cost.get(k, 0.0)
        renders[k] = 1
        renders.move_to_end(k)
        while len(renders) > 12:
            renders.popitem(last=False)
        cache[k] = chars
        size += chars
        while size > cap and len(cache) > 1:
            size -= cache.popitem(last=False)[1]
    return hits, gets, saved, spent


def replay_view(log, cap) -> tuple:
    """The view's cache (graph/cache.js ``remember``: LRU by characters) at ``cap``: clicks
    whose picture it held (shown at once), clicks."""
    cache, size, hits, clicks = OrderedDict(), 0, 0, 0
    for e in log:
        if e[0] == "send":
            if e[1] in cache:
                size -= cache.pop(e[1])
            cache[e[1]] = e[2]
            size += e[2]
            while size > cap and len(cache) > 1:
                size -= cache.popitem(last=False)[1]
        elif e[0] == "click":
            clicks += 1
            if e[1] in cache:
                hits += 1
                cache.move_to_end(e[1])
    return hits, clicks


def pictures(seeds=(0, 1, 2)):
    for name, make, clicks in (("MLP, 3 Dense layers", _mlp_tape, 40),
                               ("1,000 ops, 50 scoped blocks", lambda: _blocks_tape(50), 30)):  # fmt: skip
        for seed in seeds:
            log = picture_session(make(), clicks, seed)
            gets = [e for e in log if e[0] == "get"]
            distinct = {e[1]: e for e in gets}
            print(f"{name}, seed {seed}: {clicks} clicks, {len(gets)} pictures asked, "
                  f"{len(distinct)} distinct, {sum(e[2] for e in distinct.values()) / MiB:.1f} MiB")  # fmt: skip
            for cap in (1, 4, 8, 16, 48, 1 << 20):
                h, g, saved, spent = replay_kernel(log, cap * MiB)
                vh, vc = replay_view(log, cap * MiB)
                label = f"{cap} MiB" if cap < 1 << 20 else "no cap"
                print(f"  {label:>7}: kernel hits {h}/{g}, render s saved {saved:.1f} "
                      f"(spent {spent:.1f}); view: clicks shown at once {vh}/{vc}")  # fmt: skip


# --- the GradCheckWidget's positions checked ahead ------------------------------------------
def check_cost():
    cases = [("tanh(x)*x, 1 element", np.array([0.5])),
             ("tanh(x)*x, 3 elements", np.array([0.5, -1.0, 2.0]))]  # fmt: skip
    for name, x in cases:
        w = tv.GradCheckWidget(lambda x: tv.tanh(x) * x, x)
        g, ts, sizes = w.grid(), [], []
        for i in range(0, g.pn, 40):
            t0 = time.perf_counter()
            frame = w._frame(w.check_at(g.point(i), 1e-6))
            ts.append(time.perf_counter() - t0)
            sizes.append(len(json.dumps(frame, default=float)))
        ts.sort()
        gc.collect()
        tracemalloc.start()
        kept = [w._frame(w.check_at(g.point(i), 1e-6)) for i in range(20)]
        per_frame = tracemalloc.get_traced_memory()[0] / len(kept)
        tracemalloc.stop()
        print(f"{name}: a kept frame holds {per_frame / 1024:.1f} KiB in the kernel")
        print(f"{name}: grid {g.pn} x {g.en}, row + column {g.pn + g.en}; one check "
              f"min {ts[0] * 1e3:.1f} ms, median {ts[len(ts) // 2] * 1e3:.1f} ms; frame "
              f"{np.median(sizes) / 1024:.1f} KiB as JSON")  # fmt: skip


PN, EN = 601, 45  # the x slider's 601 positions (step 0.01 over 6), eps's 45


def _queue(i0, j0):
    row = sorted(range(PN), key=lambda i: (abs(i - i0), i))
    col = sorted(range(EN), key=lambda j: (abs(j - j0), j))
    return [(i, j0) for i in row] + [(i0, j) for j in col]


def _moves(seed, n=40):
    """Drags along x (20 events to a point up to 1.5 away, 70%) and eps changes, each
    followed by a pause of 0.5-4 s: kernel time to check ahead."""
    rng, i, j, moves = random.Random(seed), PN // 2, 24, []
    for _ in range(n):
        if rng.random() < 0.7:
            target = min(PN - 1, max(0, i + rng.randint(-150, 150)))
            moves.append([(round(i + (target - i) * k / 20), j) for k in range(1, 21)])
            i = target
        else:
            j = min(EN - 1, max(0, j + rng.choice([-4, -2, -1, 1, 2, 4])))
            moves.append([(i, j)])
        moves[-1] = (moves[-1], rng.uniform(0.5, 4.0))
    return moves


def check_session(moves, check_s, kernel_cap, view_cap, ahead_s=4.0) -> tuple:
    """Positions drawn at once, events, kernel seconds checking (both keep first in, first
    out, as ChecksAhead.frames and gradcheck_plots.js's frames)."""
    kernel, view, sent = OrderedDict(), OrderedDict(), set()
    hits = events = 0
    spent = 0.0

    def keep(store, cap, key):
        store[key] = 1
        while len(store) > cap:
            store.popitem(last=False)

    def settle(at, pause):
        nonlocal spent
        budget = min(pause, ahead_s)
        for pos in _queue(*at):
            if budget <= 0:
                break
            if pos not in kernel:
                keep(kernel, kernel_cap, pos)
                budget -= check_s
                spent += check_s
            if pos not in sent:
                sent.add(pos)
                keep(view, view_cap, pos)

    settle((PN // 2, 24), 2.0)
    for path, pause in moves:
        for pos in path:
            events += 1
            hits += pos in view
            if pos not in view:  # the kernel's reply; the view holds it after
                if pos not in kernel:
                    spent += check_s
                    keep(kernel, kernel_cap, pos)
                keep(view, view_cap, pos)
                sent.add(pos)
        settle(path[-1], pause)
    return hits, events, spent


def checks():
    check_cost()
    for check_s in (0.003, 0.010):
        on_demand = np.sum([check_session(_moves(s), check_s, 1, 1, 0.0) for s in range(10)], 0)
        print(f"check {check_s * 1e3:.0f} ms, nothing checked ahead: drawn at once "
              f"{int(on_demand[0])}/{int(on_demand[1])}, kernel checking "
              f"{on_demand[2] / 10:.1f} s per 40-move session")  # fmt: skip
        for caps in ((646, 646), (1300, 1300), (1300, 2600), (3000, 3000), (3000, 6000),
                     (PN * EN, PN * EN)):  # fmt: skip
            totals = np.sum([check_session(_moves(s), check_s, *caps) for s in range(10)], 0)
            print(f"check {check_s * 1e3:.0f} ms, kernel keeps {caps[0]}, view keeps "
                  f"{caps[1]}: drawn at once {int(totals[0])}/{int(totals[1])} "
                  f"({totals[0] / totals[1]:.0%}), kernel checking {totals[2] / 10:.1f} s "
                  "per 40-move session")  # fmt: skip


if __name__ == "__main__":
    parts = {"backward": backward, "assign": assign, "pictures": pictures, "checks": checks}
    for name in sys.argv[1:] or list(parts):
        print(f"== {name}")
        parts[name]()
