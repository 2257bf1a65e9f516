"""The one palette of tapeviz: every colour the graph, the widgets and the reports use.

Okabe and Ito's eight colours ("Color Universal Design", 2008) are told apart with every
common colour-vision deficiency; each use also has a text, shape or marker twin, so no meaning
rests on colour alone. Names say what a colour is (``OKABE_ITO``) or what it means (``PASS``,
``ROLE_COLOURS``); modules import the name, never spell the hex value.
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

# neutral greys, darkest first: text, secondary text, rules and de-emphasised marks
GREY = {
    "text": "#333333",
    "dark": "#444444",
    "edge": "#555555",
    "muted": "#777777",
    "mid": "#999999",
    "light": "#BBBBBB",
    "rule": "#CCCCCC",
    "faint": "#DDDDDD",
}

# verdicts: always shown with the words PASS / FAIL (or correct / not yet) beside them
PASS = _C["bluish_green"]
FAIL = _C["vermillion"]
ERROR_BACKGROUND = "#FFF4EC"  # the tint behind an error box with a vermillion border

# a saved value's role (memory inspector bars, the graph's saved-value edges)
ROLE_COLOURS = {"input": _C["blue"], "output": _C["orange"], "memory": _C["reddish_purple"]}

# series in a plot, in order (loss curves, compared tapes)
SERIES = tuple(
    _C[k] for k in ("blue", "orange", "bluish_green", "reddish_purple", "vermillion", "sky_blue")
)

# the state of a node while stepping through backward, shared by the graph and the stepper
STATE = {
    "current": _C["orange"],
    "selected": _C["blue"],
    "visited": GREY["faint"],
    "error": _C["vermillion"],
}
