"""tapeviz.graph: draw a tape's forward and backward graph.

Three layers, each usable alone: ``extract`` (tape -> plain GraphData), ``to_dot`` /
``render_svg`` (GraphData -> DOT -> SVG, system Graphviz or WebAssembly) and ``show_graph`` /
``GraphWidget`` (display in Jupyter).
"""

from .extract import GraphData, extract
from .render import available_engines, normalize_highlight, render_dot, render_svg, to_dot
from .show import GraphView, show_graph

__all__ = [
    "GraphData",
    "GraphView",
    "GraphWidget",
    "available_engines",
    "extract",
    "normalize_highlight",
    "render_dot",
    "render_svg",
    "show_graph",
    "to_dot",
]


def __getattr__(name):
    if name == "GraphWidget":  # anywidget is imported only when the widget is used
        from .widget.widget import GraphWidget

        return GraphWidget
    raise AttributeError(f"module 'tapeviz.graph' has no attribute {name!r}")
