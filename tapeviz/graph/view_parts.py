"""The GraphWidget's view: the ES module parts under ``tapeviz/static/graph/``, joined."""

from __future__ import annotations

import pathlib

STATIC = pathlib.Path(__file__).resolve().parent.parent / "static"

# the view's ES module: anywidget loads one module (relative imports do not resolve from the
# blob it loads), so the parts under static/graph/ are joined in this order; each holds the
# top-level functions of one concern, and only the last has `export default`
VIEW_PARTS = (
    "dom.js",  # elements, the SVG parsed safely
    "panel.js",  # the details panel, the legend
    "toolbar.js",  # the elements and controls
    "panzoom.js",  # opening scale, zoom, pan, "fit"
    "nodes.js",  # selection, pointer, links, the stepper's highlights; a node's handlers
    "groups.js",  # open and fold groups, the breadcrumb
    "search.js",  # find a name
    "picture.js",  # parse, wire and show an SVG
    "cache.js",  # pictures drawn ahead by key, messages with Python
    "main.js",  # render: the parts wired together
)


def view_module() -> str:
    """The GraphWidget's ES module: ``VIEW_PARTS`` joined, each after a ``// --- name`` line."""
    folder = STATIC / "graph"
    return "\n".join(f"// --- {p}\n{(folder / p).read_text()}" for p in VIEW_PARTS)
