"""``tv.GradCheckWidget``: a custom gradient against central differences, live."""

from __future__ import annotations

import html
import time

import ipywidgets as W
import numpy as np

from tapeviz.core.tensor import Tensor

from ..present.palette import FAIL, PASS
from . import gradcheck_plots as P
from ._common import error_html, figure_png, new_figure, png_img_tag, static_bundle
from .gradcheck_data import (
    derivative_curve,
    failure_words,
    jacobian_entries,
    reverse_check,
    run_check,
    worst_entries,
)
from .gradcheck_payload import payload
from .gradcheck_view import Coalescer, GradCheckPlots

SWEEP_EPS = np.logspace(-12, -1, 23)
_DESC = {"description_width": "60px"}


def _wide():
    return W.Layout(width="420px")


def _as64(a):
    arr = a.numpy() if isinstance(a, Tensor) else np.asarray(a)
    return arr.astype(np.float64) if arr.dtype.kind == "f" else arr


class GradCheckWidget(W.VBox):
    """Numerical against custom gradient, with sliders that move the point, eps and range.

    Views: custom vs numerical scatter (y = x line, tolerance band); error per element
    (heatmap or bars) with the worst entries; the epsilon sweep (log-log, slope-2 line);
    for scalar functions of one variable, f, the custom and the numerical derivative.

    Args:
        f: a function of tensors (a plain function, a ``custom_grad`` op, a
            ``DifferentiableFunction`` or ``CompiledLayer`` instance, ...).
        *args: its arguments; floating ones can be checked.
        arg: which argument the sliders move and the plots show.
        eps, atol, rtol: as in ``tv.check_grads``.
        x_range: (lo, hi) of the 1-D derivative plot.

    Example:
        >>> import tapeviz as tv
        >>> w = tv.GradCheckWidget(lambda x: tv.tanh(x) * x, [0.5, -1.0, 2.0])
        >>> w.passed
        True
        >>> w.eps.value = 1e-3  # the plots update
    """

    def __init__(
        self, f, *args, arg: int = 0, eps: float = 1e-6, atol=None, rtol=None, x_range=None
    ):
        self.f, self.atol, self.rtol = f, atol, rtol
        self.name = getattr(f, "__name__", type(f).__name__)
        self.report = self.check = self.error = None
        self.sweep = self.curve = self.sweep_error = None
        self._fig = self._axes = None
        self.plot_data: dict = {}
        self.last_update_ms = 0.0
        self.badge, self.worst = W.HTML(), W.HTML()
        self.view = GradCheckPlots()  # live plots, drawn in the browser
        self.plot = W.Image(format="png")  # the matplotlib figure: static views, exports
        self._png_stale, self._live = True, Coalescer(self.update)
        self.timing = W.HTML()
        try:
            self._setup(args, arg, eps, x_range)
        except Exception as e:
            self.error = e
            self.badge.value = error_html(f"GradCheckWidget({self.name}): cannot start", e)
            super().__init__([self.badge])
            return
        sliders = [self.point, self.eps] + ([self.range] if self.one_d else [])
        super().__init__(
            [
                self.badge,
                self.view,
                W.HBox(sliders[:2]),
                W.HBox(sliders[2:] + [self.timing]),
                self.worst,
            ]
        )
        self.update(point=True, curve=True)

    # --- setup -------------------------------------------------------------------------
    def _setup(self, args, arg, eps, x_range):
        if not args:
            raise TypeError(f"GradCheckWidget: {self.name} needs at least one argument")
        self.args0 = [_as64(a) for a in args]
        if not (0 <= arg < len(args)) or self.args0[arg].dtype.kind != "f":
            raise ValueError(
                f"GradCheckWidget: argument {arg} of {self.name} must be a "
                f"floating array (got {len(args)} arguments)"
            )
        self.arg = arg
        x0 = self.args0[arg]
        y = self.f(*[Tensor(a) for a in self.args0])
        y_size = int(np.size(y.numpy() if isinstance(y, Tensor) else y))
        self.one_d = x0.size == 1 and y_size == 1
        c = float(x0.reshape(-1)[0]) if self.one_d else 0.0
        lo, hi = x_range if x_range is not None else (c - 3.0, c + 3.0)
        desc = "x" if self.one_d else "offset"
        self.point = W.FloatSlider(
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
        self.eps = W.FloatLogSlider(
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
        self.range = W.FloatRangeSlider(
            layout=_wide(),
            style=_DESC,
            value=(lo, hi),
            min=lo - 5,
            max=hi + 5,
            step=0.1,
            description="range",
        )
        self.point.observe(lambda ch: self._live.request(self.point, True, False), "value")
        self.eps.observe(lambda ch: self._live.request(self.eps, False, True), "value")
        self.range.observe(lambda ch: self._live.request(self.range, False, True), "value")

    @property
    def args(self) -> list:
        """The arguments at the current slider position (float64)."""
        a = list(self.args0)
        v = self.point.value
        a[self.arg] = np.full_like(a[self.arg], v) if self.one_d else a[self.arg] + v
        return a

    @property
    def passed(self) -> bool:
        return self.error is None and self.report is not None and self.report.passed

    @property
    def failure_class(self) -> str:
        """The failure class in words ("gradient matches ..." when it passes)."""
        if self.report is None:
            return "no result"
        return failure_words(self.report, self.check)

    # --- update ------------------------------------------------------------------------
    def update(self, point: bool = True, curve: bool = True) -> None:
        """Recompute the check (and the sweep/curve when their inputs changed) and redraw."""
        t0 = time.perf_counter()
        try:
            self._compute(point, curve)
        except Exception as e:
            self.error = e
            self.badge.value = error_html(f"gradient check of {self.name} failed to run", e)
            return
        self.error = None
        self.badge.value = self._badge_html()
        self.worst.value = self._worst_html()
        self.view.data = payload(self)
        self._png_stale = True  # the matplotlib figure is drawn when asked for (png())
        self.last_update_ms = (time.perf_counter() - t0) * 1e3
        self.timing.value = (
            f"<small>updated in {self.last_update_ms:.0f} ms"
            f" \u00b7 {self.coalesced} slider positions coalesced</small>"
        )

    @property
    def coalesced(self) -> int:
        """How many slider positions from the browser were skipped for a later one."""
        return self._live.coalesced

    def png(self) -> bytes:
        """The four views as a matplotlib PNG (static HTML, exports); drawn when stale."""
        if self._png_stale and self.error is None and self.report is not None:
            self._draw()
            self._png_stale = False
        return self.plot.value

    def _compute(self, point, curve):
        args = self.args
        self.report = run_check(self.f, args, self.eps.value, self.atol, self.rtol)
        self.check = reverse_check(self.report, self.arg)
        self.sweep, self.sweep_error = None, None
        if self.check is not None:
            try:
                self.sweep = self.report.eps_sweep(SWEEP_EPS)
            except Exception as e:  # f undefined at x +- eps for the larger eps
                self.sweep_error = e
        if self.one_d and (curve or self.curve is None):
            lo, hi = self.range.value
            self.curve = derivative_curve(self.f, args, self.arg, lo, hi, self.eps.value)
        c = self.check
        self.plot_data = {
            "scatter": (c.numerical.copy(), c.analytic.copy()) if c else None,
            "abs_err": c.abs_err.copy() if c else None,
            "sweep": (self.sweep.eps, self.sweep.error) if self.sweep else None,
            "curve": self.curve,
            "eps": self.eps.value,
            "point": self.point.value,
        }

    def _figure(self):
        """The figure and its axes, made once; later redraws reuse them."""
        if self._fig is None:
            # legends sit under each plot (legend_below), so leave room beneath the axes
            fig = new_figure(9.0 if self.one_d else 9.6, 7.4 if self.one_d else 3.9, layout=None)
            if self.one_d:
                axes = fig.subplots(2, 2).reshape(-1)
                fig.subplots_adjust(left=0.08, right=0.98, top=0.96, bottom=0.13, wspace=0.28,
                                    hspace=0.62)  # fmt: skip
            else:
                axes = fig.subplots(1, 3)
                fig.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.31, wspace=0.62)
            self._fig, self._axes = fig, list(axes)
        for ax in self._axes:
            P.reset_axes(ax)
        return self._fig, self._axes

    def _draw(self):
        fig, axes = self._figure()
        if self.check is None:
            for ax in axes[:3]:
                P.draw_message(ax, self.failure_class)
        else:
            P.draw_scatter(axes[0], self.check)
            P.draw_errors(axes[1], self.check)
            if self.sweep is not None:
                P.draw_sweep(axes[2], self.sweep, self.eps.value)
            else:
                P.draw_message(axes[2], f"eps sweep unavailable: {self.sweep_error}")
        if self.one_d:
            P.draw_curve(axes[3], self.curve, self.point.value)
        P.tidy_axes(fig)
        self.plot.value = figure_png(fig)

    def _badge_html(self) -> str:
        ok = self.report.passed
        colour, word = (PASS, "&#10004; PASS") if ok else (FAIL, "&#10008; FAIL")
        c = self.check
        if c is None:
            return (
                f"<div style='font-family:sans-serif;padding:4px'><span style='background:"
                f"{colour};color:white;padding:3px 10px;border-radius:4px;font-weight:bold'>"
                f"{word}</span> <b>{html.escape(self.name)}</b>: "
                f"{html.escape(self.failure_class)}</div>"
            )
        where = c.worst_index
        worst = self.report.worst
        err = float(worst.abs_err.max(initial=0)) if worst is not None else 0.0
        verdict = html.escape(self.sweep.verdict) if self.sweep is not None else ""
        return (
            f"<div style='font-family:sans-serif;padding:4px'><span style='background:{colour};"
            f"color:white;padding:3px 10px;border-radius:4px;font-weight:bold'>{word}</span> "
            f"<b>{html.escape(self.name)}</b> argument {self.arg}: worst |error| "
            f"<b>{c.abs_err.max(initial=0):.3g}</b> at index {where} &middot; "
            f"{html.escape(self.failure_class)} <small>(eps {self.eps.value:.1e}, "
            f"atol {c.atol:g}, rtol {c.rtol:g}; all arguments: worst {err:.3g})</small>"
            f"<br/><small>eps sweep: {verdict}</small></div>"
        )

    def _worst_html(self) -> str:
        if self.check is None:
            return ""
        small = jacobian_entries(self.f, self.args, self.arg, self.check)
        if small is None:
            what = "custom", "entries of dyᵀJ for a random dy (the Jacobian is too large to list)"
            entries = worst_entries(self.check)
        else:
            what = (
                "custom ∂y/∂x",
                (
                    "entries of the Jacobian: only its diagonal (an elementwise function)"
                    if small[0] == "diagonal"
                    else "entries of the Jacobian"
                ),
            )
            entries = small[1]
        rows = "".join(
            f"<tr><td>{idx}</td><td>{a:.6g}</td><td>{n:.6g}</td><td>{e:.3g}</td>"
            f"<td>{'ok' if ok else '<b>outside</b>'}</td></tr>"
            for idx, a, n, e, ok in entries
        )
        return (
            f"<small>{what[1]}, worst first</small><table style='font-size:12px'><tr>"
            f"<th>entry</th><th>{what[0]}</th><th>numerical</th><th>|error|</th><th></th></tr>"
            f"{rows}</table>"
        )

    def static_html(self) -> str:
        if self.error is not None or not self.png():
            return self.badge.value
        return self.badge.value + png_img_tag(self.png(), "gradient check") + self.worst.value

    def _repr_mimebundle_(self, include=None, exclude=None):
        state = "PASS" if self.passed else "FAIL"
        return static_bundle(self, self.static_html(), f"GradCheckWidget({self.name}): {state}")
