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
