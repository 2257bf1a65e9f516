"""``tv.MemoryInspector``: what each node of a tape saved for backward, and when it is freed.

Each tape gets a ``TapeMemoryPanel`` (``memory_panel.py``), whose live view is a
``MemoryView`` (drawn in the browser from data: a row click answers without the kernel); the
sort buttons are ipywidgets linked to it in the browser. ``table`` (an ipywidgets Select, not
displayed), ``select``, ``selected_row`` and the matplotlib charts (``chart_png``, the static
picture) are the same data seen from Python.
"""

from __future__ import annotations

import ipywidgets as W

from tapeviz.present.ahead import make_room

from ..common import error_html, figure_png, png_img_tag, static_bundle
from .panel import SORT_KEYS, TapeMemoryPanel
from .plots import compare_figure

__all__ = ["SORT_KEYS", "MemoryInspector", "TapeMemoryPanel"]


class MemoryInspector(W.VBox):
    """What each node saved for backward: a sortable table, totals, peak, charts.

    Args:
        tape: a ``tv.Tape``, or a list of tapes to compare side by side.
        labels: names for the compared tapes.
        graph: also draw the graph with the selected node highlighted.

    Example:
        >>> import tapeviz as tv
        >>> x = tv.tensor([0.5, -1.0])
        >>> with tv.Tape() as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(tv.tanh(x) * x)
        >>> insp = tv.MemoryInspector(tape)
        >>> insp.report.total_bytes == tape.saved_nbytes
        True
    """

    def __init__(self, tape, labels=None, graph: bool = True):
        make_room()  # other widgets' work ahead waits while this one is shown
        tapes = list(tape) if isinstance(tape, (list, tuple)) else [tape]
        self.labels = (
            list(labels)
            if labels is not None
            else ([f"tape {i + 1}" for i in range(len(tapes))] if len(tapes) > 1 else [""])
        )
        self.panels, self.compare_chart, self.error, self.tabs = [], None, None, None
        try:
            if len(self.labels) != len(tapes):
                raise ValueError(
                    f"MemoryInspector: {len(tapes)} tapes but {len(self.labels)} labels"
                )
            self.panels = [TapeMemoryPanel(t, lab, graph) for t, lab in zip(tapes, self.labels)]
        except Exception as e:
            self.error = e
            super().__init__([W.HTML(error_html("MemoryInspector could not read the tape", e))])
            return
        children = self.panels
        if len(self.panels) > 1:  # one tab per tape: each table and chart gets full width
            fig = compare_figure([p.report for p in self.panels], self.labels)
            self.compare_chart = W.Image(value=figure_png(fig), format="png")
            self.tabs = W.Tab(children=self.panels, titles=[str(x) for x in self.labels])
            hint = W.HTML("<i>one tab per tape: its table, bars and timeline</i>")
            children = [self.compare_chart, hint, self.tabs]
        super().__init__(children)

    @classmethod
    def compare(cls, *tapes, labels=None, graph: bool = True) -> MemoryInspector:
        """Two or more tapes side by side, e.g. save-inputs against save-outputs."""
        if len(tapes) == 1 and isinstance(tapes[0], (list, tuple)):
            tapes = tuple(tapes[0])
        return cls(list(tapes), labels=labels, graph=graph)

    # single-tape shortcuts
    def _panel(self) -> TapeMemoryPanel:
        if not self.panels:
            raise RuntimeError(f"MemoryInspector has no tape: {self.error}")
        return self.panels[0]

    report = property(lambda self: self._panel().report)
    table = property(lambda self: self._panel().table)
    sort_by = property(lambda self: self._panel().sort_by)
    descending = property(lambda self: self._panel().descending)
    rows = property(lambda self: self._panel().rows)
    selected_row = property(lambda self: self._panel().selected_row)
    highlight = property(lambda self: self._panel().highlight)

    def select(self, position: int) -> None:
        """Select a row of the (first) table, in display order."""
        self._panel().select(position)

    def static_html(self) -> str:
        if self.error is not None:
            return error_html("MemoryInspector could not read the tape", self.error)
        parts = [png_img_tag(self.compare_chart.value)] if self.compare_chart else []
        parts += [f"<div style='margin-top:8px'>{p.static_html()}</div>" for p in self.panels]
        return "<div>" + "".join(parts) + "</div>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return static_bundle(
            self, self.static_html(), f"MemoryInspector({len(self.panels)} tape(s))"
        )
