"""``tv.show_code``: the program ``tv.jit`` compiles, forward and backward, as Python a person
reads, beside the graph of the same trace; pointing at a line outlines its node, pointing at
a node lights its lines.

The code comes from core (``Compiled.rows``: one row per statement, with the user's names,
each forward op's source line, the backward grouped under the op it differentiates); this
module highlights it (pygments, in JupyterLab's editor colours) and links the views in the
browser (``ipywidgets.jslink`` on ``pointed``: no round trip through the kernel).
"""

from __future__ import annotations

import pathlib

import anywidget
import ipywidgets as widgets
import traitlets as t

from tapeviz.core.jit import JitFunction, jit
from tapeviz.core.jit.render import text

from ..present.text import html_text

__all__ = ["show_code", "CodeView", "CodeWidget", "highlight"]

_STATIC = pathlib.Path(__file__).resolve().parent.parent / "static"


def highlight(line: str) -> str:
    """One line of Python as HTML (pygments' classes; escaped text without pygments)."""
    try:
        from pygments import highlight as _highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pragma: no cover - pygments comes with IPython
        return html_text(line)
    return _highlight(line, PythonLexer(), HtmlFormatter(nowrap=True)).rstrip("\n")


class CodeWidget(anywidget.AnyWidget):
    """The highlighted program; ``pointed`` is the graph node of the line under the pointer."""

    _esm = _STATIC / "code_view.js"
    _css = _STATIC / "code_view.css"

    rows = t.List(help="[{html, kind, node, phase}] one per line of the program").tag(sync=True)
    pointed = t.Unicode("", help="graph node id ('n3') the pointer or a linked view points at").tag(
        sync=True
    )
    title = t.Unicode("", help="a line above the code").tag(sync=True)

    def static_html(self) -> str:
        """The code as static HTML (a saved notebook shows it without a widget manager)."""
        lines = "\n".join(r["html"] for r in self.rows)
        return f"<pre style='line-height:1.4'>{lines}</pre>"

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        data["text/html"] = self.static_html()
        return data, meta


class CodeView(widgets.HBox):
    """``show_code``'s result: the code widget and, when asked, the graph widget, linked.

    Attributes:
        code: the ``CodeWidget``; graph: the ``GraphWidget`` of the trace (or None).
        compiled: core's ``Compiled`` program; text: the readable code; source: the
            Python that runs.
    """

    def __init__(self, compiled, graph=True, backward="both", retraced="", **graph_kwargs):
        self.compiled = compiled
        self.guards = compiled.guards()
        rows = compiled.rows(retraced)  # core's one printer of the program (jit/render.py)
        self.text = text(rows)
        self.source = compiled.source
        self.code = CodeWidget(
            rows=[{**r, "html": highlight(r["text"])} for r in rows],
            title=f"tv.jit({compiled.program.name}): the generated forward and backward",
            layout=widgets.Layout(flex="1 1 48%", min_width="0"),
        )
        self.graph = None
        children = [self.code]
        if graph and compiled.tape is not None:
            from tapeviz.graph.widget.widget import GraphWidget

            mode = backward if compiled.tape.backward_nodes else False
            self.graph = GraphWidget(compiled.tape, backward=mode, **graph_kwargs)
            self.graph.layout = widgets.Layout(flex="1 1 52%", min_width="0")
            self._link = widgets.jslink((self.code, "pointed"), (self.graph, "pointed"))
            children.append(self.graph)
        super().__init__(children, layout=widgets.Layout(width="100%", align_items="flex-start"))

    def __str__(self) -> str:
        return self.text

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        data["text/html"] = self.code.static_html()
        data["text/plain"] = self.text
        return data, meta


def show_code(f, *args, graph=True, backward="both", **kwargs) -> CodeView:
    """The code ``tv.jit`` generates for ``f`` on these arguments, beside its graph.

    Args:
        f: a function (compiled here with ``tv.jit``) or a ``tv.jit`` function.
        *args, **kwargs: the arguments to trace ``f`` with.
        graph: show the graph of the trace beside the code (hovering links them).
        backward: the graph's view when the trace ran a backward pass (``"both"``).

    Below the code, its guards: what the program assumed (argument shapes and dtypes, static
    values, the Variables it reads and their ``trainable`` flags, the kernels and gradients
    in force, each global and closure variable its code can reach); a call that matches
    them all runs the program, any other traces again. After a retrace of a ``tv.jit``
    function, the reason heads the list.

    Returns:
        A ``CodeView``; ``print(view)`` prints the code; ``view.guards`` lists the guards.

    Example:
        >>> import tapeviz as tv
        >>> view = tv.show_code(tv.grad(lambda x: tv.sum(tv.tanh(x))), tv.tensor([0.5]))
        >>> "TanhGrad" in view.text
        True
    """
    jitted = f if isinstance(f, JitFunction) else jit(f)
    compiled = jitted.trace(*args, **kwargs)
    return CodeView(compiled, graph=graph, backward=backward, retraced=jitted.retrace_reason)
