"""MemoryInspector on real tapes: figures equal the tape's, the table sorts and selects, the
timeline frees values at the right backward step, and two tapes compare side by side."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.widgets.memory.data import memory_report


def _mlp_tape(persistent=False, gradient=True):
    rng = np.random.default_rng(0)
    x = tv.tensor(rng.standard_normal((4, 3)).astype(np.float32), name="x")
    w = tv.variable(rng.standard_normal((3, 5)).astype(np.float32), name="w")
    with tv.Tape(persistent=persistent) as tape:
        tape.watch(x)
        h = tv.tanh(x @ w)  # tanh saves its output h ...
        y = tv.sum(h * h + tv.exp(h))  # ... and mul saves h twice: one stored value
    before = tape.saved_nbytes
    if gradient:
        tape.gradient(y, [x, w])
    return tape, before


class _Saves(tv.DifferentiableFunction):
    """tanh that keeps its input, its output or a memory value for backward."""

    def __init__(self, what):
        super().__init__(
            num_outputs=1,
            save_inputs_for_backward=what == "input",
            save_outputs_for_backward=what == "output",
            num_memory_values=1 if what == "memory" else 0,
        )
        self.what = what

    def forward(self, x):
        y = np.tanh(x)
        return (y, 1 - y * y) if self.what == "memory" else y

    def backward(self, dy, compute_gradients, saved):
        if self.what == "input":
            return (dy * (1 - np.tanh(saved) ** 2),)
        if self.what == "output":
            return (dy * (1 - saved**2),)
        return (dy * saved,)


def _saves_tape(what):
    x = tv.tensor(np.linspace(-1, 1, 64 * 32, dtype=np.float32).reshape(64, 32))
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.sum(tv.square(_Saves(what)(x)))  # square saves its input
    tape.gradient(y, x)
    return tape


def test_totals_equal_the_tapes_figures():
    tape, before = _mlp_tape(persistent=True, gradient=False)
    insp = tv.MemoryInspector(tape)
    assert insp.report.total_bytes == tape.saved_nbytes == before
    assert len(insp.rows) == sum(len(n.saved) for n in tape.nodes)
    shared = [r for r in insp.rows if r.shared]
    assert len(shared) == 2  # mul's a and b are tanh's saved output
    assert sum(r.nbytes for r in insp.rows if not r.shared) == before
    x_b, w_b, h_b = 4 * 3 * 4, 3 * 5 * 4, 4 * 5 * 4  # float32 x (4, 3), w (3, 5), h (4, 5)
    ids = {n.kernel: n.id for n in tape.nodes}
    assert insp.report.by_node == {  # each value counted once, at the node that stores it
        ids["BatchMatMul"]: ("BatchMatMul", x_b + w_b),
        ids["Tanh"]: ("Tanh", h_b),
        ids["Exp"]: ("Exp", h_b),  # Mul's a and b are Tanh's h: nothing new
    }
    assert insp.report.peak_bytes == before  # everything is held when backward starts


def test_released_tape_keeps_figures_and_values():
    tape, before = _mlp_tape(persistent=False)
    assert tape.saved_nbytes == 0  # released by gradient()
    insp = tv.MemoryInspector(tape)
    assert insp.report.total_bytes == before
    assert len(insp.rows) == 6 and all(r.released for r in insp.rows)  # 2 + 1 + 2 + 1 saved
    insp.select(0)
    assert insp.selected_row.value() is not None  # reachable through the node's inputs
    assert "mean" in insp.panels[0].detail.value


def test_timeline_frees_values_after_their_last_backward_step():
    tape, before = _mlp_tape()
    report = memory_report(tape)
    fwd = [p for p in report.timeline if p[0] == "forward"]
    bwd = [p for p in report.timeline if p[0] == "backward"]
    assert [p[1] for p in fwd] == [n.id for n in tape.nodes]
    assert [p[1] for p in bwd] == [s.node_id for s in tape.backward_steps]
    held = [p[3] for p in fwd]
    assert held == sorted(held) and held[-1] == before
    assert bwd[-1][3] == 0
    by_label = {p[2]: p for p in bwd}
    h_bytes = 4 * 5 * 4
    # h is saved by Tanh (output) and by Mul (a, b): Mul's step frees nothing ...
    assert by_label["Mul"][4] == []
    # ... and Tanh's step frees h, after which only the matmul's inputs are held
    assert len(by_label["Tanh"][4]) == 1
    assert by_label["Tanh"][3] == before - h_bytes - 4 * 5 * 4  # h and exp's output gone
    assert report.backward_known


def test_before_gradient_the_backward_order_is_estimated():
    tape, before = _mlp_tape(persistent=True, gradient=False)
    report = memory_report(tape)
    assert not report.backward_known
    assert report.timeline[-1][3] == 0
    assert "estimated" in tv.MemoryInspector(tape).panels[0].summary.value


def test_table_sorts_by_any_column():
    tape, _ = _mlp_tape()
    insp = tv.MemoryInspector(tape)
    assert [r.node_id for r in insp.rows] == sorted(r.node_id for r in insp.rows)
    insp.sort_by.value = "bytes"
    insp.descending.value = True
    sizes = [r.nbytes for r in insp.rows]
    assert sizes == sorted(sizes, reverse=True)
    insp.sort_by.value = "kernel"
    insp.descending.value = False
    kernels = [r.kernel for r in insp.rows]
    assert kernels == sorted(kernels)
    assert insp.table.options[0][0].split()[1] == kernels[0]  # the visible text follows


def test_selecting_a_row_shows_the_value_and_highlights_the_node():
    tape, _ = _mlp_tape(persistent=True)
    insp = tv.MemoryInspector(tape)
    panel = insp.panels[0]
    chart_before = panel.chart_png()
    insp.sort_by.value = "role"
    position = next(i for i, r in enumerate(insp.rows) if r.role == "output")
    insp.select(position)
    row = insp.selected_row
    assert row.role == "output"
    assert insp.highlight == {row.node_id: "selected"}
    node = tape.node(row.node_id)
    np.testing.assert_array_equal(row.value(), node.outputs[0].numpy())
    assert "std" in panel.detail.value and panel.histogram_png()[:4] == b"\x89PNG"
    assert panel.chart_png() != chart_before  # the selected bar is outlined
    assert "<svg" in panel.graph_html() and "selected" in panel.graph_html()
    assert panel.view.selected == insp.table.value  # the browser's view follows


def test_the_view_holds_every_row_and_python_follows_its_clicks():
    tape, _ = _mlp_tape(persistent=True)
    insp = tv.MemoryInspector(tape)
    panel, view = insp.panels[0], insp.panels[0].view
    assert view in panel.children and insp.table not in panel.children
    assert len(view.rows) == len(view.details) == len(insp.report.rows)
    i = next(k for k, r in enumerate(insp.report.rows) if r.role == "output")
    row = insp.report.rows[i]
    assert view.rows[i]["cells"][0] == f"{row.node_id}: {row.label}"
    assert "std" in view.details[i]["html"] and sum(view.details[i]["hist"]["counts"]) == 20
    assert sum(b["input"] + b["output"] + b["memory"] for b in view.bars) == insp.report.total_bytes
    frees = view.timeline["frees"][str(row.node_id)]
    assert view.timeline["held"][frees[0]] < view.timeline["held"][frees[0] - 1]  # it frees
    view.selected = i  # a click in the browser
    assert insp.selected_row is row and insp.highlight == {row.node_id: "selected"}
    assert "<svg" in view.graph_svg and "selected" not in view.graph_svg  # highlighted there
    links = sorted((k.source[1], k.target[1]) for k in panel._links)
    assert links == [("index", "sort_index"), ("value", "descending")]


def test_compare_save_inputs_outputs_and_memory():
    tapes = [_saves_tape(w) for w in ("input", "output", "memory")]
    insp = tv.MemoryInspector.compare(*tapes, labels=["inputs", "outputs", "memory"])
    totals = [p.report.total_bytes for p in insp.panels]
    big = 64 * 32 * 4
    # saving the output shares the buffer with square's saved input: stored once
    assert totals == [2 * big, big, 2 * big]
    assert insp.panels[2].report.by_role["memory"] == big
    assert insp.compare_chart.value[:4] == b"\x89PNG"
    same = tv.MemoryInspector(tapes, labels=["a", "b", "c"])
    assert [p.report.total_bytes for p in same.panels] == totals


def test_wrong_input_shows_an_error_box():
    insp = tv.MemoryInspector("not a tape")
    assert isinstance(insp.error, TypeError) and "got str" in str(insp.error)
    assert "role='alert'" in insp.children[0].value and "Tape" in insp.children[0].value
    tape, _ = _mlp_tape()
    bad = tv.MemoryInspector([tape, tape], labels=["only one"])
    assert "2 tapes but 1 labels" in bad.children[0].value
    with pytest.raises(RuntimeError, match="no tape"):
        bad.select(0)


def test_static_mimebundle_has_a_picture():
    tape, _ = _mlp_tape()
    bundle = tv.MemoryInspector(tape)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "data:image/png;base64," in bundle["text/html"]
    assert "Tanh" in bundle["text/html"]


def test_compare_puts_each_tape_in_its_own_full_width_tab():
    import ipywidgets as W

    tapes = [_saves_tape(w) for w in ("input", "output")]
    insp = tv.MemoryInspector.compare(*tapes, labels=["inputs", "outputs"])
    assert isinstance(insp.tabs, W.Tab) and list(insp.tabs.children) == insp.panels
    assert list(insp.tabs.titles) == ["inputs", "outputs"]
    assert tv.MemoryInspector(tapes[0]).tabs is None  # one tape: no tabs


def test_table_header_lines_up_with_the_rows_and_cuts_show_an_ellipsis():
    from tapeviz.widgets.memory.panel import _HEADER, _row_text

    panel = tv.MemoryInspector(_saves_tape("input")).panels[0]
    row = next(r for r in panel.report.rows if r.kernel == "DifferentiableFunction")
    text = _row_text(row)
    for col in ("kernel", "role", "name", "shape", "dtype"):
        start = _HEADER.index(col)
        assert text[start - 1] == " " and text[start] != " ", (col, _HEADER, text)
    assert "DifferentiA"[:10] in text and "\u2026" in text  # "Differenti…": cut, and says so


def test_bars_carry_their_bytes_and_axes_read_in_byte_units():
    from tapeviz.widgets.common import new_figure
    from tapeviz.widgets.memory.plots import draw_bars, draw_timeline

    report = tv.MemoryInspector(_saves_tape("input")).report
    ax1, ax2 = new_figure(6, 4).subplots(2, 1)
    draw_bars(ax1, report)
    draw_timeline(ax2, report)
    assert [t.get_text() for t in ax1.texts] == ["8.0 KiB", "8.0 KiB"]
    ax1.figure.canvas.draw()
    ticks = [t.get_text() for t in ax2.get_yticklabels() if t.get_text()]
    assert "16.0 KiB" in ticks and all(t.endswith(("B", "KiB")) for t in ticks)


def test_the_views_sort_is_pythons(tmp_path):
    """memory_view.js sorts the rows in the browser: the same order as SORT_KEYS (run in
    node, when there is one)."""
    import json
    import re
    import shutil
    import subprocess
    from pathlib import Path

    from tapeviz.widgets.memory.widget import SORT_KEYS

    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node to run tapeviz/static/memory_view.js's sort")
    js = (Path(tv.__file__).parent / "static" / "memory_view.js").read_text()
    code = re.search(r"// Python's tuple order.*?\nconst COLUMNS", js, re.S).group(0)
    tapes = [_mlp_tape(persistent=True)[0]] + [_saves_tape(w) for w in ("input", "memory")]
    for tape in tapes:
        insp = tv.MemoryInspector(tape)
        rows = insp.panels[0].view.rows
        script = code.replace("\nconst COLUMNS", "\n") + (
            f"const rows = {json.dumps(rows)};\nconst out = {{}};\n"
            "for (const [k, key] of Object.entries(SORT)) for (const sign of [1, -1])"
            " out[k + sign] = rows.map((_, i) => i).sort((a, b) =>"
            " sign * cmp(key(rows[a]), key(rows[b])));\n"
            "console.log(JSON.stringify(out));"
        )
        (tmp_path / "sort.js").write_text(script)
        got = json.loads(subprocess.run([node, tmp_path / "sort.js"], capture_output=True,
                                        text=True, check=True).stdout)  # fmt: skip
        for key in SORT_KEYS:
            for desc in (False, True):
                insp.sort_by.value, insp.descending.value = key, desc
                want = [i for _, i in insp.table.options]
                assert got[key + ("-1" if desc else "1")] == want, (key, desc)
