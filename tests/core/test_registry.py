"""The three registries: kernels, gradients, backends; and kernel coverage of every primitive."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeviz.core as core
from tapeviz.core.registry import kernel_names as K
from tapeviz.core.registry.gradients import gradient_table
from tapeviz.core.registry.kernels import kernel_table

# Kernels with no gradient, on purpose: comparisons and one_hot have bool/int or constant
# outputs.
NOT_DIFFERENTIABLE = {
    K.GREATER,
    K.GREATER_EQUAL,
    K.LESS,
    K.LESS_EQUAL,
    K.EQUAL,
    K.NOT_EQUAL,
    K.ONE_HOT,
    K.BITWISE_AND,
    K.BITWISE_OR,
    K.BITWISE_XOR,
    K.INVERT,
    K.LEFT_SHIFT,
    K.RIGHT_SHIFT,
}
PRIMITIVES = sorted(v for k, v in vars(K).items() if k.isupper() and isinstance(v, str))


@pytest.fixture
def fake_backend():
    core.register_backend("fake", priority=-5)
    yield "fake"
    core.unregister_backend("fake")


def _cube(inputs, attrs):
    return inputs["x"] ** 3


@pytest.mark.parametrize("name", PRIMITIVES)
def test_every_primitive_has_a_numpy_kernel_and_a_gradient(name):
    assert callable(core.get_kernel(name, "numpy").fn)
    if name in NOT_DIFFERENTIABLE:
        assert core.get_gradient(name) is None
    else:
        assert core.get_gradient(name) is not None, f"kernel {name!r} has no gradient"


def test_not_differentiable_list_is_explicit_and_current():
    assert NOT_DIFFERENTIABLE <= set(PRIMITIVES)
    assert set(gradient_table()) >= set(PRIMITIVES) - NOT_DIFFERENTIABLE


def test_register_run_unregister_kernel():
    core.register_kernel("Cube", "numpy", _cube)
    try:
        assert core.get_kernel("Cube").fn is _cube
        assert "Cube" in [c.kernel_name for c in core.kernels_for_backend("numpy")]
        out = core.run_kernel("Cube", {"x": core.tensor([2.0, -1.0])})
        np.testing.assert_allclose(out.numpy(), [8.0, -1.0])
    finally:
        core.unregister_kernel("Cube", "numpy")
    assert ("Cube", "numpy") not in kernel_table()
    with pytest.raises(KeyError, match="kernel 'Cube' is not registered for any backend"):
        core.run_kernel("Cube", {"x": core.tensor([2.0])})
    with pytest.raises(KeyError, match="'Cube'"):
        core.unregister_kernel("Cube", "numpy")


def test_kernels_for_backend_is_sorted_and_complete():
    names = [c.kernel_name for c in core.kernels_for_backend("numpy")]
    assert names == sorted(names)
    assert set(PRIMITIVES) <= set(names)
    assert all(c.backend_name == "numpy" for c in core.kernels_for_backend("numpy"))


def test_missing_kernel_names_backend_and_where_it_exists(fake_backend):
    core.register_kernel("Cube", "numpy", _cube)
    try:
        with core.backend("fake"):
            with pytest.raises(KeyError) as err:
                core.run_kernel("Cube", {"x": core.tensor([1.0])})
        expected = "kernel 'Cube' is not registered for backend 'fake' (registered for: numpy)"
        assert err.value.args[0] == expected
        with core.backend("fake"), pytest.raises(KeyError, match="'Add' .* 'fake' .*numpy"):
            core.add(core.tensor([1.0]), core.tensor([2.0]))
        with pytest.raises(KeyError, match="registered for: numpy"):
            core.get_kernel("Cube", "fake")
    finally:
        core.unregister_kernel("Cube", "numpy")


def test_kernel_registered_on_a_new_backend_runs_there(fake_backend):
    core.register_kernel("Tanh", "fake", lambda i, a: np.zeros_like(i["x"]))
    assert [c.kernel_name for c in core.kernels_for_backend("fake")] == ["Tanh"]
    with core.backend("fake"):
        assert core.get_backend() == "fake"
        with core.Tape() as tape:
            y = core.tanh(core.tensor([1.0]))
    assert y.numpy().tolist() == [0.0]
    assert tape.nodes[0].backend == "fake"
    assert core.get_backend() == "numpy"


def test_unregister_backend_drops_its_kernels():
    core.register_backend("temp", priority=-3)
    core.register_kernel("Tanh", "temp", lambda i, a: i["x"])
    core.unregister_backend("temp")
    assert "temp" not in core.list_backends()
    assert ("Tanh", "temp") not in kernel_table()
    with pytest.raises(ValueError, match="'temp' is not registered"):
        core.unregister_backend("temp")


def test_unknown_backend_errors_name_the_registered_ones():
    with pytest.raises(ValueError, match=r"backend 'nope' is not registered \(registered: .*numpy"):
        core.set_backend("nope")
    with pytest.raises(ValueError, match="'nope'"):
        with core.backend("nope"):
            pass
    assert core.get_backend() == "numpy"


def test_set_backend_is_global_and_backend_scope_restores(fake_backend):
    before = core.get_backend()
    core.set_backend("fake")
    try:
        assert core.get_backend() == "fake"
        with core.backend("numpy"):
            assert core.get_backend() == "numpy"
        assert core.get_backend() == "fake"
    finally:
        core.set_backend(before)
    with pytest.raises(RuntimeError):
        with core.backend("fake"):
            raise RuntimeError("boom")
    assert core.get_backend() == before


def test_list_backends_by_priority(fake_backend):
    names = core.list_backends()
    assert names.index("numpy") < names.index("fake")
    core.register_backend("high", priority=100)
    try:
        assert core.list_backends()[0] == "high"
    finally:
        core.unregister_backend("high")


def test_register_kernel_checks_its_arguments():
    with pytest.raises(TypeError, match="fn must be callable"):
        core.register_kernel("X", "numpy", 3)
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        core.register_kernel("", "numpy", _cube)


def test_register_gradient_warns_when_replacing_and_unregister():
    core.register_kernel("Cube", "numpy", _cube)
    try:
        core.register_gradient("Cube", lambda dy, s, a: {"x": lambda: dy * 3 * s[0] ** 2}, ["x"])
        with pytest.warns(UserWarning, match="overriding the gradient of kernel 'Cube'"):
            cfg = core.register_gradient("Cube", lambda dy, s, a: {"x": lambda: dy * 0}, ["x"])
        assert core.get_gradient("Cube") is cfg and cfg.inputs_to_save == ("x",)
        core.unregister_gradient("Cube")
        assert core.get_gradient("Cube") is None
        with pytest.raises(KeyError, match="no gradient is registered for kernel 'Cube'"):
            core.unregister_gradient("Cube")
    finally:
        core.unregister_kernel("Cube", "numpy")


def test_register_gradient_checks_its_arguments():
    with pytest.raises(TypeError, match="grad_fn must be callable"):
        core.register_gradient("Cube", None)
    with pytest.raises(TypeError, match="inputs_to_save must be a sequence"):
        core.register_gradient("Cube", lambda dy, s, a: {}, "x")
    assert core.get_gradient("Cube") is None


def _double(dy, saved, attrs):
    return {"x": lambda: dy * 2.0}


def test_gradient_override_is_scoped():
    original = core.get_gradient("Tanh")
    x = core.tensor([0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a scoped override does not warn
        with core.gradient_override("Tanh", _double) as cfg:
            assert core.get_gradient("Tanh") is cfg
            assert cfg.outputs_to_save == original.outputs_to_save
            assert core.grad(core.tanh)(x).numpy().tolist() == [2.0]
    assert core.get_gradient("Tanh") is original
    with pytest.raises(ZeroDivisionError):
        with core.gradient_override("Tanh", _double):
            raise ZeroDivisionError("inside the override")
    assert core.get_gradient("Tanh") is original
    np.testing.assert_allclose(core.grad(core.tanh)(x).numpy(), 1 - np.tanh(0.5) ** 2, 1e-6)


def test_gradient_override_of_a_kernel_without_gradient_is_removed_after():
    with core.gradient_override("Greater", lambda dy, s, a: {}):
        assert core.get_gradient("Greater") is not None
    assert core.get_gradient("Greater") is None


def test_node_recorded_under_override_keeps_it_and_is_marked():
    x = core.tensor([0.5])
    with core.Tape() as tape:
        tape.watch(x)
        with core.gradient_override("Tanh", _double):
            y = core.tanh(x)
    assert tape.nodes[0].style == "override"
    assert tape.gradient(y, x).numpy().tolist() == [2.0]


def test_multi_output_kernel_returns_a_tuple():
    parts = core.run_kernel(
        "Split", {"x": core.tensor([1.0, 2.0, 3.0])}, {"axis": 0, "sizes": (1, 2)}
    )
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(1,), (2,)]


def test_register_gradient_for_an_unknown_kernel_raises_naming_the_nearest():
    """A typo ("Reul") would register a gradient nothing runs: it raises, naming the nearest
    registered kernels (difflib), and leaves the registry as it was."""
    before = set(gradient_table())
    with pytest.raises(KeyError, match=r"no kernel named 'Reul'.*did you mean 'Relu'"):
        core.register_gradient("Reul", lambda dy, s, a: {"x": lambda: dy})
    with pytest.raises(KeyError, match=r"did you mean 'MatrixInverse'"):
        core.register_gradient("MatrixInvrse", lambda dy, s, a: {})
    with pytest.raises(KeyError, match=r"register the kernel first") as info:
        core.register_gradient("Qwxyz", lambda dy, s, a: {})
    assert "did you mean" not in str(info.value)
    assert not str(info.value).startswith('"')  # the message as written, not quoted
    assert set(gradient_table()) == before
    core.register_kernel("Cube27", "numpy", _cube)  # registered first: accepted
    try:
        core.register_gradient("Cube27", lambda dy, s, a: {"x": lambda: dy * 3 * s[0] ** 2}, ["x"])
    finally:
        core.unregister_gradient("Cube27")
        core.unregister_kernel("Cube27", "numpy")
