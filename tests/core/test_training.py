"""fit: accuracy on real and synthetic data, callbacks, progress, custom ops, memory, errors."""

import gc
import sys

import numpy as np
import pytest

import tapeviz.core as tv
from tapeviz.core import nn


def _mlp(hidden=64, classes=3, act="relu"):
    return nn.Sequential(
        [nn.Dense(hidden, act, seed=1), nn.Dense(hidden, act, seed=2), nn.Dense(classes, seed=3)]
    )


def test_mlp_reaches_97_percent_on_spirals():
    x, y = tv.data.spirals(300, 3, seed=0)
    model = _mlp()
    h = model.fit(
        x,
        y,
        "softmax_cross_entropy",
        tv.optim.Adam(0.01),
        epochs=300,
        batch_size=100,
        verbose=0,
        seed=0,
    )
    acc = model.evaluate(x, y, "softmax_cross_entropy")["accuracy"]
    assert acc >= 0.97, acc
    assert h["loss"][-1] < 0.25 * h["loss"][0] and len(h["loss"]) == 300


def test_cnn_reaches_95_percent_test_accuracy_on_digits():
    pytest.importorskip("sklearn")
    x, y = tv.data.load_digits()
    xtr, xte, ytr, yte = tv.data.train_test_split(x, y, test_size=0.25, seed=0)
    model = nn.Sequential(
        [
            nn.Conv2D(8, 3, padding="same", activation="relu", seed=0),
            nn.MaxPool2D(),
            nn.Flatten(),
            nn.Dense(10, seed=1),
        ]
    )
    h = model.fit(
        xtr,
        ytr,
        "softmax_cross_entropy",
        tv.optim.Adam(0.01),
        epochs=10,
        batch_size=64,
        validation_data=(xte, yte),
        verbose=0,
        seed=0,
    )
    assert h["val_accuracy"][-1] >= 0.95, h["val_accuracy"]
    assert model.evaluate(xte, yte, "softmax_cross_entropy")["accuracy"] >= 0.95


def test_regression_with_mse_has_no_accuracy():
    x, y = tv.data.regression_1d(128, seed=0)
    model = nn.Sequential([nn.Dense(32, "tanh", seed=0), nn.Dense(1, seed=1)])
    h = model.fit(x, y, "mse", tv.optim.Adam(0.02), epochs=150, batch_size=32, verbose=0, seed=0)
    assert set(h) == {"loss"} and h["loss"][-1] < 0.2 * np.var(y)


def test_binary_from_logits_accuracy_on_two_moons():
    x, y = tv.data.two_moons(200, noise=0.1, seed=0)
    model = nn.Sequential([nn.Dense(16, "tanh", seed=0), nn.Dense(1, seed=1)])
    loss = "binary_cross_entropy_from_logits"
    h = model.fit(x, y, loss, tv.optim.Adam(0.05), epochs=100, batch_size=50, verbose=0, seed=0)
    assert h["accuracy"][-1] > 0.95
    probs = tv.sigmoid(model.predict(x)).numpy()[:, 0]
    assert np.mean((probs > 0.5) == y) > 0.95


class Recorder(nn.Callback):
    def __init__(self, stop_at=None):
        self.events, self.stop_at = [], stop_at

    def on_train_begin(self, logs=None):
        self.events.append(("train_begin", self.model is not None))

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(("epoch_begin", epoch))

    def on_batch_end(self, batch, logs=None):
        self.events.append(("batch_end", batch, logs["step"]))
        self.last_batch_logs = logs
        if self.stop_at is not None and logs["step"] == self.stop_at:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        self.events.append(("epoch_end", epoch))
        self.last_epoch_logs = logs

    def on_train_end(self, logs=None):
        self.events.append(("train_end",))


def test_callback_protocol_order_logs_and_validation():
    x, y = tv.data.two_moons(40, seed=0)
    rec = Recorder()
    model = _mlp(8, 2)
    h = model.fit(
        x,
        y,
        "softmax_cross_entropy",
        tv.optim.SGD(0.1),
        epochs=2,
        batch_size=16,
        validation_data=(x[:10], y[:10]),
        callbacks=[rec],
        verbose=0,
    )
    assert rec.events == [
        ("train_begin", True),
        ("epoch_begin", 0),
        ("batch_end", 0, 1),
        ("batch_end", 1, 2),
        ("batch_end", 2, 3),
        ("epoch_end", 0),
        ("epoch_begin", 1),
        ("batch_end", 0, 4),
        ("batch_end", 1, 5),
        ("batch_end", 2, 6),
        ("epoch_end", 1),
        ("train_end",),
    ]
    assert rec.model is model and rec.params["steps"] == 3
    assert {"loss", "accuracy", "step"} <= set(rec.last_batch_logs)
    assert isinstance(rec.last_batch_logs["loss"], float)
    assert set(h) == {"loss", "accuracy", "val_loss", "val_accuracy"} and h.epoch == [0, 1]
    assert all(len(v) == 2 for v in h.values())
    assert h["val_loss"][-1] == rec.last_epoch_logs["val_loss"]
    assert not model.training  # fit leaves the model in eval mode


def test_stop_training_stops_after_the_current_batch():
    x, y = tv.data.two_moons(40, seed=0)
    rec = Recorder(stop_at=4)
    h = _mlp(8, 2).fit(
        x, y, "softmax_cross_entropy", "sgd", epochs=10, batch_size=16, callbacks=[rec], verbose=0
    )
    steps = [e[2] for e in rec.events if e[0] == "batch_end"]
    assert steps == [1, 2, 3, 4] and rec.events[-1] == ("train_end",)
    assert len(h["loss"]) == 2


def test_verbose_progress_tqdm_and_fallback(capsys, monkeypatch):
    x, y = tv.data.two_moons(32, seed=0)
    model = _mlp(4, 2)
    model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=2, batch_size=16, verbose=1)
    err = capsys.readouterr().err
    assert "epoch 2/2" in err and "4/4" in err and "loss" in err
    model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=2, batch_size=16, verbose=2)
    assert capsys.readouterr().out.count("Epoch ") == 2
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # tqdm absent: plain prints
    model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=3, batch_size=16, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 3/3 - loss:" in out and "accuracy" in out
    model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=1, batch_size=16, verbose=0)
    assert capsys.readouterr() == ("", "")


def test_memory_stays_flat_over_thousands_of_steps():
    x, y = tv.data.two_moons(32, seed=1)
    model = nn.Sequential(
        [nn.Dense(8, "tanh", seed=0), nn.Dropout(0.1, seed=0), nn.Dense(2, seed=1)]
    )
    samples = {}

    class Probe(nn.Callback):
        def on_batch_end(self, batch, logs=None):
            if logs["step"] in (200, 1000, 3000):
                gc.collect()  # cycles other tests left: not this loop's doing
                samples[logs["step"]] = tv.memory()

    gc.collect()
    before = tv.memory()  # tapes earlier tests' widgets still hold are not counted
    model.fit(
        x,
        y,
        "softmax_cross_entropy",
        tv.optim.Adam(0.01),
        epochs=750,
        batch_size=8,
        callbacks=[Probe()],
        verbose=0,
    )
    assert set(samples) == {200, 1000, 3000}
    counts = {s: m["num_tensors"] for s, m in samples.items()}
    assert counts[200] == counts[1000] == counts[3000], counts
    for m in samples.values():  # no tape of the training loop is left alive
        assert (m["saved_bytes"], m["num_tapes"]) == (before["saved_bytes"], before["num_tapes"])
    assert samples[200]["num_bytes"] == samples[3000]["num_bytes"]


def test_save_load_after_training_reproduces_predictions(tmp_path):
    x, y = tv.data.spirals(60, seed=2)
    model = _mlp(16)
    model.fit(x, y, "softmax_cross_entropy", "adam", epochs=5, batch_size=20, verbose=0)
    model.save_weights(tmp_path / "mlp.npz")
    clone = _mlp(16).build_for((2,))
    clone.load_weights(tmp_path / "mlp.npz")
    np.testing.assert_array_equal(model.predict(x).numpy(), clone.predict(x).numpy())


def test_fit_bad_inputs_are_clear_errors():
    x, y = tv.data.two_moons(20, seed=0)
    model = _mlp(4, 2)
    fit = model.fit
    with pytest.raises(ValueError, match="same number of samples, got x .20, 2. and y .19,."):
        fit(x, y[:19], "softmax_cross_entropy", "sgd", verbose=0)
    with pytest.raises(ValueError, match="integer class ids of shape"):
        fit(x, y.reshape(20, 1), "softmax_cross_entropy", "sgd", verbose=0)
    with pytest.raises(ValueError, match="one-hot floats"):
        fit(x, y.astype(np.float32), "softmax_cross_entropy", "sgd", verbose=0)
    with pytest.raises(ValueError, match=r"Dense .*expected input of shape \(\.\.\., 2\)"):
        fit(np.zeros((20, 3), np.float32), y, "softmax_cross_entropy", "sgd", verbose=0)
    with pytest.raises(ValueError, match=r"loss per_sample must return a scalar.*\(20,\)"):

        def per_sample(labels, pred):
            return tv.sum(pred, axis=1)

        fit(x, y, per_sample, "sgd", batch_size=20, verbose=0)
    with pytest.raises(ValueError, match="the loss uses no trainable variable"):
        nn.Sequential([nn.ReLU()]).fit(x, x, "mse", "sgd", verbose=0)
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        fit(x, y, "softmax_cross_entropy", "sgd", metrics=["f1"], verbose=0)


# --- custom ops in a model train exactly like their built-in twins --------------------------
def _twin_curve(activation):
    x, y = tv.data.spirals(90, 3, seed=3)
    model = nn.Sequential([nn.Dense(16, seed=11), activation, nn.Dense(3, seed=12)])
    h = model.fit(
        x,
        y,
        "softmax_cross_entropy",
        tv.optim.Adam(0.02),
        epochs=15,
        batch_size=30,
        verbose=0,
        seed=0,
    )
    return np.array(h["loss"])


def test_custom_grad_activation_matches_builtin():
    @tv.custom_grad
    def my_tanh(x, save):
        y = tv.tanh(x)
        save([y])
        return {"value": y, "grad_func": lambda dy, saved: dy * (1 - saved[0] * saved[0])}

    np.testing.assert_allclose(_twin_curve(my_tanh), _twin_curve(nn.Tanh()), rtol=1e-5)


def test_differentiable_function_layer_matches_builtin():
    class NumpyTanh(tv.DifferentiableFunction):
        def __init__(self):
            super().__init__(save_outputs_for_backward=True)

        def forward(self, x):
            return np.tanh(x)

        def backward(self, dy, compute_gradients, y):
            return dy * (1 - y * y)

    np.testing.assert_allclose(_twin_curve(NumpyTanh()), _twin_curve(nn.Tanh()), rtol=1e-5)


def test_compiled_layer_matches_builtin():
    def tanh_kernel(x):
        return np.tanh(x)

    def tanh_grad(x, dy, y):
        return dy * (1 - y * y)

    layer = tv.CompiledLayer(tanh_kernel, gradient=tanh_grad)
    np.testing.assert_allclose(_twin_curve(layer), _twin_curve(nn.Tanh()), rtol=1e-5)
