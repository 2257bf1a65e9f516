"""Slider positions a GradCheckWidget checks ahead: the grid of the sliders, the positions
around the current one checked while the kernel is idle and sent to the view.

``ChecksAhead`` is one object the widget owns (``GradCheckWidget.ahead``); it sees the widget
only through the functions it is given, never its attributes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from tapeviz.present.ahead import forget_unseen, run_ahead, running_loop

AHEAD_S = 4.0  # kernel seconds spent checking positions ahead, per settled view
# positions kept (the kernel; the view keeps 6000, gradcheck_plots.js). Measured
# (bench/house_measurements.md: simulated sessions of 40 drags and eps changes): 3,000 and
# the view's 6,000 draw 97-99% of the positions at once, 1,300 87%, one row and column 75%
AHEAD_FRAMES = 3000
TURN_S = 0.015  # one turn of the kernel's event loop: messages are handled between two


@dataclass(frozen=True)
class Grid:
    """The sliders' grid: x (or offset) ``p0 + i * pstep`` for ``i < pn``, eps
    ``10 ** (e0 + j * estep)`` for ``j < en``."""

    p0: float
    pstep: float
    pn: int
    e0: float
    estep: float
    en: int

    @classmethod
    def of(cls, point, eps) -> Grid:
        """The grid of the x (offset) slider ``point`` and the log slider ``eps``."""
        return cls(point.min, point.step, int(round((point.max - point.min) / point.step)) + 1,
                   eps.min, eps.step, int(round((eps.max - eps.min) / eps.step)) + 1)  # fmt: skip

    def point(self, i: int) -> float:
        return round(self.p0 + i * self.pstep, 12)

    def eps(self, j: int) -> float:
        return 10.0 ** (self.e0 + j * self.estep)

    def index(self, point: float, eps: float) -> tuple[int, int]:
        """The grid position nearest the sliders' values."""
        i = int(round((point - self.p0) / self.pstep))
        j = int(round((math.log10(eps) - self.e0) / self.estep))
        return i, j

    def snap(self, point: float, eps: float) -> tuple[float, float]:
        """The sliders' values as the positions checked ahead compute them (``point(i)``,
        ``eps(j)``): a value the browser sent as 0.5100000000000001 is checked at 0.51, so
        the kernel's reply equals what the view drew ahead (the error of a central
        difference is rounding noise, and 1e-16 in x changes it)."""
        i, j = self.index(point, eps)
        p, e = self.point(i), self.eps(j)
        p = p if abs(p - point) <= 1e-9 * max(1.0, abs(point)) else point
        return p, (e if abs(e - eps) <= 1e-9 * eps else eps)

    def as_dict(self) -> dict:
        """What the view reads (``data["grid"]``)."""
        return asdict(self)


class ChecksAhead:
    """A GradCheckWidget's positions checked ahead (``restart``), kept and sent to the view,
    and the view's messages (``message``: ``hello``, ``bye``).

    Args:
        frame_at: ``frame_at(point, eps) -> dict``, the views at one slider position.
        curve_at: ``curve_at(eps) -> dict | None``, f and its derivatives over the range
            slider's whole extent (a 1-D function), or None: no curve to check ahead.
        send: ``send(message)``, a custom message to the widget's view.
    """

    def __init__(
        self,
        frame_at: Callable[[float, float], dict],
        curve_at: Callable[[float], dict | None] | None,
        send: Callable[[dict], None],
    ):
        self._frame_at, self._curve_at, self._send = frame_at, curve_at, send
        self.frames: dict = {}  # (x index, eps index) -> the views there, oldest first
        self.curves: dict = {}  # eps index -> f over the whole range slider (1-D)
        self._sent: set = set()  # frames the view holds
        self._generation = 0  # bumped by every restart: work ahead for an older view stops
        self.views = 0  # views shown (hello, bye): with none, nothing is checked ahead

    def queue(self, grid: Grid, at: tuple[int, int]) -> list:
        """Positions to check, nearest first: the x row at this eps, the eps column at this
        x, then (1-D) f over the whole range slider at this eps."""
        i0, j0 = at
        row = sorted(range(grid.pn), key=lambda i: (abs(i - i0), i))
        col = sorted(range(grid.en), key=lambda j: (abs(j - j0), j))
        todo = [("frame", i, j0) for i in row] + [("frame", i0, j) for j in col]
        return ([("curve", j0)] if self._curve_at is not None else []) + todo

    def restart(self, grid: Grid, at: tuple[int, int], delay: float = 0.01) -> None:
        """While the kernel is idle, check the positions around ``at`` and send them (a
        burst per turn of its event loop, within ``AHEAD_S``), while a view is shown (it
        says ``hello``; the first view is painted before the kernel starts: ``delay``); a
        restart stops an older queue. Outside a kernel: nothing."""
        self._generation += 1
        if running_loop() is None or not self.views:
            return
        generation, queue, spent = self._generation, self.queue(grid, at), [0.0]

        def turn() -> bool:
            t0, frames, curves = time.perf_counter(), [], {}
            while queue and time.perf_counter() - t0 < TURN_S:
                item = queue.pop(0)
                if item[0] == "curve":
                    j = item[1]
                    if j not in self.curves:
                        self.curves[j] = curves[str(j)] = self._curve_at(grid.eps(j))
                    continue
                _, i, j = item
                if (i, j) not in self.frames:
                    self.frames[(i, j)] = self._frame_at(grid.point(i), grid.eps(j))
                    if len(self.frames) > AHEAD_FRAMES:
                        self.frames.pop(next(iter(self.frames)))
                if (i, j) not in self._sent:
                    self._sent.add((i, j))
                    frames.append([i, j, self.frames[(i, j)]])
            spent[0] += time.perf_counter() - t0
            if frames or curves:
                self._send({"frames": frames, "curves": curves})
            return bool(queue) and spent[0] < AHEAD_S

        run_ahead(lambda: generation == self._generation, turn, delay)

    def message(self, content) -> None:
        """A new view (``hello``): send it the positions checked so far (the widget then
        ``restart``s); the last view gone (``bye``): stop, and later forget them."""
        if isinstance(content, dict) and content.get("bye"):
            self.views = max(0, self.views - 1)
            if not self.views:
                self._generation += 1
                forget_unseen(lambda: not self.views, self._forget)
        if isinstance(content, dict) and content.get("hello"):
            self.views += 1
            self._sent = set(self.frames)
            items = [[i, j, f] for (i, j), f in self.frames.items()]
            curves = {str(j): c for j, c in self.curves.items()}
            for k in range(0, max(len(items), 1), 200):
                self._send({"frames": items[k : k + 200], "curves": curves if k == 0 else {}})

    def _forget(self) -> None:
        """No view for a while: drop the positions checked ahead (a new view starts again)."""
        self.frames, self.curves, self._sent = {}, {}, set()
