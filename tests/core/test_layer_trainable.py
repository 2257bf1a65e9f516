"""Issue 33 item 15: ``layer.trainable = False`` on an ``nn`` layer changed nothing (a plain
attribute; the layer kept training, eagerly and under jit). As TensorFlow.js's
``Layer.trainable`` setter (tfjs-layers ``topology.ts``: it sets ``trainable`` on each of the
layer's trainable weights; ``Container`` does it for every layer), ``Module.trainable`` now
freezes and unfreezes the module's Variables and its sub-modules', ``summary()``'s counts follow,
and ``fit``/``minimize`` leave a frozen weight bit for bit unchanged. TensorFlow.js's
``variableGrads`` also prunes non-trainable variables from an explicit ``varList``; so does
``minimize`` now (before, ``var_list=[a, frozen]`` trained ``frozen``)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core import nn

X, Y = tv.data.two_moons(64, seed=0)


def _model(seed=0):
    model = nn.Sequential([nn.Dense(8, "tanh", seed=seed), nn.Dense(2, seed=seed + 1)])
    return model.build_for((2,))


def _values(module):
    return [v.numpy().copy() for v in module.parameters()]


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _summary(model):
    lines = []
    model.summary(print_fn=lines.append)
    return lines[0]


@pytest.mark.parametrize("jit", [False, True])
def test_a_frozen_layer_is_not_trained_by_fit_and_the_others_are(jit):
    model = _model()
    model.layers[0].trainable = False
    frozen, other = _values(model.layers[0]), _values(model.layers[1])
    model.fit(X, Y, "softmax_cross_entropy", "adam", epochs=2, verbose=0, jit=jit)
    assert _same(frozen, _values(model.layers[0]))
    assert not _same(other, _values(model.layers[1]))
    model.layers[0].trainable = True  # unfreezing trains it again
    model.fit(X, Y, "softmax_cross_entropy", "adam", epochs=1, verbose=0, jit=jit)
    assert not _same(frozen, _values(model.layers[0]))


def test_the_flag_reaches_the_variables_the_sublayers_and_the_summary():
    model = _model()
    assert "Trainable params: 42" in _summary(model)
    model.layers[0].trainable = False
    assert not model.layers[0].trainable and model.trainable
    assert [v.trainable for v in model.parameters()] == [False, False, True, True]
    assert "Trainable params: 18" in _summary(model)
    assert "Non-trainable params: 24" in _summary(model)
    assert model.trainable_parameters() == model.layers[1].parameters()
    model.trainable = False  # the model: every layer and weight
    assert not any(layer.trainable for layer in model.layers)
    assert "Trainable params: 0" in _summary(model) and "Non-trainable params: 42" in _summary(
        model
    )
    model.trainable = True
    assert all(v.trainable for v in model.parameters()) and model.layers[0].trainable
    assert "Trainable params: 42" in _summary(model)
    assert [n for n, _ in model.named_parameters()] == [
        "layers.0.kernel", "layers.0.bias", "layers.1.kernel", "layers.1.bias"
    ]  # fmt: skip


def test_a_layer_frozen_before_it_is_built_builds_frozen_weights():
    layer = nn.Dense(3, seed=4)
    layer.trainable = False
    model = nn.Sequential([layer, nn.Dense(2, seed=5)])
    model(np.zeros((1, 2), np.float32))
    assert not layer.kernel.trainable and not layer.bias.trainable
    before = _values(layer)
    model.fit(X, Y, "softmax_cross_entropy", "sgd", epochs=1, verbose=0)
    assert _same(before, _values(layer))
    layer.trainable = True
    assert layer.kernel.trainable and layer.bias.trainable


def test_a_weight_made_non_trainable_on_purpose_stays_so_after_unfreezing():
    class Scale(nn.Module):
        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1],), "ones")
            self.offset = tv.variable(np.zeros(input_shape[-1], np.float32), trainable=False)

        def forward(self, x):
            return x * self.w + self.offset

    layer = Scale().build_for((3,))
    layer.trainable = False
    layer.trainable = True
    assert layer.w.trainable and not layer.offset.trainable


def test_a_layer_added_to_a_frozen_model_is_frozen():
    model = _model()
    model.trainable = False
    model.add(nn.Dense(2, seed=9))
    assert not model.layers[-1].trainable


def test_a_fully_frozen_model_says_so_in_fit():
    model = _model()
    model.trainable = False
    with pytest.raises(ValueError, match="fit: every parameter of Sequential .* is frozen"):
        model.fit(X, Y, "softmax_cross_entropy", "sgd", verbose=0)
    unbuilt = nn.Sequential([nn.Dense(2)])
    unbuilt.trainable = False
    with pytest.raises(ValueError, match="is frozen"):
        unbuilt.fit(X, Y, "softmax_cross_entropy", "sgd", verbose=0)


@pytest.mark.parametrize("jit", [False, True])
def test_minimize_with_every_parameter_listed_leaves_the_frozen_ones(jit):
    model = _model()
    model.layers[1].trainable = False
    frozen, other = _values(model.layers[1]), _values(model.layers[0])
    opt = tv.optim.SGD(0.1)
    x = tv.tensor(X)

    def loss():
        return tv.mean(model(x) ** 2)

    for _ in range(3):
        opt.minimize(loss, var_list=model.parameters(), jit=jit)
    assert _same(frozen, _values(model.layers[1]))
    assert not _same(other, _values(model.layers[0]))


def test_minimize_prunes_a_non_trainable_variable_from_var_list():
    a, b = tv.variable([1.0]), tv.variable([2.0], trainable=False)
    tv.optim.SGD(0.1).minimize(lambda: tv.sum(a * a + b * b), var_list=[a, b])
    assert a.item() == pytest.approx(0.8) and b.item() == 2.0


class _FreezeAfterFirstBatch(nn.Callback):
    def __init__(self, layer):
        self.layer, self.after = layer, None

    def on_batch_end(self, batch, logs=None):
        if self.after is None:
            self.layer.trainable = False
            self.after = _values(self.layer)


def test_freezing_from_a_callback_stops_eager_training():
    model = _model()
    cb = _FreezeAfterFirstBatch(model.layers[0])
    model.fit(X, Y, "softmax_cross_entropy", "adam", epochs=2, batch_size=16, verbose=0,
              callbacks=[cb])  # fmt: skip
    assert _same(cb.after, _values(model.layers[0]))


def test_freezing_from_a_callback_stops_jit_training():
    """Under ``fit(jit=True)`` the program traced with the layer trainable must not be
    replayed after it is frozen (issue 33 item 5: the jit's guards, the lead's part)."""
    model = _model()
    cb = _FreezeAfterFirstBatch(model.layers[0])
    model.fit(X, Y, "softmax_cross_entropy", "adam", epochs=2, batch_size=16, verbose=0,
              callbacks=[cb], jit=True)  # fmt: skip
    assert _same(cb.after, _values(model.layers[0]))


def test_trainable_must_be_a_bool():
    with pytest.raises(TypeError, match="Dense 'dense.*': trainable must be True or False"):
        nn.Dense(2).trainable = "no"


class _UnfreezeAfterFirstBatch(nn.Callback):
    def __init__(self, layer):
        self.layer, self.at = layer, None

    def on_batch_end(self, batch, logs=None):
        if self.at is None:
            self.layer.trainable = True
            self.at = _values(self.layer)


@pytest.mark.parametrize("jit", [False, True])
def test_unfreezing_from_a_callback_resumes_training(jit):
    model = _model()
    model.layers[0].trainable = False
    cb = _UnfreezeAfterFirstBatch(model.layers[0])
    model.fit(X, Y, "softmax_cross_entropy", "adam", epochs=2, batch_size=16, verbose=0,
              callbacks=[cb], jit=jit)  # fmt: skip
    assert not _same(cb.at, _values(model.layers[0]))


def test_a_copy_freezes_and_unfreezes_its_own_weights_and_pickles():
    import copy
    import pickle

    model = _model()
    model.layers[0].trainable = False
    twin = copy.deepcopy(model)
    assert not twin.layers[0].trainable and not twin.layers[0].kernel.trainable
    twin.layers[0].trainable = True  # the copy's weights, not the original's
    assert twin.layers[0].kernel.trainable and not model.layers[0].kernel.trainable
    back = pickle.loads(pickle.dumps(model))
    back.layers[0].trainable = True
    assert back.layers[0].kernel.trainable and back.layers[0].bias.trainable
