"""TrainingPlot as a fit callback and in a hand-written loop: values recorded, the stop
button stops training, progress and a static picture."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv


def _problem(n=96):
    x, y = tv.data.two_moons(n, seed=0)
    tv.nn.set_seed(0)
    model = tv.nn.Sequential([tv.nn.Dense(8, "tanh"), tv.nn.Dense(2)])
    return model, x, y


class _ClickStopAt(tv.nn.Callback):
    def __init__(self, plot, step):
        self.plot, self.step = plot, step

    def on_batch_end(self, batch, logs=None):
        if logs["step"] == self.step:
            self.plot.stop_button.click()


class _Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class _Timer:
    """Records the trailing redraws a plot schedules; the test fires them."""

    made: list

    def __init__(self, delay, fn):
        self.delay, self.fn, self.started, self.cancelled = delay, fn, False, False
        _Timer.made.append(self)

    def start(self):
        self.started = True

    def cancel(self):
        self.cancelled = True


def _fake_plot(min_interval):
    clock, _Timer.made = _Clock(), []
    return tv.TrainingPlot(min_interval=min_interval, clock=clock, timer=_Timer), clock


def test_is_a_callback_and_records_every_step_of_fit():
    model, x, y = _problem()
    plot = tv.TrainingPlot(min_interval=0.0)
    assert isinstance(plot, tv.nn.Callback)
    history = model.fit(
        x, y, "softmax_cross_entropy", "adam", epochs=3, batch_size=32, verbose=0,
        callbacks=[plot], validation_data=(x[:32], y[:32]),
    )  # fmt: skip
    assert plot.total_steps == 9 and plot.history["step"] == list(range(1, 10))
    assert len(plot.history["loss"]) == 9 and len(plot.history["accuracy"]) == 9
    assert [s for s, _ in plot.epochs] == [3, 6, 9]
    np.testing.assert_allclose([logs["val_loss"] for _, logs in plot.epochs],
                               history["val_loss"])  # fmt: skip
    assert plot.progress.value == plot.progress.max == 9
    assert "done" in plot.status.value and "loss" in plot.status.value
    assert plot.image.value[:4] == b"\x89PNG"
    assert plot.draw_count == 9 + 3 + 1  # min_interval=0: every batch, every epoch, the end


def test_stop_button_stops_fit():
    model, x, y = _problem()
    plot = tv.TrainingPlot(clock=_Clock(), timer=_Timer)  # the clock stands still
    _Timer.made = []
    model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=5, batch_size=16, verbose=0,
              callbacks=[plot, _ClickStopAt(plot, 4)])  # fmt: skip
    assert model.stop_training and plot.stop_requested
    assert plot.history["step"][-1] == 4  # stopped after the current batch, of 30
    assert plot.stop_button.disabled and "stop requested" in plot.status.value
    assert [s for s, _ in plot.epochs] == [4]  # the stopped epoch still ends
    assert plot.draw_count == 3  # the first step, the epoch's end, the end of training


def test_update_in_a_minimize_loop_throttles_and_stops():
    w = tv.variable([3.0, -2.0])
    opt = tv.optim.SGD(0.1)
    _Timer.made = []
    plot = tv.TrainingPlot(total_steps=200, min_interval=60.0, clock=_Clock(), timer=_Timer)
    losses = []
    for step in range(1, 201):
        loss = opt.minimize(lambda: tv.sum(w * w), var_list=[w], return_cost=True)
        losses.append(float(loss.numpy()))
        if step == 50:
            plot.stop_button.click()
        if not plot.update(step, loss=losses[-1], norm=float(np.abs(w.numpy()).sum())):
            break
    assert step == 50 and plot.history["loss"] == losses
    assert plot.draw_count == 1  # the first update drew; the rest waited for min_interval
    assert len(_Timer.made) == 1 and _Timer.made[0].delay == 60.0  # one trailing redraw
    before = plot.image.value
    plot.draw(final=True)
    assert plot.image.value != before and "of 200" in plot.status.value
    assert plot.history["norm"][-1] < plot.history["norm"][0]


def test_metrics_that_start_late_are_padded():
    plot = tv.TrainingPlot(min_interval=0.0)
    plot.update(1, loss=1.0)
    plot.update(2, loss=0.5, accuracy=0.7)
    assert np.isnan(plot.history["accuracy"][0]) and plot.history["accuracy"][1] == 0.7
    assert len(plot.history["step"]) == len(plot.history["loss"]) == 2


def test_fit_in_thread_and_static_picture():
    model, x, y = _problem(64)
    plot = tv.TrainingPlot(min_interval=0.0)
    thread = plot.fit_in_thread(model, x, y, "softmax_cross_entropy", "adam", epochs=2,
                                batch_size=32)  # fmt: skip
    thread.join(timeout=120)
    assert not thread.is_alive() and plot.history["step"][-1] == 4
    bundle = plot._repr_mimebundle_()
    assert "data:image/png;base64," in bundle["text/html"]
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == plot.widget.model_id


def test_a_fast_loop_still_shows_its_last_step():
    plot, clock = _fake_plot(0.2)
    for step in range(50):  # 1 ms apart: far faster than one redraw per 0.2 s
        plot.update(step, loss=1.0 / (step + 1))
        clock.now += 0.001
    assert plot.draw_count == 1 and plot._behind  # the first update drew
    assert len(_Timer.made) == 1  # one trailing redraw, due 0.2 s after that draw
    (timer,) = _Timer.made
    assert timer.started and timer.delay == pytest.approx(0.2 - 0.001)
    clock.now += 0.2
    timer.fn()  # the trailing redraw catches up without another update
    assert plot.draw_count == 2 and not plot._behind
    assert "step <b>49</b>" in plot.status.value
    clock.now += 0.25
    plot.update(50, loss=0.01)  # 0.25 s after the last draw: due, drawn at once
    assert plot.draw_count == 3 and len(_Timer.made) == 1
    fast, _ = _fake_plot(60.0)
    for step in range(5):
        fast.update(step, loss=1.0)
    assert fast.draw_count == 1
    fast._repr_mimebundle_()  # displaying it draws what is pending
    assert fast.draw_count == 2 and "step <b>4</b>" in fast.status.value
    _Timer.made[0].fn()  # the timer, when it fires later, has nothing left to draw
    assert fast.draw_count == 2


def test_rate_and_time_left_come_from_the_clock():
    plot, clock = _fake_plot(0.0)
    plot.total_steps = 100
    plot.update(1, loss=1.0)  # the clock starts at the first update
    clock.now += 10.0
    plot.update(21, loss=0.5)  # 2 steps recorded in 10 s
    assert "0.2 steps/s" in plot.status.value
    assert "6:35 left" in plot.status.value  # 79 steps at 0.2 steps/s = 395 s
    assert "elapsed 10 s" in plot.status.value


def test_many_epochs_do_not_draw_a_curtain_of_lines():
    from tapeviz.widgets.common import new_figure
    from tapeviz.widgets.training.axes import draw_curves

    fig = new_figure(8, 3)
    history = {"step": list(range(600)), "loss": list(np.linspace(1, 0, 600))}
    draw_curves(fig, history, [(10 * (i + 1), {}) for i in range(60)])
    vertical = [ln for ln in fig.axes[0].lines if len(set(ln.get_xdata())) == 1]
    assert 0 < len(vertical) <= 20


def test_noisy_series_get_a_smoothed_trend_over_the_faint_raw_curve():
    from tapeviz.widgets.common import new_figure
    from tapeviz.widgets.training.axes import draw_curves, smooth

    rng = np.random.default_rng(0)
    noisy = list(np.linspace(1, 0, 200) + rng.normal(0, 0.2, 200))
    fig = new_figure(8, 3)
    draw_curves(fig, {"step": list(range(200)), "loss": noisy}, [])
    lines = {ln.get_label(): ln for ln in fig.axes[0].lines}
    assert set(lines) == {"loss (raw)", "loss (smoothed)"}
    trend = lines["loss (smoothed)"].get_ydata()
    assert np.std(np.diff(trend)) < np.std(np.diff(noisy)) / 5  # much calmer
    assert abs(trend[-1] - 0.0) < 0.15  # and it follows the data
    short = new_figure(8, 3)
    draw_curves(short, {"step": [0, 1, 2], "loss": [1.0, 0.5, 0.2]}, [])
    assert [ln.get_label() for ln in short.axes[0].lines] == ["loss"]  # few points: raw only
    assert smooth(np.array([2.0]))[0] == 2.0  # bias-corrected from the first value


def test_a_draw_slower_than_the_interval_does_not_make_every_step_draw(monkeypatch):
    """The interval runs from the end of a draw: when a draw takes 3 intervals (a long
    history, a busy machine), steps 1/4 interval apart draw once per 1 + 3 intervals of
    time, not at every step (which kept the kernel drawing)."""
    from tapeviz.widgets.training import widget as training

    plot, clock = _fake_plot(min_interval=1.0)
    drawn = training.figure_png

    def slow(fig):
        clock.now += 3.0
        return drawn(fig)

    monkeypatch.setattr(training, "figure_png", slow)
    for step in range(1, 41):
        clock.now += 0.25
        plot.update(step, loss=1.0 / step)
    # a draw, then 3 quiet steps (0.25, 0.5, 0.75 s since it ended), then the next draw: 10
    # of 40 (timed from the start of a draw, every step after the first drew: 40)
    assert plot.draw_count == 10, plot.draw_count
