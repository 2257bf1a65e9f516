"""The modes, as source text (pasted into a failure's script), and the comparison rule.

Every mode differentiates ``loss = sum_k sum(v_k * w_k)`` over the program's float values
``v_k`` (fixed random ``w_k``) with respect to its float leaves, or pushes a tangent through
the program's last float value:

- ``value``: each statement's value and dtype against the numpy mirror;
- ``grad``: the gradient (``tv.grads``) against ``torch.autograd.grad``;
- ``hvp_rr``: the Hessian-vector product by reverse over reverse (a tape over ``tv.grads``);
- ``hvp_fr``: the same product by forward over reverse (``tv.jvp`` of ``tv.grads``);
- ``hvp_tape``: the same product from one persistent tape whose ``gradient`` is called inside
  its own ``with`` block (so the tape records it) and then differentiated again;
- ``jvp``: ``tv.jvp`` of the last float value.

PyTorch's answers (float64) are the oracle of the last four; rounding is allowed for by
``mismatch`` (see its docstring), never by a blanket tolerance.
"""

from __future__ import annotations

import numpy as np

MODES = ("value", "grad", "hvp_rr", "hvp_fr", "hvp_tape", "jvp")

HARNESS_TV = '''\
def tv_loss(f, xs, diff, ws):
    def loss(*xd):
        args = list(xs)
        for i, x in zip(diff, xd):
            args[i] = x
        total = None
        for v, w in zip(f(*args), ws):
            if w is not None:
                term = tv.sum(v * tv.tensor(w.astype(v.dtype)))
                total = term if total is None else total + term
        return total
    return loss


def tv_modes(f, xs, diff, ws, us, last):
    """Mode name -> a function computing tapeviz's answer (a list of arrays)."""
    xd = [xs[i] for i in diff]
    loss = tv_loss(f, xs, diff, ws)

    def value():
        return [np.asarray(v.numpy()) for v in f(*xs)]

    def grad():
        return [g.numpy() for g in tv.grads(loss)(*xd)]

    def hvp_rr():
        with tv.Tape() as outer:
            outer.watch(xd)
            gs = tv.grads(loss)(*xd)
            total = sum(tv.sum(g * tv.tensor(u.astype(g.dtype))) for g, u in zip(gs, us))
        return [h.numpy() for h in outer.gradient(total, xd, unconnected_gradients="zero")]

    def hvp_tape():
        with tv.Tape(persistent=True) as tape:
            tape.watch(xd)
            gs = tape.gradient(loss(*xd), xd, unconnected_gradients="zero")
            total = sum(tv.sum(g * tv.tensor(u.astype(g.dtype))) for g, u in zip(gs, us))
        return [h.numpy() for h in tape.gradient(total, xd, unconnected_gradients="zero")]

    def hvp_fr():
        def flat_grad(*xd):
            return tv.concat([tv.ravel(g) for g in tv.grads(loss)(*xd)])
        tangents = [tv.tensor(u.astype(x.dtype)) for u, x in zip(us, xd)]
        flat = tv.jvp(flat_grad, xd, tangents)[1].numpy()
        sizes = np.cumsum([x.size for x in xd])[:-1]
        return [p.reshape(x.shape).astype(x.dtype) for p, x in zip(np.split(flat, sizes), xd)]

    def jvp():
        def out(*xd):
            args = list(xs)
            for i, x in zip(diff, xd):
                args[i] = x
            return f(*args)[last]
        tangents = [tv.tensor(u.astype(x.dtype)) for u, x in zip(us, xd)]
        return [tv.jvp(out, xd, tangents)[1].numpy()]

    return {"value": value, "grad": grad, "hvp_rr": hvp_rr, "hvp_fr": hvp_fr,
            "hvp_tape": hvp_tape, "jvp": jvp}
'''

HARNESS_TORCH = '''\
def th_modes(f, xs, diff, ws, us, last, DT):
    """Mode name -> PyTorch's answer, every statement cast by the dtype map DT."""
    xs = [_as(torch.as_tensor(np.asarray(x)), DT[str(np.asarray(x).dtype)]) for x in xs]

    def fresh():
        xd = [xs[i].detach().clone().requires_grad_(True) for i in diff]
        args = list(xs)
        for i, x in zip(diff, xd):
            args[i] = x
        return xd, f(*args, DT)

    def grads(create_graph):
        xd, outs = fresh()
        terms = [torch.sum(v * torch.as_tensor(w).to(v.dtype)) for v, w in zip(outs, ws)
                 if w is not None and v.requires_grad]
        if not terms:
            return xd, [torch.zeros_like(x) for x in xd]
        gs = torch.autograd.grad(sum(terms), xd, allow_unused=True, create_graph=create_graph)
        return xd, [torch.zeros_like(x) if g is None else g for g, x in zip(gs, xd)]

    def value():
        return [v.detach().numpy() for v in fresh()[1]]

    def grad():
        return [g.detach().numpy() for g in grads(False)[1]]

    def hvp():
        xd, gs = grads(True)
        terms = [torch.sum(g * torch.as_tensor(u).to(g.dtype)) for g, u in zip(gs, us)
                 if g.requires_grad]
        if not terms:
            return [np.zeros(x.shape) for x in xd]
        hs = torch.autograd.grad(sum(terms), xd, allow_unused=True)
        return [np.zeros(x.shape) if h is None else h.numpy() for h, x in zip(hs, xd)]

    def jvp():
        xd, outs = fresh()
        y = outs[last]
        if not y.requires_grad:
            return [np.zeros(y.shape)]
        dy = torch.zeros_like(y, requires_grad=True)
        gs = torch.autograd.grad(y, xd, dy, allow_unused=True, create_graph=True)
        total = sum(torch.sum(g * torch.as_tensor(u).to(g.dtype)) for g, u in zip(gs, us)
                    if g is not None and g.requires_grad)
        if not torch.is_tensor(total):
            return [np.zeros(y.shape)]
        (jv,) = torch.autograd.grad(total, dy, allow_unused=True)
        return [np.zeros(y.shape) if jv is None else jv.detach().numpy()]

    return {"value": value, "grad": grad, "hvp_rr": hvp, "hvp_fr": hvp, "hvp_tape": hvp,
            "jvp": jvp}
'''

ULPS = 16  # rounding allowed beyond the measured amplification (see mismatch)


def mismatch(got, want, dtype, err=None, nan_ok=False, ulps=ULPS, number_ok=False) -> str | None:
    """Why ``got`` (tapeviz, in ``dtype``) is not ``want`` (the oracle, exact), or None.

    NaN must meet NaN and an infinity the same infinity. Finite values may differ by
    ``ULPS`` units of ``dtype``'s epsilon times the oracle's largest finite magnitude (at
    least 1), plus 4x ``err``: the difference PyTorch itself shows between this program run
    in lower precision and in float64 (scaled to ``dtype``), which measures how much the
    program amplifies rounding at this point (cancellation, a near-singular matrix).
    ``nan_ok``: a NaN of tapeviz against a number is a documented convention here (True, or
    a mask of the places where it is); ``number_ok``: a number (or infinity) of tapeviz against the
    oracle's NaN is (see ``fuzz_gen.EXACT_LIMIT``). ``ulps``: the ``ULPS``
    of an op whose formula differs from the oracle's in rounding (see ``Op.ulps``).
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, oracle {want.shape}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    gn, wn = np.isnan(g), np.isnan(w)
    if np.any(nan_ok):
        w = np.where(gn & nan_ok, np.nan, w)
        wn = np.isnan(w)
    if number_ok:
        w = np.where(wn & ~gn, g, w)
        wn = np.isnan(w)
    if (gn & ~wn).any():
        i = _first(gn & ~wn)
        return f"NaN where the oracle has {w[i]!r} (at {i})"
    if (wn & ~gn).any():
        i = _first(wn & ~gn)
        return f"{g[i]!r} where the oracle has NaN (at {i})"
    inf = (np.isinf(g) | np.isinf(w)) & ~gn
    if (inf & (g != w)).any():
        i = _first(inf & (g != w))
        return f"{g[i]!r} where the oracle has {w[i]!r} (at {i})"
    fin = np.isfinite(w)
    scale = max(1.0, float(np.abs(w[fin]).max())) if fin.any() else 1.0
    tol = ulps * np.finfo(dtype if np.dtype(dtype).kind == "f" else np.float64).eps * scale
    tol = tol + (4 * np.nan_to_num(np.asarray(err, np.float64), posinf=0.0) if err is not None
                 else 0.0)  # fmt: skip
    bad = fin & (np.abs(g - w) > tol)
    if bad.any():
        i = _first(bad & (np.abs(g - w) - tol == (np.abs(g - w) - tol)[bad].max()))
        return f"{g[i]!r}, oracle {w[i]!r} (at {i}; allowed {np.broadcast_to(tol, g.shape)[i]:.3g})"
    return None


def _first(mask):
    idx = np.argwhere(mask)[0]
    return tuple(int(i) for i in idx)


def low(dtype) -> str:
    """The dtype the amplification run uses in place of ``dtype``."""
    return {"float64": "float32"}.get(str(dtype), str(dtype))


def rounding(est, ref, dtype, est_dtype):
    """|est - ref| scaled from ``est_dtype``'s epsilon to ``dtype``'s (0 where not finite)."""
    if est is None:
        return None
    e = np.abs(np.asarray(est, np.float64) - np.asarray(ref, np.float64))
    e = np.where(np.isfinite(e), e, 0.0)
    return e * (np.finfo(dtype).eps / np.finfo(est_dtype).eps)
