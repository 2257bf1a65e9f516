"""The one palette of tapeviz: every colour the graph, the widgets and the reports use.

Okabe and Ito's eight colours ("Color Universal Design") were chosen to stay distinguishable
for people with the common colour-vision deficiencies; each use also has a text, shape or
marker twin, so no meaning rests on colour alone. Names say what a colour is (``OKABE_ITO``) or what it means (``PASS``,
``ROLE_COLOURS``); Python modules import the name, never spell the hex value. The widgets'
JavaScript and CSS (``tapeviz/static``) cannot import it: they spell values from this palette
only, which ``tests/tapeviz/test_present.py`` checks.
"""

from __future__ import annotations

# black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
_C = OKABE_ITO

WHITE = "#FFFFFF"

# neutral greys, darkest first, named by use
GREY = {
    "ink": "#222222",  # body text where JupyterLab's theme gives none (tapeviz/static CSS)
    "text": "#333333",  # secondary text
    "dark": "#444444",  # gradient tensors' border
    "edge": "#555555",  # edges; gradient ops' border
    "muted": "#777777",  # de-emphasised (visited) text; intermediate tensors' border
    "border": "#8C8C8C",  # constants' border, frames of groups
    "mid": "#999999",  # guide lines in plots
    "light": "#BBBBBB",  # legend and cluster frames
    "rule": "#CCCCCC",  # rules between blocks
    "faint": "#DDDDDD",  # visited cells
    "fill": "#E4E4E4",  # gradient ops' fill
    "panel": "#EEEEEE",  # a second background (tapeviz/static CSS)
    "pale": "#EFEFEF",  # constants' fill
    "paler": "#F1F1F1",  # gradient tensors' fill
    "background": "#FAFAFA",  # a cluster's background
}

# light tints of the Okabe-Ito colours: fills under dark text
TINT = {
    "sky_blue": "#D4ECFA",
    "bluish_green": "#C7EBDF",
    "yellow": "#FAF4B4",
    "blue": "#D5E6F3",
    "pale_blue": "#E9F1F8",
    "reddish_purple": "#F4DCEA",
    "orange": "#FBE5BC",
    "vermillion": "#F8CDB3",
    "pale_vermillion": "#FBE3D6",  # behind an error message
}
HIGHLIGHT = "#FFF7A8"  # the current node's fill while stepping

# dark shades: text in an Okabe-Ito hue that stays readable on white and on the tints
SHADE = {"reddish_purple": "#7A2E5C", "orange": "#5A3E00", "vermillion": "#8A2B00"}

# verdicts: always shown with the words PASS / FAIL (or correct / not yet) beside them
PASS = _C["bluish_green"]
FAIL = _C["vermillion"]

# a saved value's role in the memory inspector's bars
ROLE_COLOURS = {"input": _C["blue"], "output": _C["orange"], "memory": _C["reddish_purple"]}

# series in a plot, in order (loss curves, compared tapes)
SERIES = tuple(
    _C[k] for k in ("blue", "orange", "bluish_green", "reddish_purple", "vermillion", "sky_blue")
)

# a node's state in the backprop stepper's cells
STATE = {
    "current": _C["orange"],
    "selected": _C["blue"],
    "visited": GREY["faint"],
    "error": _C["vermillion"],
}
