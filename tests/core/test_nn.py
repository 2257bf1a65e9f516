"""Layers, Module, Sequential, modes, summary and weights on disk."""

import numpy as np
import pytest

import tapeviz.core as tv
from tapeviz.core import nn


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_exported_as_tv_nn():
    import tapeviz  # the widgets package re-exports the training API

    assert tapeviz.nn.Dense is nn.Dense and tapeviz.optim.Adam is tv.optim.Adam
    assert tapeviz.losses is tv.losses and tapeviz.data.spirals is tv.data.spirals
    assert {"nn", "optim", "losses", "data"} <= set(tv.__all__)


def test_dense_infers_input_size_and_computes_affine():
    layer = nn.Dense(4, activation="relu", seed=1)
    x = _x(5, 3)
    y = layer(x)
    assert layer.kernel.shape == (3, 4) and layer.bias.shape == (4,)
    expected = np.maximum(x @ layer.kernel.numpy() + layer.bias.numpy(), 0)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    assert layer.kernel.name == f"{layer.name}/kernel" and layer.kernel.trainable
    assert layer.output_shape == (None, 4)


def test_dense_float64_input_makes_float64_weights():
    layer = nn.Dense(2)
    assert layer(_x(3, 2).astype(np.float64)).dtype == np.float64
    assert layer.kernel.dtype == np.float64


def test_dense_wrong_input_shape_is_a_clear_error():
    layer = nn.Dense(4)
    layer(_x(2, 3))
    with pytest.raises(ValueError, match=r"Dense 'dense.*expected input of shape \(\.\.\., 3\)"):
        layer(_x(2, 5))
    with pytest.raises(ValueError, match="rank >= 2"):
        nn.Dense(3)(_x(4))


def test_bad_layer_arguments():
    with pytest.raises(ValueError, match="units must be a positive int"):
        nn.Dense(0)
    with pytest.raises(ValueError, match="unknown activation 'relux'"):
        nn.Dense(2, activation="relux")
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same'"):
        nn.Conv2D(2, 3, padding="full")
    with pytest.raises(ValueError, match=r"rate must be in \[0, 1\)"):
        nn.Dropout(1.5)


def test_conv2d_matches_tv_conv2d_and_checks_rank():
    conv = nn.Conv2D(5, 3, strides=1, padding="same", activation="tanh", seed=0)
    x = _x(2, 6, 6, 3)
    y = conv(x)
    assert conv.kernel.shape == (3, 3, 3, 5) and y.shape == (2, 6, 6, 5)
    ref = tv.tanh(tv.conv2d(tv.tensor(x), conv.kernel, 1, "same") + conv.bias)
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"Conv2D .*expected input of shape \(batch, height"):
        conv(_x(2, 6, 6, 4))
    with pytest.raises(ValueError, match="rank 4"):
        nn.Conv2D(2, 3)(_x(2, 6, 6))


def test_pool_flatten_shapes():
    x = _x(2, 6, 6, 3)
    assert nn.MaxPool2D()(x).shape == (2, 3, 3, 3)
    assert nn.AvgPool2D(3)(x).shape == (2, 2, 2, 3)
    assert nn.Flatten()(x).shape == (2, 108)
    with pytest.raises(ValueError, match="MaxPool2D .*rank 4"):
        nn.MaxPool2D()(_x(2, 6))


def test_activation_layers():
    x = _x(3, 4)
    for layer, fn in [
        (nn.ReLU(), tv.relu),
        (nn.Tanh(), tv.tanh),
        (nn.Sigmoid(), tv.sigmoid),
        (nn.Softmax(), tv.softmax),
        (nn.Activation("elu"), tv.elu),
    ]:
        np.testing.assert_allclose(layer(x).numpy(), fn(tv.tensor(x)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        nn.LeakyReLU(alpha=0.1)(x).numpy(), tv.leaky_relu(tv.tensor(x), 0.1).numpy()
    )
    assert nn.ReLU().parameters() == []


def test_dropout_train_and_eval_modes():
    layer = nn.Dropout(0.5, seed=0)
    x = np.ones((200, 50), np.float32)
    y = layer(x).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    assert not np.array_equal(layer(x).numpy(), y)  # a fresh mask each call
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), x)
    model = nn.Sequential([nn.Dense(3), nn.Dropout(0.2)])
    model.eval()
    assert not model.training and not model.layers[1].training
    model.train()
    assert model.layers[1].training


def test_sequential_parameters_repr_and_summary(capsys):
    model = nn.Sequential([nn.Dense(8, "relu"), nn.Dense(3)], name="mlp")
    with pytest.raises(ValueError, match="not built yet"):
        model.summary()
    model.summary(input_shape=(2,))
    out = capsys.readouterr().out
    assert 'Model: "mlp"' in out and "(None, 8)" in out and "Total params: 51" in out
    assert [p.shape for p in model.parameters()] == [(2, 8), (8,), (8, 3), (3,)]
    names = [k for k, _ in model.named_parameters()]
    assert names == ["layers.0.kernel", "layers.0.bias", "layers.1.kernel", "layers.1.bias"]
    text = repr(model)
    assert "Sequential('mlp'" in text and "Dense(8, activation='relu')" in text
    assert model.count_params() == 51 and len(model) == 2


def test_lambda_wraps_any_callable_and_its_parameters():
    class Scale:
        def __init__(self):
            self.w = tv.variable([2.0])

        def parameters(self):
            return [self.w]

        def __call__(self, x):
            return x * self.w

    scale = Scale()
    model = nn.Sequential([lambda x: x + 1, scale, nn.Dense(1)])
    y = model(np.zeros((2, 1), np.float32))
    assert y.shape == (2, 1)
    assert model.parameters()[0] is scale.w and len(model.parameters()) == 3
    assert isinstance(model.layers[0], nn.Lambda) and model.layers[0].name.startswith("lambda")
    with pytest.raises(TypeError, match="must return a Tensor"):
        nn.Lambda(lambda x: 3)(np.zeros((1, 1), np.float32))
    with pytest.raises(TypeError, match="expected a layer or a callable"):
        nn.Sequential([3])


def test_layer_calls_are_name_scoped_on_the_tape():
    model = nn.Sequential([nn.Dense(2, name="d1"), nn.Dense(1, name="d2")], name="m")
    with tv.Tape() as tape:
        model(_x(3, 2))
    scopes = {n.scope for n in tape.nodes}
    assert {"m/d1", "m/d2"} <= scopes


def test_custom_module_subclass():
    class Affine(nn.Module):
        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1],), "ones")
            self.b = self.add_weight("b", (1,), "zeros")

        def forward(self, x):
            return x * self.w + self.b

    m = Affine()
    np.testing.assert_array_equal(m(np.ones((2, 3), np.float32)).numpy(), np.ones((2, 3)))
    assert [k for k, _ in m.named_parameters()] == ["w", "b"]
    with pytest.raises(ValueError, match=r"expected input of shape \(None, 3\)"):
        m(np.ones((2, 4), np.float32))


def test_set_seed_makes_initial_weights_reproducible():
    nn.set_seed(3)
    a = nn.Dense(4)(np.ones((1, 3), np.float32)).numpy()
    nn.set_seed(3)
    b = nn.Dense(4)(np.ones((1, 3), np.float32)).numpy()
    np.testing.assert_array_equal(a, b)


def _model():
    return nn.Sequential([nn.Dense(4, "tanh"), nn.Dense(2)]).build_for((3,))


def test_save_and_load_weights_round_trip(tmp_path):
    src, dst = _model(), _model()
    path = tmp_path / "weights.npz"
    src.save_weights(path)
    dst.load_weights(path)
    for a, b in zip(src.parameters(), dst.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with np.load(path, allow_pickle=False) as f:
        assert sorted(f.files) == sorted(k for k, _ in src.named_parameters())


def _snapshot(model):
    return [p.numpy().copy() for p in model.parameters()]


def test_load_weights_mismatch_or_corrupt_leaves_model_unchanged(tmp_path):
    model = _model()
    before = _snapshot(model)
    other = nn.Sequential([nn.Dense(4, "tanh"), nn.Dense(5)]).build_for((3,))
    other.save_weights(tmp_path / "shape.npz")
    with pytest.raises(ValueError, match=r"layers.1.kernel.*shape \(4, 5\).*expects \(4, 2\)"):
        model.load_weights(tmp_path / "shape.npz")
    nn.Sequential([nn.Dense(4)]).build_for((3,)).save_weights(tmp_path / "keys.npz")
    with pytest.raises(ValueError, match="missing.*layers.1.kernel"):
        model.load_weights(tmp_path / "keys.npz")
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 definitely not a zip")
    with pytest.raises(ValueError, match="not a readable weights file"):
        model.load_weights(tmp_path / "bad.npz")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="not a readable weights file"):
        model.load_weights(tmp_path / "obj.npy")
    with pytest.raises(FileNotFoundError, match="no such file"):
        model.load_weights(tmp_path / "missing.npz")
    for a, b in zip(before, _snapshot(model)):
        np.testing.assert_array_equal(a, b)


def test_load_weights_from_a_npy_file_says_it_expects_an_npz(tmp_path):
    model = tv.nn.Sequential([tv.nn.Dense(2)]).build_for((3,))
    path = tmp_path / "w.npy"
    np.save(path, np.zeros(3))
    with pytest.raises(
        ValueError, match=r"load_weights: .*w\.npy.*single array.*expected an \.npz"
    ):
        model.load_weights(path)


def test_weights_need_a_built_model(tmp_path):
    with pytest.raises(ValueError, match="has no weights yet"):
        nn.Sequential([nn.Dense(2)]).save_weights(tmp_path / "w.npz")
