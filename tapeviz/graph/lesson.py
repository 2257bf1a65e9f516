"""Lesson mode: the tape drawn as micrograd draws its expressions, for a first backprop class.

Tensors carry the names of the user's own variables (``e = a * b`` -> "e", found in the
caller's frame, or a tensor's ``name=``), ops are symbols (+, ×, tanh), and each tensor shows
``name | data | grad`` and nothing else (no dtype, bytes or backend). ``accumulation_bug=True``
plants micrograd's ``=``-instead-of-``+=`` slip: a tensor used twice keeps only the last edge's
gradient, and every gradient upstream of it is recomputed from that wrong value, so a class
sees what the bug breaks.
"""

from __future__ import annotations

import pathlib

import numpy as np

from ..present.palette import GREY, OKABE_ITO
from ..present.text import html_text, visible
from .lesson_names import OP_SYMBOLS, caller_names, derived_name, tensor_names
from .lesson_unfuse import unfuse as expand
from .png import svg_to_png
from .render import render_dot, resolve_engine
from .show import fit_width

__all__ = [
    "OP_SYMBOLS", "LessonGraph", "caller_names", "derived_name", "lesson_data", "lesson_graph",
    "lesson_min_scale", "tensor_names",
]  # fmt: skip


def _grads(tape) -> dict:
    """``{tensor id: gradient array}``: an op's output gets the dy its step received (the
    engine's sum), a leaf the sum of the shares sent to it."""
    out = {}
    for step in tape.backward_steps:
        node = tape.node(step.node_id)
        for t, dy in zip(node.outputs, step.dy):
            if dy is not None:
                out[t.id] = np.asarray(dy.peek(), np.float64)
        for name, g in step.grads.items():
            t = node.inputs[name]
            if tape.producer(t) is None:
                out[t.id] = out.get(t.id, 0) + np.asarray(g.peek(), np.float64)
    return out


def _buggy_grads(tape) -> dict:
    """The gradients micrograd's ``self.grad = …`` slip gives: each share overwrites the
    previous one, and the wrong values flow on upstream (local derivative = share / dy)."""
    out = {}
    for i, step in enumerate(tape.backward_steps):
        node = tape.node(step.node_id)
        dy = step.dy[0]
        if len(node.outputs) != 1 or dy is None:
            raise ValueError(f"lesson_graph(accumulation_bug=True): node {node.id} "
                             f"({node.kernel}) has {len(node.outputs)} outputs; expected one")  # fmt: skip
        dy = np.asarray(dy.peek(), np.float64)
        new_dy = dy if i == 0 else out.get(node.outputs[0].id, dy)
        for name, g in step.grads.items():
            g = np.asarray(g.peek(), np.float64)
            if g.shape != dy.shape or np.any(dy == 0):
                raise ValueError(
                    f"lesson_graph(accumulation_bug=True): node {node.id} ({node.kernel}) is "
                    f"not elementwise with a nonzero dy; the bug is drawn for scalar lessons"
                )
            out[node.inputs[name].id] = new_dy * (g / dy)  # '=' where '+=' belongs
    for step in tape.backward_steps[:1]:
        out[tape.node(step.node_id).outputs[0].id] = np.asarray(step.dy[0].peek(), np.float64)
    return out


def lesson_data(
    tape, names: dict | None = None, accumulation_bug: bool = False, unfuse: bool = False
) -> dict:
    """The lesson graph as plain data.

    Args:
        tape: a ``tv.Tape`` (its gradient taken, for the grads).
        names: ``{tensor.id: name}`` (default: a tensor's ``name``, else ``t<id>``).
        accumulation_bug: gradients as micrograd's ``=``-instead-of-``+=`` slip gives them.
        unfuse: draw fused kernels (dense layer, softmax cross-entropy) as their composite
            ops, with the values and gradients the engine computes for them.

    Returns:
        ``{"tensors": {id: {"name", "value", "grad"}}, "ops": [{"id", "symbol", "kernel",
        "inputs": [tensor ids], "outputs": [tensor ids]}]}``; ``grad`` is None where none
        flowed.
    """
    names = tensor_names(tape, {}, given=names)
    grads = _buggy_grads(tape) if accumulation_bug else _grads(tape)
    tensors, ops = {}, []
    for node in tape.nodes:
        for t in list(node.inputs.values()) + list(node.outputs):
            if t.id not in tensors:
                name = names.get(t.id) or t.name or f"t{t.id}"
                d = t.peek()
                value = None if d is None else np.asarray(d)
                tensors[t.id] = {"name": name, "value": value, "grad": grads.get(t.id)}
        ops.append({"id": node.id, "kernel": node.kernel,
                    "symbol": OP_SYMBOLS.get(node.kernel, str(node.label).lower()),
                    "inputs": [t.id for t in node.inputs.values()],
                    "outputs": [t.id for t in node.outputs]})  # fmt: skip
    data = {"tensors": tensors, "ops": ops}
    if unfuse:
        data = expand(tape, data, _grads)
    return data


def _num(a) -> str:
    if a is None:
        return "—"
    a = np.asarray(a)
    if a.size == 1:
        return f"{float(a.reshape(-1)[0]):.4g}"
    if a.size <= 4:
        return "[" + ", ".join(f"{float(v):.3g}" for v in a.reshape(-1)) + "]"
    return f"shape {a.shape}"


def _esc(text: str) -> str:
    """Escape a record-label field (both Graphviz engines read plain record labels)."""
    text = visible(text).replace("&", "&amp;")  # Graphviz passes entities through
    for ch in '\\{}|<>"':
        text = text.replace(ch, "\\" + ch)
    return text


def lesson_min_scale(font_size: float) -> float:
    """How far a display may shrink a lesson graph drawn at ``font_size`` points: its text
    stays >= 11 CSS px. A lecture hall's font (28 pt) may shrink further than the default
    14 pt, so a wide slide fits the output's width (00's slide was cut at "grac") and keeps
    text larger than a 14 pt graph's at its limit.

    Example:
        >>> round(lesson_min_scale(14), 3), round(lesson_min_scale(28), 3)
        (0.589, 0.295)
    """
    return min(1.0, 11.0 / (font_size * 4 / 3))


class LessonGraph:
    """A lesson-mode picture of a tape; shows itself as SVG in Jupyter.

    Attributes:
        data: ``lesson_data`` (plain data). ``hidden``: tensor ids whose grad shows "?".
        lit: ``(tensor id, op id)`` edges drawn lit (the step being traversed).
        font_size: points; 24 or more for a lecture hall (presentation mode).
    """

    def __init__(self, data, hidden=(), lit=(), font_size=14, engine="auto"):
        self.data, self.hidden, self.lit = data, set(hidden), set(lit)
        self.font_size, self.engine = font_size, engine

    def to_dot(self) -> str:
        """The DOT source: ``name | data | grad`` records and op circles, left to right."""
        fs = self.font_size
        lines = [
            "digraph lesson {",
            'graph [rankdir="LR", bgcolor="white", nodesep=0.25, ranksep=0.35];',
            f'node [fontname="Helvetica", fontsize={fs}];',
            f'edge [color="{GREY["edge"]}", arrowsize=0.7, fontsize={max(fs - 4, 8)}];',
        ]
        for tid, t in self.data["tensors"].items():
            grad = "?" if tid in self.hidden else _num(t["grad"])
            label = " | ".join(_esc(s) for s in (t["name"], f"data {_num(t['value'])}",
                                                   f"grad {grad}"))  # fmt: skip
            lines.append(f'"t{tid}" [shape="record", label="{{ {label} }}"];')
        for op in self.data["ops"]:
            lit = any((i, op["id"]) in self.lit for i in op["inputs"])
            style = f', style="filled", fillcolor="{OKABE_ITO["yellow"]}"' if lit else ""
            lines.append(f'"o{op["id"]}" [shape="circle", label="{_esc(op["symbol"])}"{style}];')
            for i in op["inputs"]:
                on = (i, op["id"]) in self.lit
                extra = (
                    f' [color="{OKABE_ITO["vermillion"]}", penwidth=3, dir="back"]' if on else ""
                )
                lines.append(f'"t{i}" -> "o{op["id"]}"{extra};')
            lines += [f'"o{op["id"]}" -> "t{o}";' for o in op["outputs"]]
        return "\n".join(lines + ["}"])

    def to_svg(self) -> str:
        """The SVG text (system Graphviz when present, else the WebAssembly one)."""
        text = render_dot(self.to_dot(), "svg", self.engine).decode("utf-8")
        return text[text.find("<svg") :]

    def to_png(self, scale: float = 2.0) -> bytes:
        """PNG bytes: from the system Graphviz when it draws, else the SVG rasterized by resvg
        (no system Graphviz needed)."""
        if resolve_engine(self.engine) == "system":
            return render_dot(self.to_dot(), "png", "system")
        return svg_to_png(self.to_svg(), scale=scale)

    def save(self, path) -> pathlib.Path:
        """Write ``.svg``, ``.dot`` or ``.png`` for slides (no system Graphviz needed)."""
        path = pathlib.Path(path)
        suffix = path.suffix.lower()
        if suffix == ".svg":
            path.write_text(self.to_svg(), encoding="utf-8")
        elif suffix in (".dot", ".gv"):
            path.write_text(self.to_dot(), encoding="utf-8")
        elif suffix == ".png":
            path.write_bytes(self.to_png())
        else:
            raise ValueError(f"LessonGraph.save: expected .svg, .dot, .gv or .png, got {path}")
        return path

    def _repr_mimebundle_(self, include=None, exclude=None):
        text = f"LessonGraph({len(self.data['ops'])} ops, {len(self.data['tensors'])} tensors)"
        try:  # wide graphs shrink to the output's width, never below 11 px text
            svg = fit_width(self.to_svg(), min_scale=lesson_min_scale(self.font_size))
            return {"text/plain": text, "image/svg+xml": svg}
        except Exception as e:  # say what failed, in place
            msg = html_text(f"{type(e).__name__}: {e}")
            return {"text/plain": text, "text/html": f"<pre>graph could not be drawn: {msg}</pre>"}


def lesson_graph(tape, names: dict | None = None, *, accumulation_bug: bool = False,
                 unfuse: bool = False, hidden=(), lit=(), font_size: int = 14,
                 engine: str = "auto") -> LessonGraph:  # fmt: skip
    """Draw ``tape`` for a lesson: the user's names, op symbols, ``data | grad`` per tensor.

    Args:
        tape: a ``tv.Tape``; call ``tape.gradient`` first to see the grads.
        names: ``{tensor.id: name}``; default: each tensor's ``name``, else the variable
            it is bound to in the calling code (``e = a * b`` -> "e").
        accumulation_bug: draw the gradients micrograd's ``=``-instead-of-``+=`` bug gives.
        unfuse: draw fused kernels (a dense layer's ``_FusedMatMul``, softmax cross-entropy)
            as the ops they fuse, each with its value and gradient.
        hidden: tensor ids whose grad shows "?" (the stepper's ask mode).
        lit: ``(tensor id, op id)`` edges to light (the edge being traversed).
        font_size: points (presentation mode: 24).
        engine: ``"auto"``, ``"system"`` or ``"wasm"``.

    Returns:
        A ``LessonGraph`` (SVG in Jupyter; ``to_dot``, ``to_svg``, ``save``).

    Example:
        >>> import tapeviz as tv
        >>> a, b = tv.tensor(2.0), tv.tensor(-3.0)
        >>> with tv.Tape() as tape:
        ...     tape.watch([a, b])
        ...     e = a * b
        >>> _ = tape.gradient(e, [a, b])
        >>> g = lesson_graph(tape)
        >>> [t["name"] for t in g.data["tensors"].values()], g.data["ops"][0]["symbol"]
        (['a', 'b', 'e'], '×')
    """
    names = tensor_names(tape, caller_names(2)) if names is None else names
    data = lesson_data(tape, names, accumulation_bug, unfuse)
    return LessonGraph(data, hidden, lit, font_size, engine)
