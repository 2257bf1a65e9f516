"""TrainingPlot as a fit callback and in a hand-written loop: values recorded, the stop
button stops training, progress and a static picture."""

from __future__ import annotations

import numpy as np

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
    assert plot.image.value[:4] == b"\x89PNG" and plot.draw_count >= 9


def test_stop_button_stops_fit():
    model, x, y = _problem()
    plot = tv.TrainingPlot()
    model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=5, batch_size=16, verbose=0,
              callbacks=[plot, _ClickStopAt(plot, 4)])  # fmt: skip
    assert model.stop_training and plot.stop_requested
    assert plot.history["step"][-1] == 4  # stopped after the current batch, of 30
    assert plot.stop_button.disabled and "stop requested" in plot.status.value


def test_update_in_a_minimize_loop_throttles_and_stops():
    w = tv.variable([3.0, -2.0])
    opt = tv.optim.SGD(0.1)
    plot = tv.TrainingPlot(total_steps=200, min_interval=60.0)
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
    import time

    plot = tv.TrainingPlot(min_interval=0.2)
    for step in range(50):  # far faster than one redraw per 0.2 s
        plot.update(step, loss=1.0 / (step + 1))
    assert plot.draw_count == 1 and plot._behind
    time.sleep(0.6)  # the trailing redraw catches up without another update
    assert plot.draw_count == 2 and not plot._behind
    assert "step <b>49</b>" in plot.status.value
    fast = tv.TrainingPlot(min_interval=60.0)
    for step in range(5):
        fast.update(step, loss=1.0)
    fast._repr_mimebundle_()  # displaying it draws what is pending
    assert "step <b>4</b>" in fast.status.value


def test_many_epochs_do_not_draw_a_curtain_of_lines():
    from tapeviz.widgets._common import new_figure
    from tapeviz.widgets.training_plot_axes import draw_curves

    fig = new_figure(8, 3)
    history = {"step": list(range(600)), "loss": list(np.linspace(1, 0, 600))}
    draw_curves(fig, history, [(10 * (i + 1), {}) for i in range(60)])
    vertical = [ln for ln in fig.axes[0].lines if len(set(ln.get_xdata())) == 1]
    assert 0 < len(vertical) <= 20


def test_noisy_series_get_a_smoothed_trend_over_the_faint_raw_curve():
    from tapeviz.widgets._common import new_figure
    from tapeviz.widgets.training_plot_axes import draw_curves, smooth

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
