"""``detect_anomaly()``: stop at the first NaN or Inf, forward or backward, and name its node.

Inside the block the engine calls a check after every kernel (``core.tensors.recording.anomaly_hook``, a
context variable that is ``None`` outside, so ``run_kernel`` pays one lookup when it is off).
Gradient ops run through ``run_kernel`` too, while the tape being differentiated records them
with ``grad_of`` set; so a NaN born in backward is traced to the forward node whose gradient
made it, and to the user code line that created that node.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from ..engine import dispatch as engine
from ..engine.source_location import where
from ..tensors import recording
from .arguments import check_flag

__all__ = ["detect_anomaly", "AnomalyError", "tensor_stats"]


class AnomalyError(FloatingPointError):
    """A NaN or Inf appeared. Attributes (plain data):

    phase: ``"forward"`` or ``"backward"``; kind: ``"nan"``, ``"inf"`` or ``"nan and inf"``;
    kernel: the kernel (or custom node label) that produced it; output_index: which output;
    node: the recorded ``Node`` (None when no tape was recording); node_id;
    forward_node: for backward, the forward node whose gradient produced it (``grad_of``);
    source: ``(file, line, function)`` of the user code that created the (forward) node;
    input_stats: ``{input name: tensor_stats(...)}`` of the op that produced it;
    forward_input_stats: the same for ``forward_node`` (backward only).
    """

    def __init__(self, message, **info):
        super().__init__(message)
        self.phase = info["phase"]
        self.kind = info["kind"]
        self.kernel = info["kernel"]
        self.output_index = info["output_index"]
        self.node = info["node"]
        self.node_id = None if info["node"] is None else info["node"].id
        self.forward_node = info["forward_node"]
        self.source = info["source"]
        self.input_stats = info["input_stats"]
        self.forward_input_stats = info["forward_input_stats"]


_WORDS = {"nan": "NaN", "inf": "Inf", "nan and inf": "NaN and Inf"}


def tensor_stats(t) -> dict:
    """``{"shape", "dtype", "min", "max", "mean", "nan", "inf"}`` of a tensor (plain values)."""
    d = np.asarray(t.peek())
    stats = {"shape": d.shape, "dtype": str(d.dtype), "min": None, "max": None, "mean": None}
    stats["nan"] = bool(d.dtype.kind in "fc" and np.isnan(d).any())
    stats["inf"] = bool(d.dtype.kind in "fc" and np.isinf(d).any())
    if d.size and d.dtype.kind in "fiub":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            finite = d[np.isfinite(d)] if d.dtype.kind == "f" else d
            if finite.size:
                stats.update(min=float(finite.min()), max=float(finite.max()))
                stats["mean"] = float(finite.astype(np.float64).mean())
    return stats


def _fmt_stats(stats: dict) -> str:
    parts = []
    for name, s in stats.items():
        nums = "" if s["min"] is None else (
            f", min {s['min']:.4g}, max {s['max']:.4g}, mean {s['mean']:.4g} (finite values)"
        )  # fmt: skip
        parts.append(f"    {name}: shape {s['shape']}, {s['dtype']}{nums}, "
                     f"nan: {'yes' if s['nan'] else 'no'}, inf: {'yes' if s['inf'] else 'no'}")  # fmt: skip
    return "\n".join(parts) or "    (no inputs)"


def _where(source) -> str:
    return where(source)  # a file and line, or the notebook cell


def _find_node(outputs):
    """The node just recorded for ``outputs`` and, in backward, the forward node."""
    backward_hit = forward_hit = None
    rec = recording.current()
    if rec is None:
        return None, None
    for bw in rec.backward:
        pool = bw.tape.backward_nodes
        if pool and pool[-1].outputs and pool[-1].outputs[0] is outputs[0]:
            backward_hit = (pool[-1], bw.tape.node(bw.grad_of))
    for tape in rec.tapes:
        pool = tape.nodes
        if forward_hit is None and pool and pool[-1].outputs and pool[-1].outputs[0] is outputs[0]:
            forward_hit = pool[-1]
    return backward_hit, forward_hit


def _check(name, inputs, outputs, forward: bool, backward: bool) -> None:
    for i, o in enumerate(outputs):
        d = o.peek()
        if d is None or d.dtype.kind != "f" or np.isfinite(d).all():
            continue
        backward_hit, forward_hit = _find_node(outputs)
        if (backward_hit is not None and not backward) or (backward_hit is None and not forward):
            return
        raise _error(name, inputs, i, d, backward_hit, forward_hit)


def _kind(data) -> str:
    """Which non-finite values ``data`` holds: "nan", "inf" or "nan and inf"."""
    has_nan, has_inf = bool(np.isnan(data).any()), bool(np.isinf(data).any())
    return "nan and inf" if has_nan and has_inf else ("nan" if has_nan else "inf")


def _error(name, inputs, index, data, backward_hit, forward_hit) -> AnomalyError:
    kind = _kind(data)
    word = _WORDS[kind]
    stats = {k: tensor_stats(t) for k, t in inputs.items()}
    if backward_hit is not None:
        node, fwd = backward_hit
        fstats = {k: tensor_stats(t) for k, t in fwd.inputs.items() if t.peek() is not None}
        msg = (
            f"detect_anomaly: {word} appeared in the backward pass, in the gradient of node "
            f"{fwd.id} ({fwd.label}, kernel {fwd.kernel}) created at {_where(fwd.source)}: its "
            f"gradient op {name} (backward node {node.id}) produced {word} in output {index}\n"
            f"  inputs of the gradient op:\n{_fmt_stats(stats)}\n"
            f"  inputs of node {fwd.id} ({fwd.label}):\n{_fmt_stats(fstats)}"
        )
        info = {"phase": "backward", "node": node, "forward_node": fwd, "source": fwd.source,
                "forward_input_stats": fstats}  # fmt: skip
    else:
        node = forward_hit
        source = node.source if node is not None and node.source else engine.caller_source()
        label = f"node {node.id} ({node.label})" if node is not None else "an unrecorded op"
        msg = (
            f"detect_anomaly: {word} appeared in the forward pass: {label}, kernel {name}, "
            f"output {index}, created at {_where(source)}\n  inputs:\n{_fmt_stats(stats)}"
        )
        info = {"phase": "forward", "node": node, "forward_node": None, "source": source,
                "forward_input_stats": None}  # fmt: skip
    return AnomalyError(msg, kind=kind, kernel=name, output_index=index, input_stats=stats, **info)


class _Hook:
    """What the engine calls: ``hook(kernel, inputs, outputs)`` after each kernel, and
    ``hook.gradient(node, input name, g)`` for each gradient reverse mode produces."""

    __slots__ = ("forward", "backward")

    def __init__(self, forward, backward):
        self.forward, self.backward = forward, backward

    def __call__(self, name, inputs, outputs):
        _check(name, inputs, outputs, self.forward, self.backward)

    def gradient(self, node, name, g) -> None:
        d = g.peek()
        if not self.backward or d.dtype.kind != "f" or np.isfinite(d).all():
            return
        kind = _kind(d)
        fstats = {k: tensor_stats(t) for k, t in node.inputs.items() if t.peek() is not None}
        msg = (
            f"detect_anomaly: {_WORDS[kind]} appeared in the backward pass: the gradient function of "
            f"node {node.id} ({node.label}, kernel {node.kernel}) created at "
            f"{_where(node.source)} returned it for input {name!r}\n"
            f"  inputs of node {node.id} ({node.label}):\n{_fmt_stats(fstats)}"
        )
        raise AnomalyError(msg, phase="backward", kind=kind, kernel=node.kernel,
                           output_index=0, node=None, forward_node=node, source=node.source,
                           input_stats={name: tensor_stats(g)},
                           forward_input_stats=fstats)  # fmt: skip


@contextlib.contextmanager
def detect_anomaly(forward: bool = True, backward: bool = True):
    """Raise ``AnomalyError`` at the first NaN or Inf a kernel produces in the block.

    The error names the node (its id on the recording tape), its kernel, the user code line
    that created it, and min/max/mean/nan/inf of its inputs; for a NaN born in backward, the
    forward node whose gradient produced it. Costs nothing outside the block.

    Args:
        forward: check the forward pass.
        backward: check gradient ops (``tape.gradient`` inside the block).

    Example:
        >>> import tapeviz as tv
        >>> try:
        ...     with tv.detect_anomaly():
        ...         _ = tv.log(tv.tensor([-1.0]))
        ... except tv.AnomalyError as e:
        ...     print(e.phase, e.kernel, e.kind)
        forward Log nan
    """
    check_flag("detect_anomaly", "forward", forward)
    check_flag("detect_anomaly", "backward", backward)
    with recording.anomaly_checking(_Hook(forward, backward)):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            yield
