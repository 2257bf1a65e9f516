"""The gradient check's live plots, drawn in the browser from the numbers the kernel sends,
and the sliders linked to them (``sliders``).

Why: a slider drag must redraw at the speed of a hand; a matplotlib PNG per position costs
100+ ms in the kernel alone, and any round trip to the kernel 50-150 ms. The ES module
(``tapeviz/static/gradcheck_plots.js``) draws the four views as SVG, with the badge and the
worst entries, and coalesces updates to one per animation frame. The sliders are linked to
``point``, ``eps`` and ``range`` in the browser; positions the kernel checked ahead arrive
as custom messages (``{"frames": [[i, j, views]], "curves": {j: curve}}``), so the view draws
a slider's new position at once and the kernel's ``data`` for it after. matplotlib stays for
static figures and exports (``GradCheckWidget.png()``).
"""

from __future__ import annotations

import asyncio
import pathlib

import anywidget
import ipywidgets as W
import traitlets as t

from tapeviz.present.ahead import serialized

_STATIC = pathlib.Path(__file__).resolve().parents[2] / "static"  # tapeviz/static


class GradCheckPlots(anywidget.AnyWidget):
    """Four plots of a gradient check, drawn from ``data`` (see ``gradcheck_payload``)."""

    _esm = _STATIC / "gradcheck_plots.js"
    _css = _STATIC / "gradcheck_plots.css"

    data = t.Dict(help="the numbers of the four views (gradcheck_payload.payload)").tag(sync=True)
    point = t.Float(0.0, help="the x (offset) slider, linked in the browser").tag(sync=True)
    eps = t.Float(1e-6, help="the eps slider, linked in the browser").tag(sync=True)
    range = t.List(t.Float(), help="the range slider, linked in the browser").tag(sync=True)


class Coalescer:
    """Runs ``update(point=..., curve=...)`` once for a burst of slider positions.

    Positions that arrive while an update runs queue in the kernel; each only records what to
    recompute, and one update (scheduled with ``call_soon``, so it runs after the queued
    messages) draws the latest. A change made from Python (``w.eps.value = ...``) updates at
    once, so code that reads the widget next sees the new check.
    """

    def __init__(self, update):
        self.update, self.want, self.scheduled, self.coalesced = update, None, False, 0

    @serialized
    def request(self, slider, point: bool, curve: bool) -> None:
        if self.want is not None:
            self.coalesced += 1
        want = self.want or (False, False)
        self.want = (want[0] or point, want[1] or curve)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or "value" not in getattr(slider, "_property_lock", {}):
            self.flush()
        elif not self.scheduled:
            self.scheduled = True
            loop.call_soon(self.flush)

    @serialized
    def flush(self) -> None:
        self.scheduled = False
        if self.want is not None:
            (point, curve), self.want = self.want, None
            self.update(point=point, curve=curve)


_DESC = {"description_width": "60px"}


def _wide():
    return W.Layout(width="420px")


def sliders(one_d: bool, c: float, lo: float, hi: float, eps: float) -> tuple:
    """The x (offset) slider at ``c``, the eps slider and the range slider ``(lo, hi)``."""
    desc = "x" if one_d else "offset"
    point = W.FloatSlider(
        layout=_wide(),
        style=_DESC,
        value=c,
        min=min(lo, c),
        max=max(hi, c),
        step=0.01,
        description=desc,
        continuous_update=True,
        tooltip="moves the input point (offset: added to every entry)",
    )
    eps_slider = W.FloatLogSlider(
        layout=_wide(),
        style=_DESC,
        value=eps,
        base=10,
        min=-12,
        max=-1,
        step=0.25,
        description="eps",
        readout_format=".1e",
    )
    range_slider = W.FloatRangeSlider(
        layout=_wide(),
        style=_DESC,
        value=(lo, hi),
        min=lo - 5,
        max=hi + 5,
        step=0.1,
        description="range",
    )
    return point, eps_slider, range_slider
