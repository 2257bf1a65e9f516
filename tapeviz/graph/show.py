"""``tv.show_graph``: a displayable picture of a tape (SVG in Jupyter, files elsewhere)."""

from __future__ import annotations

import pathlib
import re
import sys

from ..present.text import html_text
from .extract import GraphData, extract
from .png import svg_to_png
from .render import render_dot, render_svg, resolve_engine, to_dot
from .style import MIN_PT
from .target import mode_of, resolve_tape

__all__ = ["GraphView", "show_graph", "resolve_tape", "mode_of"]


# the smallest display scale at which MIN_PT text is 11 CSS px (1 pt = 4/3 px)
LEGIBLE_SCALE = 11 / (MIN_PT * 4 / 3)
_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


def in_jupyter() -> bool:
    """True inside a Jupyter kernel (rich display), checked without importing IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if hasattr(ipython, "get_ipython") else None
    return getattr(shell, "kernel", None) is not None


NOT_SHOWN = (
    "tapeviz: a graph from tv.show_graph was never shown: outside Jupyter there is no "
    'display. Save it and open the file: tv.show_graph(...).save("graph.svg") (or .png, .dot)'
)


FIT_PT = 720.0  # a notebook's output width, in points
BIG_OPS = 60  # a static picture of more ops than this is drawn grouped
FEW_OPS = 6  # ... and one of at most this many forward ops never is


def fit_width(svg: str, max_pt: float = FIT_PT, min_scale: float = LEGIBLE_SCALE) -> str:
    """Shrink a wide SVG's displayed size to ``max_pt`` (a notebook's output width), but not
    below ``min_scale`` (the smallest label stays >= 11 px): a bigger graph scrolls. The
    drawing (viewBox) is unchanged, so ``to_svg()`` and saved files keep the natural size.

    Example:
        >>> fit_width('<svg width="750pt" height="100pt" viewBox="0 0 750 100">')
        '<svg width="720pt" height="96pt" viewBox="0 0 750 100">'
    """
    m = _SVG_SIZE.search(svg)
    if m is None:
        return svg
    w, h = float(m.group(1)), float(m.group(2))
    scale = max(min_scale, min(1.0, max_pt / w))
    if scale >= 1.0:
        return svg
    size = f'<svg width="{w * scale:.0f}pt" height="{h * scale:.0f}pt"'
    return svg[: m.start()] + size + svg[m.end() :]


class GraphView:
    """A drawn graph: shows itself in Jupyter (SVG), and gives ``to_dot``/``to_svg``/``save``.

    Build one with ``tv.show_graph``. ``data`` is the extracted ``GraphData``, ``options``
    the drawing options (see ``tapeviz.graph.to_dot``), ``engine`` the renderer.
    """

    def __init__(self, data: GraphData, tape=None, engine="auto", note=None, **options):
        self.data = data
        self.tape = tape
        self.engine = engine
        self.note = note
        self.options = options
        self._svg = None
        self._chosen = None  # the options drawn (see _layout)
        # a plain script discards a view it cannot display: __del__ says how to see it
        self._used = in_jupyter()

    def to_dot(self) -> str:
        """The DOT source (HTML-like labels for the system dot, plain text for wasm)."""
        self._used = True
        html_labels = resolve_engine(self.engine) == "system"
        return to_dot(self.data, html_labels=html_labels, **self._layout())

    def _layout(self) -> dict:
        """The options drawn. Left to choose (no ``collapse``, ``rankdir`` or highlight):
        the graph op by op when it is shown whole at a legible size in a notebook's width
        (``fit_width``), else grouped by the code's structure (``collapse.plan``), then
        with a loop's turns merged; of those that fit, the first; else the narrowest."""
        if self._chosen is not None:
            return self._chosen
        opts = self.options
        self._chosen = opts
        if opts.get("collapse") is not None or opts.get("rankdir") or opts.get("highlight"):
            return opts
        html_labels = resolve_engine(self.engine) == "system"
        widest = FIT_PT / LEGIBLE_SCALE
        tried = []
        mode = opts.get("mode", "forward")
        drawn = len(self.data.ops) if mode != "backward" else 0
        drawn += len(self.data.backward_ops) if mode != "forward" else 0
        # op by op (as chosen, then top-down), grouped, merged; past BIG_OPS too wide, slow
        steps = [(None, None, None), (None, None, "TB")] if drawn <= BIG_OPS else []
        if len(self.data.ops) > FEW_OPS:  # a few ops read best one by one, scrolled if wide
            steps += [(True, False, None), (True, True, None)]
        if not steps:
            return opts
        for collapse, merge, rankdir in steps:
            choice = dict(opts, collapse=collapse, merge=merge, rankdir=rankdir)
            dot = to_dot(self.data, html_labels=html_labels, **choice)
            try:
                svg = render_svg(dot, engine=self.engine)
            except ImportError:  # MissingExtraError: nothing draws here, so nothing to measure
                return opts  # (the base install's .save("g.dot") writes the graph as asked)
            m = _SVG_SIZE.search(svg)
            width = float(m.group(1)) if m else 0.0
            tried.append((width, choice, svg))
            if width <= widest:
                break
        fits = [t for t in tried if t[0] <= widest]
        width, self._chosen, self._svg = fits[0] if fits else min(tried, key=lambda t: t[0])
        return self._chosen

    def to_svg(self) -> str:
        """The SVG text (rendered once, then cached)."""
        self._used = True
        self._layout()  # may draw it while choosing
        if self._svg is None:
            self._svg = render_svg(self.to_dot(), engine=self.engine)
        return self._svg

    def to_png(self, scale: float = 2.0) -> bytes:
        """PNG bytes: from the system Graphviz when it draws, else the SVG rasterized by resvg.

        Args:
            scale: pixels per CSS pixel when rasterizing the SVG (the system dot draws at 96 dpi).
        """
        if resolve_engine(self.engine) == "system":
            return render_dot(self.to_dot(), "png", "system")
        return svg_to_png(self.to_svg(), scale=scale)

    def save(self, path) -> pathlib.Path:
        """Write ``.svg``, ``.dot``/``.gv`` or ``.png`` (no system Graphviz needed)."""
        path = pathlib.Path(path)
        suffix = path.suffix.lower()
        if suffix == ".svg":
            path.write_text(self.to_svg(), encoding="utf-8")
        elif suffix in (".dot", ".gv"):
            path.write_text(self.to_dot(), encoding="utf-8")
        elif suffix == ".png":
            path.write_bytes(self.to_png())
        else:
            raise ValueError(f"GraphView.save: expected a .svg, .dot, .gv or .png path, got {path}")
        return path

    def _repr_mimebundle_(self, include=None, exclude=None):
        self._used = True
        text = repr(self)
        try:
            svg = self.to_svg()
        except Exception as e:  # errors are part of the UI: say what failed, in place
            msg = html_text(f"{type(e).__name__}: {e}")
            return {"text/plain": text, "text/html": f"<pre>graph could not be drawn: {msg}</pre>"}
        return {"text/plain": text, "image/svg+xml": fit_width(svg)}

    def __del__(self):
        if not getattr(self, "_used", True):
            try:
                print(NOT_SHOWN, file=sys.stderr)
            except Exception:  # interpreter shutdown: nothing to say it with
                pass

    def __repr__(self):
        m = self.data.meta
        extra = f"; backward failed: {self.note}" if self.note else ""
        return (
            f"GraphView({m['n_ops']} ops, {m['n_tensors']} tensors, "
            f"{m['n_backward_ops']} backward ops, mode={self.options.get('mode')}{extra})"
        )


def show_graph(
    target,
    *args,
    backward=False,
    show_saved: bool = True,
    show_values: bool = True,
    rankdir: str | None = None,
    highlight: dict | None = None,
    max_nodes: int = 300,
    collapse: bool | None = None,
    engine: str = "auto",
    **kwargs,
) -> GraphView:
    """Draw the forward and/or backward graph of a tape.

    Args:
        target: a ``Tape``; a ``Tensor`` produced on a live tape (the tape that made it is
            found); or a function, followed by its arguments: ``f(*args)`` is recorded on a
            persistent tape and its backward run with ``dy = ones``.
        backward: ``False`` (forward graph), ``True`` (the gradient ops that ran) or
            ``"both"``.
        show_saved: draw saved-for-backward values beside their op.
        show_values: small tensors show ``data | grad``.
        rankdir: ``"LR"`` or ``"TB"``; None picks by size.
        highlight: ``{node id: "error"|"current"|"visited"|"selected"}``.
        max_nodes: past this many ops the graph collapses to scopes / chunks.
        collapse: force collapsing on (True) or off (False).
        engine: ``"auto"``, ``"system"`` or ``"wasm"``.
        **kwargs: keyword arguments for ``target`` when it is a function.

    Returns:
        GraphView (displays as SVG; ``to_dot()``, ``to_svg()``, ``save(path)``).

    Example:
        >>> import tapeviz as tv
        >>> view = tv.show_graph(lambda x: tv.sum(tv.tanh(x)), tv.tensor([0.5, 1.0]))
        >>> view.data.meta["n_ops"], view.data.meta["has_backward"]
        (2, True)
    """
    mode = mode_of(backward)
    tape, err = resolve_tape(target, args, kwargs)
    data = extract(tape)
    if mode != "forward" and not data.meta["has_backward"]:
        why = f" (the gradient failed: {err})" if err else ""
        raise ValueError(
            f"show_graph: backward={backward!r} but the tape has no backward pass{why}; call "
            "tape.gradient(...) first, or pass a function: tv.show_graph(f, x, backward=True)"
        )
    return GraphView(
        data,
        tape=tape,
        engine=engine,
        note=err,
        mode=mode,
        show_saved=show_saved,
        show_values=show_values,
        rankdir=rankdir,
        highlight=highlight,
        max_nodes=max_nodes,
        collapse=collapse,
    )
