"""What a graph is drawn from: a Tape, a Tensor made on a live tape, or a function and its
arguments (recorded on a persistent tape with its backward); and which view to draw."""

from __future__ import annotations

import numpy as np

from tapeviz.core import Tensor, tensor
from tapeviz.core.autodiff.tape import Tape, live_tapes


def mode_of(backward) -> str:
    """``backward=False|True|"both"`` (or a mode name) -> ``"forward"|"backward"|"both"``."""
    if backward is False or backward is None or backward == "forward":
        return "forward"
    if backward is True or backward == "backward":
        return "backward"
    if backward == "both":
        return "both"
    raise ValueError(f"show_graph: backward must be False, True or 'both', got {backward!r}")


def _find_tape(t: Tensor) -> Tape:
    hits = [tp for tp in live_tapes() if tp.producer(t) is not None]
    if not hits:
        raise ValueError(
            f"show_graph: tensor {t.name or f't{t.id}'} was not produced on any live tape; "
            "record it inside `with tv.Tape() as tape:` and keep the tape, or pass a "
            "function and its arguments: tv.show_graph(f, x)"
        )
    return max(hits, key=lambda tp: len(tp.nodes))  # the outermost tape has the most context


def _record(f, args, kwargs) -> tuple[Tape, Exception | None]:
    """Run ``f(*args)`` on a persistent tape and its backward (dy = ones); return the tape."""
    args = [tensor(a) if isinstance(a, (float, list, np.ndarray)) else a for a in args]
    with Tape(persistent=True) as tape:
        for a in args:
            if isinstance(a, Tensor) and a.dtype.kind == "f":
                tape.watch(a)
        out = f(*args, **kwargs)
    outs = [o for o in (out if isinstance(out, (list, tuple)) else [out]) if isinstance(o, Tensor)]
    outs = [o for o in outs if o.dtype.kind == "f" and tape.producer(o) is not None]
    sources = [t for t in tape.watched.values() if t.dtype.kind == "f"]
    if not outs or not sources:
        return tape, None
    try:
        dys = [Tensor(np.ones(o.shape, o.dtype)) for o in outs]
        tape.gradient(outs, sources, output_gradients=dys)
    except Exception as e:  # still draw the forward graph; say why there is no backward
        return tape, e
    return tape, None


def resolve_tape(target, args=(), kwargs=None) -> tuple[Tape, Exception | None]:
    """A Tape from a Tape, a Tensor made on a live tape, or a function and its arguments."""
    if isinstance(target, Tape):
        return target, None
    if isinstance(target, Tensor):
        return _find_tape(target), None
    if callable(target):
        return _record(target, args, kwargs or {})
    raise TypeError(
        f"show_graph: expected a Tape, a Tensor or a function (with its arguments), "
        f"got {type(target).__name__}"
    )
