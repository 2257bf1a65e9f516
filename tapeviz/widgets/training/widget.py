"""``tv.TrainingPlot``: loss and metrics live, a stop button and a progress display.

It is a ``tv.nn.Callback`` (pass it to ``model.fit(..., callbacks=[plot])``) and works in a
hand-written loop too (``plot.update(step, loss=..., accuracy=...)``). The plot is redrawn
at most every ``min_interval`` seconds into one PNG image, so it never flickers and costs
the training little.

Threads: a redraw that is due after the last update runs on a timer thread, and
``fit_in_thread`` trains on another. Both are daemon threads, and at interpreter exit an
``atexit`` hook cancels pending redraws, waits for one in progress and stops background
training, so no thread is drawing (matplotlib's C++ code) while the interpreter shuts down.
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref

import ipywidgets as W

from ...present.palette import FAIL
from ...present.text import html_text
from ..common import error_html, figure_png, new_figure, png_img_tag, static_bundle

try:  # tapeviz works before (or without) core.nn
    from tapeviz.core.nn.callbacks import Callback as _Base
except ImportError:  # pragma: no cover - only when core.nn is missing

    class _Base:
        model = None
        params: dict = {}

        def set_model(self, model) -> None:
            self.model = model


_SKIP = {"step", "epoch", "batch", "size"}


_LIVE_PLOTS: weakref.WeakSet = weakref.WeakSet()  # plots that started a thread


@atexit.register
def _stop_threads_at_exit(timeout: float = 10.0) -> None:
    """Cancel pending redraws, finish the one in progress, stop and join background training."""
    for plot in list(_LIVE_PLOTS):
        plot._shut_down(timeout)


def _fmt_time(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}:{s % 60:02d}" if s >= 60 else f"{s} s"


class TrainingPlot(_Base):
    """Live loss/metric curves with a stop button and progress (rate, time left).

    Args:
        total_steps: steps expected (``fit`` tells it; needed for the time left elsewhere).
        min_interval: seconds between redraws (the last values are always drawn at the end).
        log_loss: draw the loss on a log scale.
        clock: seconds as a float, for the throttle and the rate (``time.monotonic``; tests
            pass a fake clock).
        timer: ``timer(delay, fn)`` makes the object that runs the trailing redraw, with
            ``start()`` and ``cancel()`` (``threading.Timer``; tests pass a fake one).

    Example:
        >>> import tapeviz as tv
        >>> plot = tv.TrainingPlot(total_steps=3)
        >>> for step in range(1, 4):
        ...     keep_going = plot.update(step, loss=1.0 / step, accuracy=0.3 * step)
        >>> plot.history["loss"]
        [1.0, 0.5, 0.3333333333333333]
    """

    def __init__(
        self,
        total_steps=None,
        min_interval: float = 0.25,
        log_loss: bool = False,
        clock=time.monotonic,
        timer=threading.Timer,
    ):
        self.total_steps, self.min_interval, self.log_loss = total_steps, min_interval, log_loss
        self._clock, self._make_timer = clock, timer
        self.history: dict = {"step": []}
        self.epochs: list = []  # (step, logs) at each epoch end
        self.stop_requested = False
        self.draw_count, self._last_draw, self._t0 = 0, None, None
        self._behind, self._timer, self._lock = False, None, threading.RLock()
        self._closed, self._fit_thread = False, None
        self.image = W.Image(format="png")
        self.progress = W.IntProgress(
            value=0, min=0, max=max(1, total_steps or 1), description="progress"
        )
        self.status = W.HTML("<i>waiting for the first step</i>")
        self.stop_button = W.Button(
            description="stop",
            icon="stop",
            button_style="danger",
            tooltip="stop training after the current step",
        )
        self.stop_button.on_click(self._on_stop)
        self.widget = W.VBox([W.HBox([self.stop_button, self.progress, self.status]), self.image])
        self._fig = self._axes = None
        self._lines: dict = {}

    # --- the callback protocol ------------------------------------------------------------
    def on_train_begin(self, logs=None):
        p = getattr(self, "params", None) or {}
        if p.get("epochs") and p.get("steps"):
            self.total_steps = int(p["epochs"]) * int(p["steps"])
            self.progress.max = max(1, self.total_steps)
        self.stop_requested = False
        self.stop_button.disabled, self.stop_button.description = False, "stop"
        self._t0 = self._clock()

    def on_batch_end(self, batch, logs=None):
        logs = dict(logs or {})
        step = logs.get("step", len(self.history["step"]) + 1)
        self.update(step, **{k: v for k, v in logs.items() if k not in _SKIP})

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        step = logs.get("step", self.history["step"][-1] if self.history["step"] else 0)
        with self._lock:
            self.epochs.append((step, {k: v for k, v in logs.items() if k not in _SKIP}))
        self.draw()

    def on_train_end(self, logs=None):
        self.stop_button.disabled = True  # nothing left to stop
        self.draw(final=True)

    # --- hand-written loops ---------------------------------------------------------------
    def update(self, step: int, **values) -> bool:
        """Record ``values`` (``loss=...``, metrics) at ``step``; redraw when due.

        Returns:
            False once the stop button was pressed (so a loop can ``break``).
        """
        with self._lock:  # the trailing redraw reads the history on its timer thread
            if self._t0 is None:
                self._t0 = self._clock()
            self._record(int(step), values)
            since = None if self._last_draw is None else self._clock() - self._last_draw
            if since is None or since >= self.min_interval:
                self.draw()
            else:  # a trailing redraw, so the last points show even if no update follows
                self._behind = True
                if self._timer is None and not self._closed:
                    self._start_timer(self.min_interval - since)
        return not self.stop_requested

    def _record(self, step: int, values: dict) -> None:
        n = len(self.history["step"])
        self.history["step"].append(step)
        for k, v in values.items():
            col = self.history.setdefault(k, [float("nan")] * n)
            col.append(float(v))
        for col in self.history.values():
            if len(col) < n + 1:
                col.append(float("nan"))

    def _start_timer(self, delay: float) -> None:
        self._timer = self._make_timer(delay, self._catch_up)
        self._timer.daemon = True  # never keeps the interpreter alive
        _LIVE_PLOTS.add(self)
        self._timer.start()

    def _catch_up(self) -> None:
        with self._lock:  # a final draw that came first has cleared _behind: keep it
            self._timer = None
            if self._behind and not self._closed:
                try:
                    self.draw()
                except Exception as e:  # on a timer thread: say so in place, never raise
                    self.status.value = error_html("TrainingPlot: the redraw failed", e)

    def _shut_down(self, timeout: float) -> None:
        """Interpreter exit: no more redraws from threads; background training stops."""
        with self._lock:  # waits for a redraw in progress
            self._closed = True
            timer, self._timer = self._timer, None
            if timer is not None:
                timer.cancel()
        if isinstance(timer, threading.Thread):  # cancelled: it ends at once
            timer.join(timeout)
        fit = self._fit_thread
        if fit is not None and fit.is_alive():
            self.stop_requested = True
            if getattr(self, "model", None) is not None:
                self.model.stop_training = True
            fit.join(timeout)

    def fit_in_thread(self, model, *args, **kwargs) -> threading.Thread:
        """Run ``model.fit(*args, callbacks=[self], **kwargs)`` in a background thread.

        While a cell runs ``fit`` directly, Jupyter delivers button clicks only when it
        ends; in a thread the kernel stays free, so the stop button takes effect at once.
        """
        kwargs["callbacks"] = [*kwargs.get("callbacks", []), self]
        kwargs.setdefault("verbose", 0)
        thread = threading.Thread(target=model.fit, args=args, kwargs=kwargs, daemon=True)
        self._fit_thread = thread
        _LIVE_PLOTS.add(self)
        thread.start()
        return thread

    def _on_stop(self, _button=None):
        self.stop_requested = True
        if getattr(self, "model", None) is not None:
            self.model.stop_training = True
        self.stop_button.disabled, self.stop_button.description = True, "stopping"
        self._status()

    # --- drawing ----------------------------------------------------------------------
    def draw(self, final: bool = False) -> None:
        """Redraw now: the curves, the progress bar and the status line."""
        with self._lock:  # the trailing redraw runs on a timer thread
            self._behind = False
            self.image.value = figure_png(self._figure())
            self.draw_count += 1
            self._status(final)
            # the interval runs from the end of a draw: a draw slower than min_interval (a
            # long history, a busy machine) must not make every step draw again
            self._last_draw = self._clock()

    def _keys(self):
        return [k for k in self.history if k != "step"]

    def _figure(self):
        from .axes import draw_curves

        if self._fig is None:
            self._fig = new_figure(8.0, 3.2, layout=None)
            self._fig.subplots_adjust(left=0.08, right=0.98, top=0.9, bottom=0.2, wspace=0.25)
        draw_curves(self._fig, self.history, self.epochs, self.log_loss)
        return self._fig

    def _status(self, final: bool = False) -> None:
        steps = self.history["step"]
        step = steps[-1] if steps else 0
        elapsed = self._clock() - self._t0 if self._t0 is not None else 0.0
        rate = len(steps) / elapsed if elapsed > 0 else 0.0
        parts = [f"step <b>{step}</b>" + (f" of {self.total_steps}" if self.total_steps else "")]
        parts.append(f"{rate:.1f} steps/s" if rate else "")
        if self.total_steps and rate and not final:
            parts.append(f"{_fmt_time(max(0, self.total_steps - step) / rate)} left")
        parts.append(f"elapsed {_fmt_time(elapsed)}")
        last = [(k, self.history[k][-1]) for k in self._keys() if self.history[k]]
        parts += [f"{html_text(k)} {v:.4g}" for k, v in last]
        if self.stop_requested:
            parts.append(f"<b style='color:{FAIL}'>stop requested</b>")
        elif final:
            parts.append("<b>done</b>")
        self.status.value = " &middot; ".join(p for p in parts if p)
        self.progress.max = max(1, self.total_steps or step or 1)
        self.progress.value = min(step, self.progress.max)

    def static_html(self) -> str:
        img = png_img_tag(self.image.value, "training curves") if self.image.value else ""
        return f"<div>{self.status.value}<br/>{img}</div>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        if self._behind:  # a fast loop ended between redraws: catch up now
            self.draw()
        n = len(self.history["step"])
        return static_bundle(self.widget, self.static_html(), f"TrainingPlot({n} steps)")
