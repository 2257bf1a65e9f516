"""Export any widget's current picture; presentation mode's style sheet."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.graph.lesson import lesson_graph
from tapeviz.teach import export, presentation


@pytest.fixture
def tape():
    x = tv.tensor([0.5, -1.0], name="x")
    with tv.Tape(persistent=True) as t:
        t.watch(x)
        y = tv.sum(tv.tanh(x) * x)
    t.gradient(y, x)
    return t


def test_graphs_and_widgets_export_svg_or_png(tape, tmp_path):
    svg = export(lesson_graph(tape), tmp_path / "lesson.svg").read_text()
    assert svg.startswith("<svg") and "tanh" in svg
    stepper = tv.BackpropStepper(tape)
    stepper.go(1)
    assert export(stepper, tmp_path / "step.svg").read_text().startswith("<svg")
    check = tv.GradCheckWidget(lambda v: tv.tanh(v) * v, np.array([0.5, -1.0]))
    png = export(check, tmp_path / "check.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="shows no SVG picture now.*it has: .png"):
        export(check, tmp_path / "check.svg")
    with pytest.raises(ValueError, match="expected a .svg or .png"):
        export(check, tmp_path / "check.pdf")


def test_presentation_mode_scales_fonts():
    on = presentation(scale=2).data
    assert "var(--jp-widgets-font-size, 13px) * 2.00" in on and "min-width: max-content" in on
    assert "zoom" not in on  # zooming cut the graph at the output's edge
    assert "font-size" not in presentation(False).data


def test_png_without_the_system_graphviz(tape, tmp_path, monkeypatch):
    """Issue 17's "engine='system', which the user never chose": a lesson graph's and a
    widget's PNG come from the WebAssembly Graphviz + resvg when no ``dot`` is on PATH."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here
    magic = b"\x89PNG\r\n\x1a\n"
    graph = lesson_graph(tape)
    assert graph.save(tmp_path / "lesson.png").read_bytes()[:8] == magic
    assert export(graph, tmp_path / "lesson2.png").read_bytes()[:8] == magic
    stepper = tv.BackpropStepper(tape, ask=True)
    assert export(stepper, tmp_path / "stepper.png").read_bytes()[:8] == magic
    assert export(tv.show_graph(tape), tmp_path / "g.png").read_bytes()[:8] == magic
