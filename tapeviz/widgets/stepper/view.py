"""The backprop stepper's controls and panel, drawn in the browser from every step at once.

Why: a button or slider that asks the kernel for the next step waits 100-200 ms for the round
trip in JupyterLab. ``StepperView`` holds each step's title and panel (HTML the stepper made
with every value escaped); the ES module (``tapeviz/static/stepper.js``) shows step
``value`` at once and tells the kernel afterwards. The stepper links ``value`` in the browser
(``jslink``) to the panel's view and to the graph's highlight ``frame``, so one click changes
all three without Python.
"""

from __future__ import annotations

import pathlib

import anywidget
import traitlets as t

_STATIC = pathlib.Path(__file__).resolve().parents[2] / "static"  # tapeviz/static


class StepperView(anywidget.AnyWidget):
    """One part of the stepper: ``"head"`` (title, first / back / play / next / last, the
    step slider) or ``"panel"`` (the step's numbers)."""

    _esm = _STATIC / "stepper.js"
    _css = _STATIC / "stepper.css"

    part = t.Enum(["head", "panel"], "head", help="what this view draws").tag(sync=True)
    value = t.Int(1, help="the step shown, 1-based").tag(sync=True)
    count = t.Int(1, help="how many steps").tag(sync=True)
    pages = t.List(t.Unicode(), help="HTML of each step ('' where Python sends `page`)").tag(
        sync=True
    )
    page = t.Unicode("", help="HTML of step `page_at`, for a step not in `pages`").tag(sync=True)
    page_at = t.Int(0, help="the step `page` is for").tag(sync=True)
    interval_ms = t.Int(900, help="ms per step while playing").tag(sync=True)
