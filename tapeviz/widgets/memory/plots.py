"""Matplotlib pictures for the memory inspector: bytes per node, bytes over time, comparisons."""

from __future__ import annotations

import numpy as np

from ...present.palette import GREY, OKABE_ITO, ROLE_COLOURS, SERIES
from ...present.units import fmt_bytes
from ..common import new_figure

ROLE_HATCH = {"input": "", "output": "//", "memory": ".."}
ROLES = ("input", "output", "memory")
COMPARE_COLOURS = SERIES
LINE_STYLES = ("-", "--", ":", "-.")


def bytes_axis(axis, top: float):
    """Ticks at round multiples of B / KiB / MiB up to ``top``, labelled '16.0 KiB'."""
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    unit = 1024 ** max(0, int(np.log(max(top, 1.0)) / np.log(1024)))
    steps = (0.25, 0.5, 1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)
    step = next((s for s in steps if top / unit / s <= 6), 1000)
    if unit == 1:
        step = max(step, 1)
    axis.set_major_locator(MultipleLocator(step * unit))
    axis.set_major_formatter(FuncFormatter(lambda v, _: fmt_bytes(v) if v >= 0 else ""))


def _tick_labels(ax, x, labels, fontsize=7):
    """Horizontal labels when they fit, slanted when there are many or they are long."""
    long = len(labels) * max((len(t) for t in labels), default=0) > 48
    if long:
        ax.set_xticks(x, labels, rotation=30, ha="right", rotation_mode="anchor", fontsize=fontsize)
    else:
        ax.set_xticks(x, labels, fontsize=fontsize)


def per_node_roles(report):
    """``{node id: {"label": label, role: bytes}}`` of the saved values; a value saved again
    by another node (``shared``) is counted once."""
    nodes = {}
    for r in report.rows:
        if not r.shared:
            d = nodes.setdefault(r.node_id, {"label": r.label, **{k: 0 for k in ROLES}})
            d[r.role] = d.get(r.role, 0) + r.nbytes
    return nodes


def _stacked(ax, x, heights_by_role, width=0.6):
    """Bars stacked by role, one colour and one hatch per role (colour never alone)."""
    bottom = np.zeros(len(x))
    for role in ROLES:
        h = np.asarray(heights_by_role[role], dtype=float)
        if h.any():
            style = {"color": ROLE_COLOURS[role], "hatch": ROLE_HATCH[role]}
            ax.bar(x, h, bottom=bottom, edgecolor="white", label=role, width=width, **style)
        bottom += h
    return bottom


def draw_bars(ax, report, selected_node=None):
    """Stacked bars of saved bytes per node (shared values counted once)."""
    nodes = per_node_roles(report)
    ids = list(nodes)
    x = np.arange(len(ids))
    bottom = _stacked(ax, x, {role: [nodes[i][role] for i in ids] for role in ROLES})
    if selected_node in nodes:
        k = ids.index(selected_node)
        ax.bar([k], [bottom[k]], width=0.6, fill=False, edgecolor="black", linewidth=2.5,
               label="selected")  # fmt: skip
    _tick_labels(ax, x, [f"{i}:{nodes[i]['label']}" for i in ids])
    if 0 < len(ids) <= 16:  # numbers where they help: each bar's bytes on top
        for k, b in enumerate(bottom):
            ax.text(k, b, fmt_bytes(b), ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, max(bottom.max(), 1) * 1.18)
    bytes_axis(ax.yaxis, ax.get_ylim()[1])
    ax.set_ylabel("saved bytes", fontsize=8)
    ax.set_title("saved for backward, per node (shared values once)", fontsize=9)
    ax.tick_params(axis="y", labelsize=7)
    if ids:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    else:
        ax.text(0.5, 0.5, "nothing saved", ha="center", va="center", transform=ax.transAxes)


def draw_timeline(ax, report, selected_node=None):
    """Held saved bytes after each forward node and after each backward step."""
    tl = report.timeline
    y = np.array([0] + [p[3] for p in tl], dtype=float)
    ax.step(np.arange(len(tl) + 1), y, where="post", color=OKABE_ITO["blue"], linewidth=2,
            label="held")  # fmt: skip
    n_fwd = sum(1 for p in tl if p[0] == "forward")
    top = max(y.max(), 1)
    ax.axvspan(0, n_fwd, color=OKABE_ITO["yellow"], alpha=0.15)
    ax.axvline(n_fwd, color=GREY["mid"], linestyle="--", linewidth=1)
    ax.text(0.3, top * 1.1, "forward", ha="left", va="top", fontsize=8)
    word = "backward" if report.backward_known else "backward (estimated order)"
    ax.text(n_fwd + 0.3, top * 1.1, word, ha="left", va="top", fontsize=8)
    k = int(np.argmax(y))
    ax.plot([k], [y[k]], marker="v", color=OKABE_ITO["vermillion"], linestyle="none",
            label=f"peak {fmt_bytes(y[k])}")  # fmt: skip
    _mark_freed(ax, report, selected_node)
    if len(tl) <= 40:
        names = [f"{'F' if p[0] == 'forward' else 'B'}{'' if p[1] is None else p[1]}" for p in tl]
        ax.set_xticks(np.arange(1, len(tl) + 1), names, fontsize=6, rotation=90)
    ax.set_ylim(0, top * 1.15)
    bytes_axis(ax.yaxis, top * 1.15)
    ax.set_ylabel("saved bytes held", fontsize=8)
    ax.set_xlabel("after node (F = forward, B = backward step)", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _mark_freed(ax, report, node_id):
    """A dotted line at the backward step of ``node_id``, saying what it frees."""
    if node_id is None:
        return
    size = {r.key: r.nbytes for r in report.rows}
    for i, p in enumerate(report.timeline):
        if p[0] == "backward" and p[1] == node_id:
            freed = fmt_bytes(sum(size[k] for k in p[4]))
            ax.axvline(i + 1, color="black", linewidth=1.5, linestyle=":",
                       label=f"node {node_id} done: frees {freed}")  # fmt: skip


def single_figure(report, selected_node=None):
    """Bars per node above the timeline, for one tape."""
    fig = new_figure(7.5, 5.2, layout=None)  # fixed margins: redrawn on every selection
    ax1, ax2 = fig.subplots(2, 1)
    fig.subplots_adjust(left=0.12, right=0.76, top=0.95, bottom=0.1, hspace=0.62)
    draw_bars(ax1, report, selected_node)
    draw_timeline(ax2, report, selected_node)
    ax2.set_title("saved bytes held; freed after the last backward step using them", fontsize=9)
    return fig


def compare_figure(reports, labels):
    """Totals by role side by side, and the timelines overlaid (each pass scaled to 0..1)."""
    fig = new_figure(8.5, 3.6)
    ax1, ax2 = fig.subplots(1, 2, width_ratios=(1, 1.6))
    _compare_totals(ax1, reports, labels)
    for i, (r, lab) in enumerate(zip(reports, labels)):
        xs, ys = _scaled_timeline(r)
        ax2.step(xs, ys, where="post", color=COMPARE_COLOURS[i % 6],
                 linestyle=LINE_STYLES[i % 4], linewidth=2, label=lab)  # fmt: skip
    ax2.axvline(1.0, color=GREY["mid"], linestyle="--", linewidth=1)
    ticks = ["start", "forward", "loss", "backward", "end"]
    ax2.set_xticks([0, 0.5, 1, 1.5, 2], ticks, fontsize=7)
    ax2.set_ylabel("saved bytes held", fontsize=8)
    ax2.set_ylim(0, max(max(_scaled_timeline(r)[1]) for r in reports) * 1.12 or 1)
    bytes_axis(ax2.yaxis, ax2.get_ylim()[1])
    ax2.set_title("saved bytes over time", fontsize=9)
    ax2.legend(fontsize=7)
    ax2.tick_params(axis="y", labelsize=7)
    return fig


def _compare_totals(ax, reports, labels):
    x = np.arange(len(reports))
    heights = {role: [r.by_role.get(role, 0) for r in reports] for role in ROLES}
    bottom = _stacked(ax, x, heights)
    for i, (r, b) in enumerate(zip(reports, bottom)):
        text = f"{fmt_bytes(r.total_bytes)}\npeak {fmt_bytes(r.peak_bytes)}"
        ax.text(i, b, text, ha="center", va="bottom", fontsize=7)
    _tick_labels(ax, x, list(labels), fontsize=8)
    ax.set_ylim(0, max(bottom.max(), 1) * 1.55)
    bytes_axis(ax.yaxis, ax.get_ylim()[1])
    ax.set_title("saved bytes by role", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", ncols=3)
    ax.tick_params(axis="y", labelsize=7)


def _scaled_timeline(report):
    tl = report.timeline
    fwd = [p for p in tl if p[0] == "forward"]
    bwd = [p for p in tl if p[0] != "forward"]
    xs = [0.0] + [(i + 1) / max(len(fwd), 1) for i in range(len(fwd))]
    xs += [1.0 + (i + 1) / max(len(bwd), 1) for i in range(len(bwd))]
    ys = [0] + [p[3] for p in fwd] + [p[3] for p in bwd]
    return xs, ys
