"""The four views of a gradient check, drawn on matplotlib axes."""

from __future__ import annotations

import numpy as np

from ...present.palette import GREY
from ...present.palette import OKABE_ITO as C
from ..common import new_figure

PASS_STYLE = {"marker": "o", "color": C["blue"], "label": "within tolerance"}
FAIL_STYLE = {"marker": "X", "color": C["vermillion"], "label": "outside tolerance"}


def legend_below(ax, ncol: int = 2):
    """The legend under the axes (below the x label), never over the data it explains."""
    return ax.legend(
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=ncol,
        frameon=False,
        handlelength=1.8,
        columnspacing=1.0,
        borderaxespad=0.0,
    )


def fit_text(slope: float) -> str:
    """``'fit 1.9'``, or ``'no fit'`` when too few points were usable (a NaN slope)."""
    return f"fit {round(float(slope), 1) + 0.0:.1f}" if np.isfinite(slope) else "no fit"


def _plain_log_labels(axis):
    """'1e-06' tick labels: mathtext labels cost ~0.3 s per redraw, too slow for a slider."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}".replace("e-0", "e-")))
    axis.set_minor_formatter(NullFormatter())


def draw_scatter(ax, check):
    """Analytic against numerical entries, the y = x line and the tolerance band."""
    a, n, ok = check.analytic.reshape(-1), check.numerical.reshape(-1), check.passed_mask
    ok = ok.reshape(-1)
    lo = float(min(a.min(initial=0), n.min(initial=0)))
    hi = float(max(a.max(initial=0), n.max(initial=0)))
    pad = (hi - lo) * 0.08 or 1.0
    line = np.linspace(lo - pad, hi + pad, 50)
    band = check.atol + check.rtol * np.abs(line)
    ax.fill_between(
        line, line - band, line + band, color=C["bluish_green"], alpha=0.25, label="tolerance band"
    )
    ax.plot(line, line, color=C["black"], linewidth=1, linestyle="--", label="y = x")
    for mask, style in ((ok, PASS_STYLE), (~ok, FAIL_STYLE)):
        if mask.any():
            ax.scatter(n[mask], a[mask], s=22, linewidths=0.5, edgecolors="white", **style)
    ax.set_xlabel("numerical (central difference)", fontsize=8)
    ax.set_ylabel("custom (reverse mode)", fontsize=8)
    ax.set_title("custom vs numerical, per entry", fontsize=9)
    legend_below(ax)


def draw_errors(ax, check):
    """Per-element absolute error: a heatmap for matrices, bars for vectors and scalars."""
    err = check.abs_err
    tol = check.atol + check.rtol * np.abs(check.numerical)
    if err.ndim >= 2:
        m = err.reshape(err.shape[0], -1)
        bad = (~check.passed_mask).reshape(m.shape)
        im = ax.imshow(np.log10(np.maximum(m, 1e-17)), cmap="viridis", aspect="auto")
        cax = getattr(ax, "_tv_cax", None)
        if cax is None:  # one colorbar axes, made once and reused on every redraw
            cax = ax._tv_cax = ax.inset_axes([1.04, 0.0, 0.05, 1.0])
        cax.clear()
        cbar = ax.figure.colorbar(im, cax=cax)
        cbar.set_label("log10 error", fontsize=7, labelpad=1)
        cbar.ax.tick_params(labelsize=6)
        ys, xs = np.nonzero(bad)
        ax.scatter(xs, ys, marker="x", color=C["vermillion"], s=30, label="outside tolerance")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("column", fontsize=8)
        ax.set_ylabel("row", fontsize=8)
        if bad.any():
            legend_below(ax)
    else:
        _error_bars(ax, check, err.reshape(-1), tol.reshape(-1))
    ax.set_title("error per element", fontsize=9)


def _error_bars(ax, check, e, t):
    """Bars on a log scale (tiny errors stay visible), the tolerance as a dashed step."""
    x = np.arange(e.size)
    ok = check.passed_mask.reshape(-1)
    floor = max(min(e[e > 0].min(initial=1.0), t.min()) / 20, 1e-18)
    shown = np.maximum(e, floor)
    if ok.any():
        ax.bar(x[ok], shown[ok] - floor, bottom=floor, color=C["blue"], label="within tolerance")
    if (~ok).any():
        ax.bar(
            x[~ok],
            shown[~ok] - floor,
            bottom=floor,
            color=C["vermillion"],
            hatch="xx",
            label="outside tolerance",
        )
    ax.step(
        np.r_[x - 0.5, x[-1:] + 0.5],
        np.r_[t, t[-1:]],
        where="post",
        color=C["black"],
        linestyle="--",
        linewidth=1,
        label="tolerance",
    )
    ax.set_yscale("log")
    ax.set_ylim(floor, max(shown.max(), t.max()) * 60)
    _plain_log_labels(ax.yaxis)
    ax.set_xticks(x if x.size <= 20 else x[:: max(1, x.size // 10)])
    _label_bars(ax, x, e, floor)
    ax.set_xlabel("element", fontsize=8)
    ax.set_ylabel("|custom - numerical|", fontsize=8)
    legend_below(ax)


def _label_bars(ax, x, e, floor):
    """Each bar's value when there are few; otherwise only the worst (labels never collide)."""
    picks = x if x.size <= 4 else [int(np.argmax(e))]
    for i in picks:
        ax.text(
            i,
            max(e[i], floor) * 1.6,
            f"{e[i]:.1e}",
            ha="center",
            va="bottom",
            fontsize=7,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
        )


def draw_sweep(ax, sweep, eps_now):
    """Error against eps on log-log axes, slope-2 truncation and slope -1 rounding lines; for
    a wrong gradient (a flat error: ``sweep.wrong``) only the error and what it means, as the
    widget says it: no best eps, no rounding region, no reference slopes to read."""
    eps, e = sweep.eps, np.maximum(sweep.error, 1e-18)
    lo, hi = max(e.min() / 10, 1e-18), max(e.max() * 10, 1e-12)
    wrong = getattr(sweep, "wrong", False)
    if sweep.best_eps > eps[0] * 10 and not wrong:  # a rounding region over a decade: mark it
        ax.axvspan(eps[0], sweep.best_eps, color=C["reddish_purple"], alpha=0.08)
        ax.text(eps[0], lo * 2, " rounding rise", fontsize=7, color=C["reddish_purple"])
    ax.loglog(eps, e, marker="o", markersize=3, color=C["blue"], label="|error|")
    if not wrong:
        trunc = f"slope 2 ({fit_text(sweep.slope_truncation)})"
        ax.loglog(eps, sweep.truncation_line, color=C["orange"], linestyle="--", label=trunc)
        rounding = f"slope -1 ({fit_text(sweep.slope_rounding)})"
        ax.loglog(eps, sweep.rounding_line, color=C["reddish_purple"], linestyle=":",
                  label=rounding)  # fmt: skip
    ax.axvline(eps_now, color=C["black"], linewidth=1, label=f"eps = {eps_now:.1e}")
    if wrong:  # the lowest point of a flat error is no step to use
        ax.text(0.5, 0.95, "flat, not falling as eps²:\nno eps fixes it, the gradient is wrong",
                transform=ax.transAxes, ha="center", va="top", fontsize=7,
                color=C["vermillion"], bbox={"fc": "white", "ec": "none", "alpha": 0.85})  # fmt: skip
    else:
        k = int(np.argmin(e))
        best = {"marker": "*", "markersize": 10, "color": C["bluish_green"], "linestyle": "none"}
        ax.plot([eps[k]], [e[k]], label=f"best eps {eps[k]:.0e}", **best)
    ax.set_ylim(lo, hi)
    _plain_log_labels(ax.xaxis)
    _plain_log_labels(ax.yaxis)
    ax.set_xlabel("eps", fontsize=8)
    ax.set_ylabel("|custom - numerical| (projection)", fontsize=8)
    ax.set_title("epsilon sweep" + (": the gradient is wrong" if wrong else ""), fontsize=9)
    legend_below(ax)


def draw_message(ax, text):
    """An empty panel that says why there is nothing to draw."""
    import textwrap

    ax.set_axis_off()
    ax.text(
        0.5,
        0.5,
        textwrap.fill(text, 40),
        ha="center",
        va="center",
        fontsize=8,
        color=C["vermillion"],
        transform=ax.transAxes,
    )


def draw_curve(ax, curve, x_now):
    """f, the custom derivative and the numerical derivative over a range."""
    xs, fx, custom, numeric = curve
    ax.plot(xs, fx, color=C["black"], linewidth=1.5, label="f(x)")
    ax.plot(xs, custom, color=C["blue"], linewidth=2.5, label="custom f'(x)")
    ax.plot(xs, numeric, color=C["orange"], linestyle="--", linewidth=1.8, label="numerical f'(x)")
    ax.axvline(x_now, color=GREY["mid"], linestyle=":", linewidth=1.2, label=f"x = {x_now:.3g}")
    ax.set_xlabel("x", fontsize=8)
    ax.set_title("f and its derivatives", fontsize=9)
    legend_below(ax)


def reset_axes(ax):
    """Remove what the last redraw drew but keep the axes, ticks and labels (faster than
    making a new figure: a redraw while a slider is dragged builds no new axes)."""
    for container in list(ax.containers):  # bars: their patches and the legend entry
        container.remove()
    for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.texts, *ax.images]:
        artist.remove()
    if ax.legend_ is not None:
        ax.legend_.remove()
    ax.set_axis_on()
    ax.ignore_existing_data_limits = True
    ax.autoscale(True)


def tidy_axes(fig):
    for ax in fig.axes:
        ax.tick_params(labelsize=7)


def check_figure(w):
    """The four views of a ``GradCheckWidget``'s latest check as a new matplotlib Figure."""
    # legends sit under each plot (legend_below), so leave room beneath the axes
    fig = new_figure(9.0 if w.one_d else 9.6, 7.4 if w.one_d else 3.9, layout=None)
    if w.one_d:
        axes = fig.subplots(2, 2).reshape(-1)
        fig.subplots_adjust(left=0.08, right=0.98, top=0.96, bottom=0.13, wspace=0.28,
                            hspace=0.62)  # fmt: skip
    else:
        axes = fig.subplots(1, 3)
        fig.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.31, wspace=0.62)
    for ax in axes:
        reset_axes(ax)
    if w.check is None:
        for ax in axes[:3]:
            draw_message(ax, w.failure_class)
    else:
        draw_scatter(axes[0], w.check)
        draw_errors(axes[1], w.check)
        if w.sweep is not None:
            draw_sweep(axes[2], w.sweep, w.eps.value)
        else:
            draw_message(axes[2], f"eps sweep unavailable: {w.sweep_error}")
    if w.one_d:
        draw_curve(axes[3], w.curve, w.point.value)
    tidy_axes(fig)
    return fig
