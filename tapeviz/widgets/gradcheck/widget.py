"""``tv.GradCheckWidget``: a custom gradient against central differences, live.

Why the plots follow a slider at once: the check runs in the kernel (it calls the user's
function), and a round trip there costs 50-150 ms in JupyterLab. So, while the kernel is idle,
the widget checks the slider positions around the current one (``gradcheck_ahead``: every x
on its grid at this eps, every eps at this x, and f over the whole range slider) and sends
them to the view; a slider is linked in the browser to the view (``jslink``), which draws a
position it holds as soon as the slider moves. The kernel's own check of the position
arrives after, the same numbers.
"""

from __future__ import annotations

import math
import time

import ipywidgets as W
import numpy as np

from tapeviz.core.check.arguments import (
    check_callable,
    check_int,
    check_number,
    check_real,
    describe,
)
from tapeviz.core.tensors.tensor import Tensor
from tapeviz.present.ahead import make_room, serialized

from ..common import error_html, figure_png, png_img_tag, static_bundle
from .ahead import ChecksAhead, Grid
from .data import SWEEP_EPS, Check, check_position, derivative_curve, failure_words
from .html import badge_html, worst_html
from .payload import payload, payload_curve
from .plots import check_figure
from .view import Coalescer, GradCheckPlots, sliders

__all__ = ["SWEEP_EPS", "Check", "GradCheckWidget"]


def _as64(a):
    """A floating argument as a float64 array; any other argument (an int array, a tuple of
    einsum subscripts, ...) exactly as given: f gets what the user passed."""
    arr = a.numpy() if isinstance(a, Tensor) else a
    if isinstance(arr, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(arr)
        except ValueError:  # ragged: not an array
            return a
        if arr.dtype.kind == "f":
            return arr.astype(np.float64)
    return a


def _floating(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _check_arguments(f, arg, eps, atol, rtol, x_range) -> None:
    """A mistyped argument is an error naming it, raised at once (not a badge, never a
    verdict on the gradient)."""
    where = "GradCheckWidget"
    check_callable(where, "f", f)
    check_int(where, "arg", arg)  # its range against f's arguments: _setup (in the badge)
    check_number(where, "eps", eps, positive=True, none=False)
    if not 1e-12 <= eps <= 0.1:
        raise ValueError(f"{where}: eps must be between 1e-12 and 0.1 (the eps slider's "
                         f"range), got {eps!r}")  # fmt: skip
    check_number(where, "atol", atol, positive=False)
    check_number(where, "rtol", rtol, positive=False)
    if x_range is None:
        return
    if not isinstance(x_range, (tuple, list)) or len(x_range) != 2:
        raise TypeError(f"{where}: x_range must be (lo, hi), got {describe(x_range)}")
    lo, hi = (check_real(where, "x_range", v) for v in x_range)
    if not lo < hi:
        raise ValueError(f"{where}: x_range must be (lo, hi) with lo < hi, got {x_range!r}")


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
        _check_arguments(f, arg, eps, atol, rtol, x_range)
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
        self.ahead: ChecksAhead | None = None  # the positions checked ahead (after _setup)
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
        self.ahead = ChecksAhead(
            frame_at=lambda point, eps: self._frame(self.check_at(point, eps)),
            curve_at=self._wide_curve if self.one_d else None,
            send=lambda message: self.view.send(message),
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
        if not (0 <= arg < len(args)) or not _floating(self.args0[arg]):
            raise ValueError(
                f"GradCheckWidget: argument {arg} of {self.name} must be a "
                f"floating array (got {len(args)} arguments)"
            )
        self.arg = arg
        x0 = self.args0[arg]
        y = self.f(*[Tensor(a) if _floating(a) else a for a in self.args0])
        y_size = int(np.size(y.numpy() if isinstance(y, Tensor) else y))
        self.one_d = x0.size == 1 and y_size == 1
        c = float(x0.reshape(-1)[0]) if self.one_d else 0.0
        lo, hi = x_range if x_range is not None else (c - 3.0, c + 3.0)
        self.point, self.eps, self.range = sliders(self.one_d, c, lo, hi, eps)
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
        self.badge.value = badge_html(self.name, self.arg, self._now)
        self.worst.value = worst_html(self.f, self.arg, self._now)
        self.view.data = self._data(self._now)
        self._png_stale = True  # the matplotlib figure is drawn when asked for (png())
        self.last_update_ms = (time.perf_counter() - t0) * 1e3
        self.timing.value = (
            f"<small>updated in {self.last_update_ms:.0f} ms"
            f" \u00b7 {self.coalesced} slider positions coalesced</small>"
        )
        self.ahead.restart(self.grid(), self._index())

    def _data(self, c: Check | None) -> dict:
        """What the view draws for the current sliders: the four plots' numbers, the badge,
        the worst entries, the position they are for and the grid of the positions."""
        out = payload(self) if c is not None else payload(self, failed=True)
        out.update(badge=self.badge.value, worst=self.worst.value if c is not None else "")
        out["at"] = {"point": self.point.value, "eps": self.eps.value,
                     "range": list(self.range.value)}  # fmt: skip
        out["grid"] = self.grid().as_dict()
        return out

    def _frame(self, c: Check) -> dict:
        """The views of one position ahead: what differs from one slider position to the next."""
        if c.error is not None:
            words = error_html(f"gradient check of {self.name} failed to run", c.error)
            return {"message": "", "scatter": None, "errors": None, "sweep": None,
                    "badge": words, "worst": ""}  # fmt: skip
        out = {k: v for k, v in payload(self, c).items() if k not in ("curve", "one_d")}
        out.update(badge=badge_html(self.name, self.arg, c), worst=worst_html(self.f, self.arg, c))
        return out

    # --- the grid of the sliders and the positions checked ahead -------------------------
    def grid(self) -> Grid:
        """The sliders' grid (x or offset, eps): the positions checked ahead."""
        return Grid.of(self.point, self.eps)

    def _index(self) -> tuple[int, int]:
        """The grid position of the sliders."""
        return self.grid().index(self.point.value, self.eps.value)

    def _wide_curve(self, eps: float):
        """f, the custom and the numerical derivative over the range slider's whole extent,
        as dense as the range drawn now: the view cuts out any range the slider picks."""
        lo, hi = self.range.value
        n = int(min(400, math.ceil(40 * (self.range.max - self.range.min) / max(hi - lo, 1e-9))))
        try:
            xs, fx, custom, numeric = derivative_curve(
                self.f, self.args, self.arg, self.range.min, self.range.max, eps, n=n + 1
            )
        except Exception:
            return None
        return payload_curve(xs, fx, custom, numeric, self.point.value)

    @serialized
    def _on_view_message(self, _widget, content, _buffers) -> None:
        """The view's ``hello`` and ``bye`` (``ahead``'s); after a hello, check on ahead."""
        self.ahead.message(content)
        if isinstance(content, dict) and content.get("hello") and self.error is None:
            self.ahead.restart(self.grid(), self._index(), delay=0.25)  # once it is painted

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
        return check_position(self.f, args, self.arg, point, eps, self.atol, self.rtol)

    def _args_at(self, v: float) -> list:
        a = list(self.args0)
        a[self.arg] = np.full_like(a[self.arg], v) if self.one_d else a[self.arg] + v
        return a

    def _compute(self, point, curve):
        c = self.check_at(*self.grid().snap(self.point.value, self.eps.value))
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
        return check_figure(self)

    def _draw(self):
        self.plot.value = figure_png(self.figure())

    def static_html(self) -> str:
        if self.error is not None or not self.png():
            return self.badge.value
        return self.badge.value + png_img_tag(self.png(), "gradient check") + self.worst.value

    def _repr_mimebundle_(self, include=None, exclude=None):
        state = "PASS" if self.passed else "FAIL"
        return static_bundle(self, self.static_html(), f"GradCheckWidget({self.name}): {state}")
