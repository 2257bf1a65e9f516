"""``audit(tape)``: check every recorded node's gradient numerically, on its recorded inputs.

One wrong custom gradient among a hundred ordinary ops shows up as one named node: its id (so
tapeviz can paint it red), kernel, label, the user code line that made it, and its
``GradCheckReport``.

Each node is re-run through its primitive (``Primitive.evaluate``: the kernel on the node's
backend, or, for the primitives the custom-gradient styles build, their ``forward`` on
tensors); a primitive with neither is skipped, with the reason.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import numpy as np

from .. import display
from ..autodiff.tape import Tape
from ..display import HtmlRepr
from ..engine import dispatch as engine
from ..engine import source_location
from ..registry.kernels import BUILTIN_GRADIENTS
from ..tensors.kinds import Constant
from ..tensors.tensor import Tensor
from .arguments import check_choice, check_int, check_number, check_seed, describe
from .gradcheck import DEFAULT_TOLERANCES, GradCheckReport
from .node_problem import NodeProblem
from .report import FAILURE_CLASSES
from .runner import run_checks

__all__ = ["audit", "AuditReport", "NodeAudit"]


@dataclass
class NodeAudit:
    """The audit of one node: ``node_id``, ``kernel``, ``label``, ``style``, ``scope``,
    ``source`` (file, line, function) and its ``report`` (a ``GradCheckReport``)."""

    node_id: int
    kernel: str
    label: str
    style: str
    scope: str
    source: tuple | None
    report: GradCheckReport
    what: str = ""  # the node's kind in words ("built-in kernel", "custom_grad", ...)

    @property
    def passed(self) -> bool:
        return self.report.passed

    @property
    def failure(self) -> str | None:
        return self.report.failure

    def line(self) -> str:
        where = f" at {source_location.where(self.source, func=False)}" if self.source else ""
        status = "ok" if self.passed else f"WRONG: {'; '.join(self.report.verdicts)}"
        what = self.what or self.style
        return f"node {self.node_id} {self.label} ({what}){where}: {status}"

    def lines(self) -> list[str]:
        """This node's line, then what each check compared and found, indented under it."""
        body = self.report.summary().split("\n")[1:]
        return [self.line()] + [f"  {line.strip()}" for line in body]


@dataclass
class AuditReport(HtmlRepr):
    """What ``audit`` found. ``nodes``: a ``NodeAudit`` per checked node; ``skipped``:
    ``{"node_id", "kernel", "reason"}`` per node that could not be checked."""

    nodes: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    tape: object = field(default=None, repr=False, compare=False)  # the audited tape

    @property
    def failures(self) -> list:
        """The ``NodeAudit`` of every node whose gradient is wrong."""
        return [n for n in self.nodes if not n.passed]

    @property
    def failed_node_ids(self) -> list[int]:
        return [n.node_id for n in self.failures]

    @property
    def passed(self) -> bool:
        return not self.failures

    def __getitem__(self, node_id: int) -> NodeAudit:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise KeyError(f"AuditReport: node {node_id} was not audited")

    def __iter__(self):
        """The ``NodeAudit`` of every checked node, in tape order (``list(report)``)."""
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def show_graph(self, **options):
        """The audited tape's graph with every wrong node red and its mistake written on it:
        a tapeviz ``GraphWidget`` (``options`` go to it); needs ``import tapeviz`` and its
        ``viz`` extra."""
        if self.tape is None:
            raise ValueError("AuditReport.show_graph: this report holds no tape to draw")
        return display.view("audit graph", "AuditReport.show_graph")(self, **options)

    def summary(self, passed: bool = False) -> str:
        """The audit in text: a head line, then each wrong node (every node with
        ``passed=True``) followed by its own checks, each saying what it compared; then the
        skipped nodes with the reason."""
        head = (f"audit: {len(self.nodes)} nodes checked, {len(self.failures)} wrong, "
                f"{len(self.skipped)} skipped")  # fmt: skip
        lines = [head]
        for n in self.nodes if passed else self.failures:
            lines += [f"  {line}" for line in n.lines()]
        lines += [f"  skipped node {s['node_id']} ({s['kernel']}): {s['reason']}"
                  for s in self.skipped]  # fmt: skip
        return "\n".join(lines)

    __str__ = summary

    def to_dict(self) -> dict:
        """Plain data: per node id, kernel, label, passed, failure (class and words)."""
        return {
            "passed": self.passed,
            "failed_node_ids": self.failed_node_ids,
            "nodes": [
                {
                    "node_id": n.node_id,
                    "kernel": n.kernel,
                    "label": n.label,
                    "style": n.style,
                    "passed": n.passed,
                    "failure": n.failure,
                    "failure_words": FAILURE_CLASSES.get(n.failure, ""),
                }  # fmt: skip
                for n in self.nodes
            ],
            "skipped": list(self.skipped),
        }


def _skip_reason(node) -> str | None:
    if node.grad is None:
        return "not differentiable (no gradient)"
    if node.kernel == "StopGradient":
        return "stop_gradient: its gradient is zero by design, not the derivative"
    if any(t.peek() is None for t in node.inputs.values()):
        return "an input was disposed"
    if not any(t.dtype.kind == "f" and type(t) is not Constant for t in node.inputs.values()):
        return "no floating input (Python-number constants are not checked)"
    prim = node.primitive
    if node.backend not in prim.kernels and prim.forward is None:
        if prim.kind == "builtin":
            return f"kernel {node.kernel!r} is no longer registered for {node.backend!r}"
        return f"primitive {node.label!r} has no kernel and no forward (no way to re-run it)"
    return None


def audit(tape, mode="fast", eps=None, atol=None, rtol=None, seed=0, max_full=4096):
    """Check the gradient of every node of ``tape`` numerically on its recorded inputs.

    Each node's forward is re-run (``Primitive.evaluate``: its kernel, or its forward) around the
    recorded inputs, and its recorded gradient (``node.grad``, so an override in force when
    it was recorded) is compared with central differences, as ``check_grads`` does.

    Args:
        tape: a ``Tape`` whose saved values are still held: ``Tape(persistent=True)``, or
            any tape before ``gradient()`` (which releases a non-persistent tape's values).
        mode: "fast" (random projections, the full Jacobian only for failing nodes) or "full".
        eps, atol, rtol: as ``check_grads`` (defaults by dtype).
        seed: seed of the random directions.
        max_full: inputs larger than this are not expanded into a full Jacobian.

    Returns:
        An ``AuditReport``; ``report.failures`` lists the nodes whose gradient is wrong.

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([0.5, 1.5])
        >>> with tv.Tape(persistent=True) as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(tv.tanh(x) * x)
        >>> tv.audit(tape).passed
        True
    """
    _check_arguments(tape, mode, eps, atol, rtol, seed, max_full)
    released = [n.id for n in tape.nodes if any(s.released for s in n.saved)]
    if released:
        raise ValueError(
            f"audit: the saved values of {len(released)} nodes (first: node {released[0]}) "
            "were released by tape.gradient(); record with Tape(persistent=True), or audit "
            "before calling gradient()"
        )
    result, rng = AuditReport(tape=tape), np.random.default_rng(seed)
    saved_source, engine.settings.record_source = engine.settings.record_source, False
    try:
        for node in tape.nodes:
            reason = _skip_reason(node)
            if reason is None:
                with np.errstate(all="ignore"):  # perturbed points may leave f's domain
                    reason = _audit_node(node, result, mode, eps, atol, rtol, rng, max_full)
            if reason is not None:
                result.skipped.append({"node_id": node.id, "kernel": node.kernel, "reason": reason})
    finally:
        engine.settings.record_source = saved_source
    return result


def _check_arguments(tape, mode, eps, atol, rtol, seed, max_full) -> None:
    """A mistyped argument is an error naming it, never a verdict on the nodes."""
    if not isinstance(tape, Tape):
        raise TypeError(f"audit: tape must be a Tape (record with tv.Tape(persistent=True)), "
                        f"got {describe(tape)}")  # fmt: skip
    hint = ""
    if isinstance(mode, Tensor):
        hint = ("; audit(tape) checks every node the tape recorded and takes no loss or "
                "target (its second parameter is mode)")  # fmt: skip
    check_choice("audit", "mode", mode, ("fast", "full"), hint)
    check_number("audit", "eps", eps, positive=True)
    check_number("audit", "atol", atol, positive=False)
    check_number("audit", "rtol", rtol, positive=False)
    check_seed("audit", seed)
    check_int("audit", "max_full", max_full)


def _audit_node(node, result, mode, eps, atol, rtol, rng, max_full):
    try:
        p = NodeProblem(node)
    except Exception as e:  # the recorded forward cannot be re-run here
        return f"forward could not be re-run: {type(e).__name__}: {e}"
    relative = False
    if p.exact or all(d != np.float32 for d in p.out_dtypes):
        d_eps, d_atol, d_rtol = DEFAULT_TOLERANCES["float64"]
    elif p.num64:
        relative = atol is None  # float32 analytic side against float64 finite differences
        d_eps, d_atol, d_rtol = 1e-6, 1e-3, 1e-3  # atol: relative to the largest value
    else:
        d_eps, d_atol, d_rtol = DEFAULT_TOLERANCES["float32"]
    eps = d_eps if eps is None else eps
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    report = GradCheckReport(f"node {node.id} ({node.label})", 1, mode, eps, atol, rtol)
    names = _code_names(node)
    try:
        run_checks(p, report, mode=mode, eps=eps, atol=atol, rtol=rtol, forward=False, rng=rng,
                   label=lambda k: names[p.names[k]], max_full=max_full,
                   atol_relative=relative)  # fmt: skip
    except Exception as e:  # a gradient function that crashes is a finding, not a skip
        report.errors.append({"failure": "invalid gradient", "node_id": node.id,
                              "message": f"{type(e).__name__}: {e}"})  # fmt: skip
    for c in report.checks:
        c.arg = p.names[c.arg] if isinstance(c.arg, int) else c.arg
    result.nodes.append(NodeAudit(node.id, node.kernel, node.label, node.style, node.scope,
                                  node.source, report, _what(node)))  # fmt: skip
    return None


def _what(node) -> str:
    """A node's kind in words, each fact once ("LayerNorm (DifferentiableFunction)")."""
    style = node.style
    if style == "override":
        return f"built-in kernel {node.kernel}, gradient overridden"
    if style in ("builtin", "gradient"):
        kind = "built-in kernel" if node.kernel in BUILTIN_GRADIENTS else "registered kernel"
        return kind if node.label == node.kernel else f"{kind} {node.kernel}"
    return style


def _code_names(node) -> dict:
    """``{input slot: how the report names it}``: the name the code gave the tensor, else
    the parameter name of a DifferentiableFunction's forward (not MATLAB's X1, X2), else the
    kernel's input name; the slot follows in parentheses when it differs."""
    params = []
    fn = node.primitive.forward
    if node.primitive.kind == "DifferentiableFunction" and fn is not None:
        try:
            sig = inspect.signature(type(fn).forward)
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            params = [p.name for p in list(sig.parameters.values())[1:] if p.kind in kinds]
        except (TypeError, ValueError):
            params = []
    out = {}
    for i, (slot, t) in enumerate(node.inputs.items()):
        code = t.name or (params[i] if i < len(params) else None)
        out[slot] = f"input {code!r} ({slot})" if code and code != slot else f"input {slot!r}"
    return out
