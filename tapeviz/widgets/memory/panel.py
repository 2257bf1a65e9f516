"""One tape's memory panel: totals, a sortable table, charts and the selected value."""

from __future__ import annotations

import ipywidgets as W

from tapeviz.present.ahead import serialized

from ...present.text import html_text
from ...present.units import fmt_bytes
from ..common import error_html, figure_png, fmt_shape, histogram_png, png_img_tag, stats_html
from ..highlight import HighlightGraph
from .data import memory_report
from .plots import single_figure
from .view import MemoryView, bars_data, detail_data, row_data, timeline_data

SORT_KEYS = {
    "node": lambda r: (r.node_id, r.role, r.name),
    "kernel": lambda r: (r.kernel, r.node_id),
    "role": lambda r: (r.role, r.node_id),
    "shape": lambda r: (len(r.shape or ()), r.shape or (), r.node_id),
    "dtype": lambda r: (r.dtype, r.node_id),
    "bytes": lambda r: (r.nbytes, -r.node_id),
}
_HEADER = f"{'node':<18} {'kernel':<12} {'role':<7} {'name':<6} {'shape':<14} {'dtype':<8} bytes"


def _cut(text: str, width: int) -> str:
    """``text`` padded to ``width``; a longer one ends in an ellipsis, so a cut shows."""
    text = str(text)
    return f"{text:<{width}}" if len(text) <= width else text[: width - 1] + "\u2026"


def _row_text(r) -> str:
    extra = " (shared)" if r.shared else ""
    extra += " (released)" if r.released else ""
    return (
        f"{_cut(f'{r.node_id}: {r.label}', 18)} {_cut(r.kernel, 12)} {r.role:<7} "
        f"{_cut(r.name, 6)} {_cut(fmt_shape(r.shape), 14)} {_cut(r.dtype, 8)} "
        f"{fmt_bytes(r.nbytes):>9}{extra}"
    )


class TapeMemoryPanel(W.VBox):
    """The inspector for one tape: totals, a sortable table, charts, the selected value."""

    def __init__(self, tape, title: str = "", graph: bool = True):
        self.tape = tape
        self.report = memory_report(tape)
        self.title = title
        self.highlight: dict = {}
        self._shown, self._sorting, self._pngs = None, False, {}
        self.summary = W.HTML(self._summary_html())
        self.sort_by = W.ToggleButtons(options=list(SORT_KEYS), value="node",
                                       description="sort by", style={"button_width": "64px"})  # fmt: skip
        self.descending = W.ToggleButton(value=False, description="descending", icon="sort")
        rows = min(12, max(3, len(self.report.rows)))
        self.table = W.Select(options=[], rows=rows, layout=W.Layout(width="100%"))
        self.detail = W.HTML("<i>select a row to see the saved value</i>")
        self._graph = HighlightGraph(tape) if graph else None
        self.view = MemoryView(
            rows=[row_data(r) for r in self.report.rows],
            details=[detail_data(r) for r in self.report.rows],
            bars=bars_data(self.report),
            timeline=timeline_data(self.report),
            sort_keys=list(SORT_KEYS),
            **self._graph_picture(),
        )
        # the sort buttons sort the view in the browser; Python sorts `table` for itself
        self._links = [
            W.jslink((self.sort_by, "index"), (self.view, "sort_index")),
            W.jslink((self.descending, "value"), (self.view, "descending")),
        ]
        self.sort_by.observe(self._resort, "value")
        self.descending.observe(self._resort, "value")
        self.table.observe(self._on_select, "value")
        self.view.observe(self._on_view_select, "selected")
        self._resort()
        sort_row = W.HBox([self.sort_by, self.descending])
        super().__init__([self.summary, sort_row, self.view])

    def _graph_picture(self) -> dict:
        """The graph for the view, drawn once (the view highlights the selected node)."""
        if self._graph is None:
            return {}
        if self._graph._data is not None:
            try:
                from tapeviz.graph import render_svg

                # the table and charts say what was saved: the graph only shows where, so it
                # leaves out values, saved boxes and the key, to fit the width of its box
                svg = render_svg(
                    self._graph._data,
                    show_values=False,
                    show_saved=False,
                    legend=False,
                    rankdir="TB",
                )
                return {"graph_svg": svg}
            except Exception as e:
                return {"graph_html": error_html("graph could not be drawn", e)}
        return {"graph_html": self._graph.html({})}

    # --- state -------------------------------------------------------------------------
    @property
    def rows(self) -> list:
        """The table's rows in display order."""
        return [self.report.rows[i] for _, i in self.table.options]

    @property
    def selected_row(self):
        v = self.table.value
        return None if v is None else self.report.rows[v]

    def select(self, position: int) -> None:
        """Select the table row at ``position`` (display order)."""
        self.table.value = self.table.options[position][1]

    # --- rendering ---------------------------------------------------------------------
    def _summary_html(self) -> str:
        r = self.report
        roles = ", ".join(f"{k} {fmt_bytes(v)}" for k, v in r.by_role.items() if v)
        shared = sum(1 for row in r.rows if row.shared)
        phase, nid, label = r.peak_at
        where = f"after {phase} {'step' if phase == 'backward' else 'node'} {nid} ({label})"
        title = f"<b>{html_text(self.title)}</b> &middot; " if self.title else ""
        return (
            f"<div style='font-family:sans-serif'>{title}<b>{len(r.rows)}</b> saved values "
            f"&middot; total <b>{fmt_bytes(r.total_bytes)}</b> ({roles or 'none'}) &middot; "
            f"peak <b>{fmt_bytes(r.peak_bytes)}</b> {html_text(where)}"
            + (f" &middot; {shared} shared (counted once)" if shared else "")
            + (
                ""
                if r.backward_known
                else " &middot; <i>gradient() not run: backward order estimated</i>"
            )
            + "</div>"
        )

    @serialized
    def _resort(self, change=None) -> None:
        key = SORT_KEYS[self.sort_by.value]
        order = sorted(
            range(len(self.report.rows)),
            key=lambda i: key(self.report.rows[i]),
            reverse=self.descending.value,
        )
        keep, self._sorting = self.table.value, True
        try:
            self.table.options = [(_row_text(self.report.rows[i]), i) for i in order]
            self.table.value = keep
        finally:
            self._sorting = False

    @serialized
    def _on_view_select(self, change) -> None:
        """A row clicked in the view (which shows it already): Python follows."""
        i = change["new"]
        if i is not None and 0 <= i < len(self.report.rows) and self.table.value != i:
            self.table.value = i

    @serialized
    def _on_select(self, change) -> None:
        row = self.selected_row
        if self._sorting or row is None or row is self._shown:  # re-sorting: no redraw
            return
        self._shown = row
        self.highlight = {row.node_id: "selected"}
        self.view.selected = self.table.value  # from Python: the view follows
        value = row.value()
        head = (
            f"<b>node {row.node_id}: {html_text(row.label)}</b> saved {row.role} "
            f"<code>{html_text(row.name)}</code> ({fmt_bytes(row.nbytes)})<br/>"
        )
        if value is None:
            self.detail.value = head + "<i>value released and no longer reachable</i>"
        else:
            self.detail.value = head + stats_html(value)

    # --- pictures, drawn when asked for (static HTML, exports) ----------------------------
    def chart_png(self) -> bytes:
        """Bars per node above the timeline (matplotlib), the selected node outlined."""
        row = self.selected_row
        node = row.node_id if row else None
        if node not in self._pngs:
            self._pngs[node] = figure_png(single_figure(self.report, node))
        return self._pngs[node]

    def histogram_png(self) -> bytes | None:
        """The selected value's histogram (matplotlib), None without a selected value."""
        row = self.selected_row
        value = row.value() if row else None
        return None if value is None else histogram_png(value, f"{row.role} {row.name}")

    def graph_html(self) -> str:
        """The graph with the selected node highlighted, drawn by Graphviz."""
        return self._graph.html(self.highlight) if self._graph is not None else ""

    def static_html(self) -> str:
        rows = "".join(
            f"<tr><td><pre style='margin:0'>{html_text(_row_text(r))}</pre></td></tr>"
            for r in self.rows
        )
        return (
            self._summary_html() + f"<pre style='margin:0'>{_HEADER}</pre><table>{rows}"
            f"</table>{png_img_tag(self.chart_png(), 'saved bytes per node and over time')}"
        )
