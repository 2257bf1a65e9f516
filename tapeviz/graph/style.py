"""The look of the graph: palette colours, a shape or border twin for each colour, labels.

Colours come from ``tapeviz.present.palette``, as in the widgets and reports. Labels are
built in ``labels.py``; every plain DOT value goes through ``attr`` here.
"""

from __future__ import annotations

import math

import numpy as np

from ..present.palette import GREY, HIGHLIGHT, OKABE_ITO, TINT, WHITE
from ..present.text import visible

# Font sizes in points (1 pt = 4/3 CSS px at 100 %): no text is smaller than MIN_PT, so the
# widgets know the scale that keeps every label >= 11 px (open) and >= 9 px ("fit").
MIN_PT = 9
TITLE_PT = 11

_C = OKABE_ITO

# role -> (fill, border, node attrs, tag); the tag is the text twin of the colour
TENSOR_STYLES = {
    "input": (TINT["sky_blue"], _C["sky_blue"], {"penwidth": "1.6"}, "input"),
    "variable": (TINT["bluish_green"], _C["bluish_green"], {"peripheries": "2"}, "variable"),
    "constant": (GREY["pale"], GREY["border"], {"style": "rounded,filled,dotted"}, "constant"),
    "output": (TINT["yellow"], _C["black"], {"penwidth": "2.4"}, "output"),
    "intermediate": (WHITE, GREY["muted"], {}, ""),
    "gradient": (GREY["paler"], GREY["dark"], {"style": "rounded,filled,dashed"}, "gradient"),
}

_PURPLE_FILL = TINT["reddish_purple"]
# style -> (shape, fill, border, extra attrs, tag)
OP_STYLES = {
    "builtin": ("box", TINT["blue"], _C["blue"], {}, ""),
    "override": (
        "box",
        TINT["blue"],
        _C["reddish_purple"],
        {"style": "filled,dashed", "penwidth": "2.2"},
        "gradient override",
    ),
    "custom_grad": ("hexagon", _PURPLE_FILL, _C["reddish_purple"], {}, "custom_grad"),
    "DifferentiableFunction": (
        "octagon",
        _PURPLE_FILL,
        _C["reddish_purple"],
        {},
        "DifferentiableFunction",
    ),
    "CompiledLayer": ("component", _PURPLE_FILL, _C["reddish_purple"], {}, "CompiledLayer"),
    "gradient": ("box", GREY["fill"], GREY["edge"], {}, ""),
    "group": ("box3d", TINT["pale_blue"], _C["blue"], {}, "collapsed"),
}


def op_style(style: str) -> tuple:
    """``OP_STYLES[style]``; a kind of primitive tapeviz does not know (a user's own builder)
    is drawn as a purple component box with its kind written on it."""
    found = OP_STYLES.get(style)
    if found is None:
        found = ("component", _PURPLE_FILL, _C["reddish_purple"], {}, style)
    return found


SAVED_STYLE = {"fill": TINT["orange"], "border": _C["orange"]}
BACKEND_BADGES = {"numpy": _C["blue"], "numba": _C["bluish_green"]}

# highlight state -> (border, fill or None, penwidth, marker text, font colour)
HIGHLIGHTS = {
    "error": (_C["vermillion"], TINT["vermillion"], "4", "\u2716 error", _C["vermillion"]),
    "current": (_C["black"], HIGHLIGHT, "4", "\u25b6 current", _C["black"]),
    "visited": (GREY["mid"], None, "1.5", "\u2713 visited", GREY["muted"]),
    "selected": (_C["blue"], None, "4", "\u25cf selected", _C["blue"]),
}


def attr(value) -> str:
    """A quoted DOT attribute value (backslashes and quotes escaped; ``&`` as ``&amp;``, since
    Graphviz passes an entity such as ``&lt;`` through to the SVG, where it would be read as
    ``<``; control characters, lone surrogates and bidi overrides written as their escapes:
    ``present.text.visible``)."""
    s = (
        visible(value)
        .replace("&", "&amp;")
        .replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
    )
    return f'"{s}"'


def fmt_shape(shape) -> str:
    if shape is None:
        return "disposed"
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def fmt_value(v) -> str:
    """A small value as text (3 significant digits), rows on separate lines."""
    a = np.asarray(v)
    if a.dtype.kind == "f":
        return np.array2string(
            a, separator=" ", max_line_width=44, formatter={"float_kind": lambda x: f"{x:.3g}"}
        )
    return np.array2string(a, separator=" ", max_line_width=44)


def edge_width(nbytes) -> str:
    """Edge penwidth growing with the log of the bytes carried (TensorBoard style)."""
    w = 0.8 + 0.9 * math.log10(max(nbytes or 4, 4) / 4)
    return f"{min(w, 7.0):.2f}"


def apply_highlight(attrs: dict, state: str) -> None:
    border, fill, pen, _, _ = HIGHLIGHTS[state]
    attrs["color"] = border
    attrs["penwidth"] = pen
    if fill:
        attrs["fillcolor"] = fill
    if state == "visited":
        attrs["fontcolor"] = GREY["muted"]
