"""Slider positions a GradCheckWidget checks ahead: the grid of the sliders, the positions
around the current one checked while the kernel is idle and sent to the view."""

from __future__ import annotations

import math
import time

from tapeviz.present.ahead import forget_unseen, run_ahead, running_loop, serialized

from .gradcheck_data import derivative_curve
from .gradcheck_payload import payload_curve

AHEAD_S = 4.0  # kernel seconds spent checking positions ahead, per settled view
AHEAD_FRAMES = 3000  # positions kept (kernel and view)
TURN_S = 0.015  # one turn of the kernel's event loop: messages are handled between two


class ChecksAhead:
    """The GradCheckWidget's positions checked ahead and the view's messages (``hello``,
    ``bye``). Mixed into ``GradCheckWidget``, which holds the sliders and the state it reads
    (``_frames``, ``_curves``, ``_frames_sent``, ``_views``, ``_generation``) and checks a
    position (``check_at``, ``_frame``)."""

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
