"""The work a widget does ahead is one object it owns, used through the functions it is
given (issue 36): ``PicturesAhead`` (GraphWidget.ahead) and ``ChecksAhead``
(GradCheckWidget.ahead) run here from plain functions, with no widget."""

from __future__ import annotations

import json

import ipywidgets as W
import numpy as np

import tapeviz as tv
from tapeviz.graph.widget import ahead as widget_ahead
from tapeviz.graph.widget.ahead import PicturesAhead, Shown, neighbours, picture_id
from tapeviz.widgets.gradcheck.ahead import ChecksAhead, Grid

STATE = {"mode": "forward", "show_saved": True, "show_values": True, "collapse": "auto",
         "rankdir": "", "expanded": []}  # fmt: skip
SVG = '<g id="node1" class="node"><title>n0</title></g><g id="node2" class="node"><title>c3</title>'


def _pictures(shown):
    drawn, sent = [], []

    def draw(state):
        drawn.append(picture_id(state))
        return f"<svg {state['mode']} {state['expanded']}>" + "." * 100, [["fill", "words"]]

    ahead = PicturesAhead(draw, lambda: shown, sent.append, lambda i: {"id": i}, lambda: None)
    return ahead, drawn, sent


def test_pictures_are_drawn_once_kept_up_to_the_cap_and_answer_the_view(monkeypatch):
    shown = Shown(STATE, SVG, has_backward=True)
    ahead, drawn, sent = _pictures(shown)
    both = shown.but(mode="both")
    assert ahead.picture(both) == ahead.picture(both) and len(drawn) == 1  # drawn once
    monkeypatch.setattr(widget_ahead, "CACHE_CHARS", 300)  # about two pictures
    for gid in ("c1", "c2", "c3"):
        ahead.picture(shown.but(expanded=[gid]))
    assert len(ahead.kept()) == 2 and picture_id(both) not in ahead.kept()  # oldest out
    ahead.message({"hello": True})
    pictures = [p for m in sent if "pictures" in m for p in m["pictures"]]
    assert {picture_id(p[0]) for p in pictures} == ahead.kept()  # what was kept goes at once
    assert sent[-1] == {"details": {"n0": {"id": "n0"}}}  # a small graph: every node's
    ahead.message({"want": {"mode": "backward"}})
    assert picture_id(sent[-1]["pictures"][0][0]) == picture_id(shown.but(mode="backward"))
    ahead.message({"details": ["n7"]})
    assert sent[-1] == {"details": {"n7": {"id": "n7"}}}
    assert ahead.views == 1
    ahead.message({"bye": True})
    assert ahead.views == 0


def test_a_highlighted_view_is_not_answered_with_pictures():
    ahead, drawn, sent = _pictures(Shown(STATE, SVG, True, highlighted=True))
    ahead.message({"want": {"mode": "both"}})
    assert drawn == [] and sent == []


def test_the_neighbours_are_the_controls_one_step_away():
    states = neighbours(Shown(STATE, SVG, has_backward=True))
    ids = [picture_id(s) for s in states]
    assert ids[0] == picture_id({**STATE, "expanded": ["c3"]})  # the group opened first
    assert picture_id({**STATE, "mode": "both"}) in ids
    assert picture_id({**STATE, "show_values": False}) in ids
    assert ids[-1] == picture_id({**STATE, "collapse": "on"})  # "fit"


def test_the_widgets_own_their_work_ahead_instead_of_mixing_it_in():
    graph = tv.GraphWidget(lambda x: tv.sum(x * x), tv.tensor([1.0, 2.0]))
    assert isinstance(graph.ahead, PicturesAhead) and not isinstance(graph, PicturesAhead)
    check = tv.GradCheckWidget(lambda x: tv.tanh(x) * x, [0.5])
    assert isinstance(check.ahead, ChecksAhead) and not isinstance(check, ChecksAhead)
    assert check.grid().as_dict() == check.view.data["grid"]


def test_checks_ahead_nearest_first_and_sent_to_a_new_view():
    point = W.FloatSlider(value=0.0, min=-1.0, max=1.0, step=0.5)
    eps = W.FloatLogSlider(value=1e-6, base=10, min=-8, max=-4, step=1)
    grid = Grid.of(point, eps)
    assert (grid.pn, grid.en) == (5, 5) and grid.index(0.0, 1e-6) == (2, 2)
    assert grid.point(3) == 0.5 and grid.eps(2) == 1e-6
    assert grid.snap(0.5000000000000001, 1.0000000000000002e-06) == (0.5, 1e-6)
    assert grid.snap(0.25, 1e-6) == (0.25, 1e-6)  # off the grid: as given
    sent = []
    ahead = ChecksAhead(lambda p, e: {"at": (p, e)}, None, sent.append)
    queue = ahead.queue(grid, (2, 2))
    assert queue[:3] == [("frame", 2, 2), ("frame", 1, 2), ("frame", 3, 2)]
    assert queue[5:7] == [("frame", 2, 2), ("frame", 2, 1)]  # then the eps column
    with_curve = ChecksAhead(lambda p, e: {}, lambda e: {"eps": e}, sent.append)
    assert with_curve.queue(grid, (2, 2))[0] == ("curve", 2)
    ahead.frames = {(i, 0): {"i": i} for i in range(450)}
    ahead.message({"hello": True})
    assert [len(m["frames"]) for m in sent] == [200, 200, 50] and ahead.views == 1
    assert np.all([m["curves"] == {} for m in sent])


def test_the_view_keeps_at_most_frames_kept_positions(tmp_path):
    """gradcheck_plots.js keeps FRAMES_KEPT positions, first in first out, however many a
    message brings (it dropped one per message before: 200 a message grew past the cap);
    run in node, when there is one."""
    import re
    import shutil
    import subprocess
    from pathlib import Path

    import pytest

    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node to run tapeviz/static/gradcheck_plots.js's keepFrames")
    js = (Path(tv.__file__).parent / "static" / "gradcheck_plots.js").read_text()
    code = re.search(r"const FRAMES_KEPT.*?\nfunction keepFrames.*?\n}\n", js, re.S).group(0)
    script = code + (
        "const frames = new Map(), curves = new Map();\n"
        "for (let m = 0; m < 40; m++) keepFrames(frames, curves, {frames: "
        "Array.from({length: 200}, (_, k) => [m * 200 + k, 0, {}]), curves: {3: {x: []}}});\n"
        "console.log(JSON.stringify([frames.size, frames.keys().next().value, curves.size]));"
    )
    (tmp_path / "keep.js").write_text(script)
    out = subprocess.run([node, tmp_path / "keep.js"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [6000, "2000:0", 1]  # the oldest 2,000 gone
