"""``tv.GradCheckWidget``: a custom gradient against central differences, live.

Why the plots follow a slider at once: the check runs in the kernel (it calls the user's
function), and a round trip there costs 50-150 ms in JupyterLab. So, while the kernel is idle,
the widget checks the slider positions around the current one (every x on its grid at this
eps, every eps at this x, and f over the whole range slider) and sends them to the view; a
slider is linked in the browser to the view (``jslink``), which draws a position it holds
as soon as the slider moves. The kernel's own check of the position arrives after, the same
numbers.
"""

from __future__ import annotations

import html
import math
import time
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from tapeviz.core.tensor import Tensor
from tapeviz.present.ahead import (
    forget_unseen,
    make_room,
    run_ahead,
    running_loop,
    serialized,
)

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
from .gradcheck_payload import payload, payload_curve
from .gradcheck_view import Coalescer, GradCheckPlots

SWEEP_EPS = np.logspace(-12, -1, 23)
_DESC = {"description_width": "60px"}
AHEAD_S = 4.0  # kernel seconds spent checking positions ahead, per settled view
AHEAD_FRAMES = 3000  # positions kept (kernel and view)
TURN_S = 0.015  # one turn of the kernel's event loop: messages are handled between two


@dataclass
class Check:
    """One gradient check at slider position (``point``, ``eps``): what the views show."""

    point: float
    eps: float
    args: list
    report: object = None
    check: object = None
    sweep: object = None
    sweep_error: Exception | None = None
    error: Exception | None = None


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

    ``timing`` (an HTML widget, not in the box; display it to watch) says how long the
    kernel's last update took and how many slider positions it coalesced.

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
        make_room()
        self.f, self.atol, self.rtol = f, atol, rtol
        self.name = getattr(f, "__name__", type(f).__name__)
        self.report = self.check = self.error = None
        self.sweep = self.curve = self.sweep_error = None
        self.plot_data: dict = {}
        self.last_update_ms = 0.0
        self.badge, self.worst = W.HTML(), W.HTML()
        self.view = GradCheckPlots()  # live plots, drawn in the browser
        self.plot = W.Image(format="png")  # the matplotlib figure: static views, exports
        self._png_stale, self._live = True, Coalescer(self.update)
        self._now: Check | None = None
        self._frames: dict = {}  # (x index, eps index) -> the views there, checked ahead
        self._frames_sent: set = set()
        self._curves: dict = {}  # eps index -> f over the whole range slider (1-D)
        self._views = 0  # views shown (hello, bye): with none, nothing is checked ahead
        self._generation = 0
        self.timing = W.HTML()
        try:
            self._setup(args, arg, eps, x_range)
        except Exception as e:
            self.error = e
            self.badge.value = error_html(f"GradCheckWidget({self.name}): cannot start", e)
            super().__init__([self.badge])
            return
        sliders = [self.point, self.eps] + ([self.range] if self.one_d else [])
        # the sliders move the view in the browser; the kernel's check follows
        self._links = [
            W.jslink((self.point, "value"), (self.view, "point")),
            W.jslink((self.eps, "value"), (self.view, "eps")),
            W.jslink((self.range, "value"), (self.view, "range")),
        ]
        self.view.point, self.view.eps, self.view.range = (
            self.point.value,
            self.eps.value,
            list(self.range.value),
        )
        self.view.on_msg(self._on_view_message)
        # the view draws the badge and the worst entries too: they change with the sliders.
        # The kernel's time per update (``timing``) is not shown in the box: it changed on
        # every reply, a repaint after the browser had drawn the position already
        super().__init__([self.view, W.HBox(sliders[:2]), W.HBox(sliders[2:])])
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
        return self._args_at(self.point.value)

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
    @serialized
    def update(self, point: bool = True, curve: bool = True) -> None:
        """Recompute the check (and the sweep/curve when their inputs changed) and redraw."""
        t0 = time.perf_counter()
        try:
            self._compute(point, curve)
        except Exception as e:
            self.error = e
            self.badge.value = error_html(f"gradient check of {self.name} failed to run", e)
            self.view.data = self._data(None)
            return
        self.error = None
        self.badge.value = self._badge_html(self._now)
        self.worst.value = self._worst_html(self._now)
        self.view.data = self._data(self._now)
        self._png_stale = True  # the matplotlib figure is drawn when asked for (png())
        self.last_update_ms = (time.perf_counter() - t0) * 1e3
        self.timing.value = (
            f"<small>updated in {self.last_update_ms:.0f} ms"
            f" \u00b7 {self.coalesced} slider positions coalesced</small>"
        )
        self._check_ahead()

    def _data(self, c: Check | None) -> dict:
        """What the view draws for the current sliders: the four plots' numbers, the badge,
        the worst entries, the position they are for and the grid of the positions."""
        out = payload(self) if c is not None else payload(self, failed=True)
        out.update(badge=self.badge.value, worst=self.worst.value if c is not None else "")
        out["at"] = {"point": self.point.value, "eps": self.eps.value,
                     "range": list(self.range.value)}  # fmt: skip
        out["grid"] = self._grid()
        return out

    def _frame(self, c: Check) -> dict:
        """The views of one position ahead: what differs from one slider position to the next."""
        if c.error is not None:
            words = error_html(f"gradient check of {self.name} failed to run", c.error)
            return {"message": "", "scatter": None, "errors": None, "sweep": None,
                    "badge": words, "worst": ""}  # fmt: skip
        out = {k: v for k, v in payload(self, c).items() if k not in ("curve", "one_d")}
        out.update(badge=self._badge_html(c), worst=self._worst_html(c))
        return out

    # --- positions checked ahead --------------------------------------------------------
    def _grid(self) -> dict:
        """Slider grids: x (or offset) ``p0 + i * pstep``, eps ``10 ** (e0 + j * estep)``."""
        p, e = self.point, self.eps
        return {
            "p0": p.min, "pstep": p.step, "pn": int(round((p.max - p.min) / p.step)) + 1,
            "e0": e.min, "estep": e.step, "en": int(round((e.max - e.min) / e.step)) + 1,
        }  # fmt: skip

    def _index(self) -> tuple[int, int]:
        g = self._grid()
        i = int(round((self.point.value - g["p0"]) / g["pstep"]))
        j = int(round((math.log10(self.eps.value) - g["e0"]) / g["estep"]))
        return i, j

    def _ahead_queue(self) -> list:
        """Positions to check, nearest first: the x row at this eps, the eps column at this x,
        then (1-D) f over the whole range slider at this eps."""
        g, (i0, j0) = self._grid(), self._index()
        row = sorted(range(g["pn"]), key=lambda i: (abs(i - i0), i))
        col = sorted(range(g["en"]), key=lambda j: (abs(j - j0), j))
        todo = [("frame", i, j0) for i in row] + [("frame", i0, j) for j in col]
        return ([("curve", j0)] if self.one_d else []) + todo

    def _check_ahead(self, delay: float = 0.01) -> None:
        """While the kernel is idle, check the positions around this one and send them (a
        burst per turn of its event loop, within ``AHEAD_S``), while a view is shown (it says
        ``hello``; the first view is painted before the kernel starts: ``delay``). Outside a
        kernel: nothing."""
        self._generation += 1
        if running_loop() is None or self.error is not None or not self._views:
            return
        generation, queue, spent = self._generation, self._ahead_queue(), [0.0]
        grid = self._grid()

        def turn() -> bool:
            t0, frames, curves = time.perf_counter(), [], {}
            while queue and time.perf_counter() - t0 < TURN_S:
                item = queue.pop(0)
                if item[0] == "curve":
                    j = item[1]
                    if j not in self._curves:
                        self._curves[j] = self._wide_curve(j, grid)
                        curves[str(j)] = self._curves[j]
                    continue
                _, i, j = item
                if (i, j) not in self._frames:
                    point = round(grid["p0"] + i * grid["pstep"], 12)
                    eps = 10.0 ** (grid["e0"] + j * grid["estep"])
                    self._frames[(i, j)] = self._frame(self.check_at(point, eps))
                    if len(self._frames) > AHEAD_FRAMES:
                        self._frames.pop(next(iter(self._frames)))
                if (i, j) not in self._frames_sent:
                    self._frames_sent.add((i, j))
                    frames.append([i, j, self._frames[(i, j)]])
            spent[0] += time.perf_counter() - t0
            if frames or curves:
                self.view.send({"frames": frames, "curves": curves})
            return bool(queue) and spent[0] < AHEAD_S

        run_ahead(lambda: generation == self._generation, turn, delay)

    def _wide_curve(self, j: int, grid: dict):
        """f, the custom and the numerical derivative over the range slider's whole extent,
        as dense as the range drawn now: the view cuts out any range the slider picks."""
        lo, hi = self.range.value
        n = int(min(400, math.ceil(40 * (self.range.max - self.range.min) / max(hi - lo, 1e-9))))
        eps = 10.0 ** (grid["e0"] + j * grid["estep"])
        try:
            xs, fx, custom, numeric = derivative_curve(
                self.f, self.args, self.arg, self.range.min, self.range.max, eps, n=n + 1
            )
        except Exception:
            return None
        return payload_curve(xs, fx, custom, numeric, self.point.value)

    @serialized
    def _on_view_message(self, _widget, content, _buffers) -> None:
        """A new view: send it the positions checked so far; the last view gone: stop."""
        if isinstance(content, dict) and content.get("bye"):
            self._views = max(0, self._views - 1)
            if not self._views:
                self._generation += 1
                forget_unseen(lambda: not self._views, self._forget)
        if isinstance(content, dict) and content.get("hello"):
            self._views += 1
            self._frames_sent = set(self._frames)
            items = [[i, j, f] for (i, j), f in self._frames.items()]
            curves = {str(j): c for j, c in self._curves.items()}
            for k in range(0, max(len(items), 1), 200):
                self.view.send({"frames": items[k : k + 200], "curves": curves if k == 0 else {}})
            self._check_ahead(delay=0.25)  # after the first view has been painted

    def _forget(self) -> None:
        """No view for a while: drop the positions checked ahead (a new view starts again)."""
        self._frames, self._curves, self._frames_sent = {}, {}, set()

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

    def check_at(self, point: float, eps: float) -> Check:
        """The check (report, reverse-mode check, eps sweep) at one slider position."""
        args = self._args_at(point)
        c = Check(point=point, eps=eps, args=args)
        try:
            c.report = run_check(self.f, args, eps, self.atol, self.rtol)
            c.check = reverse_check(c.report, self.arg)
        except Exception as e:
            c.error = e
            return c
        if c.check is not None:
            try:
                c.sweep = c.report.eps_sweep(SWEEP_EPS)
            except Exception as e:  # f undefined at x +- eps for the larger eps
                c.sweep_error = e
        return c

    def _args_at(self, v: float) -> list:
        a = list(self.args0)
        a[self.arg] = np.full_like(a[self.arg], v) if self.one_d else a[self.arg] + v
        return a

    def _on_grid(self) -> tuple[float, float]:
        """The sliders' position as the positions checked ahead compute it (``p0 + i *
        pstep``, ``10 ** (e0 + j * estep)``): a value the browser sent as 0.5100000000000001
        is checked at 0.51, so the kernel's reply equals what the view drew ahead (the error
        of a central difference is rounding noise, and 1e-16 in x changes it)."""
        g, (i, j) = self._grid(), self._index()
        point = round(g["p0"] + i * g["pstep"], 12)
        eps = 10.0 ** (g["e0"] + j * g["estep"])
        x, e = self.point.value, self.eps.value
        point = point if abs(point - x) <= 1e-9 * max(1.0, abs(x)) else x
        return point, (eps if abs(eps - e) <= 1e-9 * e else e)

    def _compute(self, point, curve):
        c = self.check_at(*self._on_grid())
        if c.error is not None:
            raise c.error
        self._now = c
        self.report, self.check, self.sweep, self.sweep_error = (
            c.report,
            c.check,
            c.sweep,
            c.sweep_error,
        )
        if self.one_d and (curve or self.curve is None):
            lo, hi = self.range.value
            self.curve = derivative_curve(self.f, c.args, self.arg, lo, hi, self.eps.value)
        c = self.check
        self.plot_data = {
            "scatter": (c.numerical.copy(), c.analytic.copy()) if c else None,
            "abs_err": c.abs_err.copy() if c else None,
            "sweep": (self.sweep.eps, self.sweep.error) if self.sweep else None,
            "curve": self.curve,
            "eps": self.eps.value,
            "point": self.point.value,
        }

    def figure(self):
        """The four views as a new matplotlib Figure (static views, exports; the live plots
        are drawn in the browser). Not kept: a widget holds only its PNG (``png()``)."""
        # legends sit under each plot (legend_below), so leave room beneath the axes
        fig = new_figure(9.0 if self.one_d else 9.6, 7.4 if self.one_d else 3.9, layout=None)
        if self.one_d:
            axes = fig.subplots(2, 2).reshape(-1)
            fig.subplots_adjust(left=0.08, right=0.98, top=0.96, bottom=0.13, wspace=0.28,
                                hspace=0.62)  # fmt: skip
        else:
            axes = fig.subplots(1, 3)
            fig.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.31, wspace=0.62)
        for ax in axes:
            P.reset_axes(ax)
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
        return fig

    def _draw(self):
        self.plot.value = figure_png(self.figure())

    def _badge_html(self, now: Check) -> str:
        ok = now.report.passed
        colour, word = (PASS, "&#10004; PASS") if ok else (FAIL, "&#10008; FAIL")
        c, sweep = now.check, now.sweep
        if c is None:
            words = failure_words(now.report, c)
            return (
                f"<div style='font-family:sans-serif;padding:4px'><span style='background:"
                f"{colour};color:white;padding:3px 10px;border-radius:4px;font-weight:bold'>"
                f"{word}</span> <b>{html.escape(self.name)}</b>: "
                f"{html.escape(words)}</div>"
            )
        where = c.worst_index
        worst = now.report.worst
        err = float(worst.abs_err.max(initial=0)) if worst is not None else 0.0
        verdict = html.escape(sweep.verdict) if sweep is not None else ""
        return (
            f"<div style='font-family:sans-serif;padding:4px'><span style='background:{colour};"
            f"color:white;padding:3px 10px;border-radius:4px;font-weight:bold'>{word}</span> "
            f"<b>{html.escape(self.name)}</b> argument {self.arg}: worst |error| "
            f"<b>{c.abs_err.max(initial=0):.3g}</b> at index {where} &middot; "
            f"{html.escape(failure_words(now.report, c))} <small>(eps {now.eps:.1e}, "
            f"atol {c.atol:g}, rtol {c.rtol:g}; all arguments: worst {err:.3g})</small>"
            f"<br/><small>eps sweep: {verdict}</small></div>"
        )

    def _worst_html(self, now: Check) -> str:
        if now.check is None:
            return ""
        small = jacobian_entries(self.f, now.args, self.arg, now.check)
        if small is None:
            what = "custom", "entries of dyᵀJ for a random dy (the Jacobian is too large to list)"
            entries = worst_entries(now.check)
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
