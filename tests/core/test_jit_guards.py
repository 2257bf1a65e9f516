"""tv.jit never replays a stale program (issue 33): one test per class of world change.

Each test calls the jitted function, changes what its code reads (an argument's identity, a
global behind a nested helper, a static value's sign, a copy, a ``trainable`` flag, a name)
and compares the next call with eager tapeviz bit for bit (or with numpy / PyTorch where a
value is known). Each of these failed on the code before issue 33.
"""

from __future__ import annotations

import copy
import functools
import gc
import tracemalloc

import numpy as np
import pytest
import torch

import tapeviz as tv


def same(a, b) -> bool:
    """Bit for bit: the same dtype, shape and bytes (NaNs and -0.0 included)."""
    a = a.numpy() if isinstance(a, tv.Tensor) else np.asarray(a)
    b = b.numpy() if isinstance(b, tv.Tensor) else np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def compiled(j, *args):
    """The second call's result: the first traces (eager), the second runs the program."""
    j(*args)
    out = j(*args)
    assert j.traces == 1
    return out


# --- 1. an argument is never merged with a closure tensor --------------------------------
def test_an_argument_that_is_a_closure_tensor_keeps_its_own_identity():
    ref = tv.tensor([2.0, 3.0])
    f = lambda x: tv.sum((x - ref) ** 2)
    j = tv.jit(f)
    assert j(ref).item() == 0.0
    x = tv.tensor([10.0, 100.0])
    assert same(j(x), f(x)) and j(x).item() == 9473.0


def test_a_variable_argument_that_is_also_read_from_the_closure():
    ref = tv.variable([2.0, 3.0])
    f = lambda v: tv.sum((v - ref) ** 2)
    j = tv.jit(f)
    assert j(ref).item() == 0.0
    other = tv.variable([7.0, 3.0])
    assert j(other).item() == 25.0 and j(ref).item() == 0.0


def test_a_slice_or_a_shared_array_of_a_closure_tensor_as_argument():
    big = tv.tensor([1.0, 2.0, 3.0, 4.0])
    f = lambda x: tv.sum(x * big[:2])
    j = tv.jit(f)
    assert same(j(big[:2]), f(big[:2]))  # was refused: "a view of a traced value"
    arr = np.arange(4.0)
    c = tv.tensor(arr)  # the tensor wraps arr's memory or a copy: either way, no merging
    g = lambda x: tv.sum(x * c)
    jg = tv.jit(g)
    assert same(jg(arr), g(tv.tensor(arr))) and same(jg(arr + 1), g(tv.tensor(arr + 1)))


# --- 2. a rebound global is seen at every depth -------------------------------------------
scale = 2.0


def _inner(x):
    return x * scale


def _d1(x):
    return _d2(x)


def _d2(x):
    return _d3(x)


def _d3(x):
    return _d4(x)


def _d4(x):
    return _d5(x)


def _d5(x):
    return x * scale


class _Scaler:
    def __call__(self, x):
        return self.apply(x)

    def apply(self, x):
        return x * scale


@pytest.fixture
def rebind():
    def set_scale(value):
        global scale
        scale = value

    yield set_scale
    set_scale(2.0)


def _cube_sum(x):
    return tv.sum(x * x * _inner(x))


_ways = {
    "nested jit": lambda: (lambda g: lambda x: g(x) + 1)(tv.jit(_inner)),
    "partial": lambda: functools.partial(lambda x, k: _inner(x) * k, k=1.0),
    "callable object": lambda: _Scaler(),
    "bound method": lambda: _Scaler().apply,
    "five helpers deep": lambda: _d1,
    "grad through nested jit": lambda: tv.grad((lambda g: lambda x: tv.sum(g(x) * x))(
        tv.jit(_inner))),
}  # fmt: skip


@pytest.mark.parametrize("way", list(_ways))
def test_a_rebound_global_is_seen_through(way, rebind):
    f = _ways[way]()
    j = tv.jit(f)
    x = tv.tensor([1.0, 2.0])
    assert same(j(x), f(x))
    rebind(3.0)
    assert same(j(x), f(x))
    rebind(-0.0)
    assert same(j(x), f(x))


def test_jit_of_grad_through_a_nested_jit_gives_the_new_value(rebind):
    g = tv.jit(_inner)
    h = tv.jit(tv.grad(lambda x: tv.sum(g(x) * x * x)))
    x = tv.tensor([1.0, 2.0])
    h(x)
    rebind(3.0)  # d/dx (3 x^3) = 9 x^2
    assert np.array_equal(h(x).numpy(), [9.0, 36.0])


@tv.custom_grad
def _scaled(x, save):
    return x * scale, lambda dy, saved: dy * scale


def _uses_scaled(x):
    return tv.sum(_scaled(x) * x)


def test_a_custom_grad_function_is_followed_to_the_users_code(rebind):
    f = _uses_scaled  # reaches the user's code only through tapeviz's custom_grad wrapper
    j, jg = tv.jit(f), tv.jit(tv.grad(f))
    x = tv.tensor([1.0, 2.0])
    j(x), jg(x)
    rebind(5.0)
    assert same(j(x), f(x)) and same(jg(x), tv.grad(f)(x))


# --- 3. statics and closure numbers compare by type and bits --------------------------------
def test_negative_zero_is_not_zero():
    j = tv.jit(lambda y, s: tv.arctan2(y, s))
    y = tv.tensor([0.0])
    assert j(y, 0.0).item() == 0.0
    assert j(y, -0.0).item() == pytest.approx(np.pi)  # numpy: arctan2(0, -0) = pi
    r = tv.jit(lambda x, s: x / s)
    one = tv.tensor([1.0])
    assert r(one, 0.0).item() == np.inf and r(one, -0.0).item() == -np.inf


def test_a_closure_number_rebound_to_negative_zero():
    s = 0.0
    f = lambda x: x / s
    j = tv.jit(f)
    x = tv.tensor([1.0])
    j(x)
    s = -0.0
    assert same(j(x), f(x)) and j(x).item() == -np.inf


def test_int_float_and_bool_statics_are_distinct():
    f = lambda x, t: x + t[0]
    j = tv.jit(f, static_argnums=(1,))
    x = tv.tensor([1, 2], dtype="int32")
    for t in [(1,), (1.0,), (True,)]:
        assert same(j(x, t), f(x, t)), t
    assert j.traces == 3


def test_nan_static_runs_its_program_again():
    j = tv.jit(lambda x, s: x + s)
    x = tv.tensor([1.0])
    j(x, float("nan"))
    j(x, float("nan"))  # another NaN object: the same static
    assert j.traces == 1


# --- 4. copies made inside stay traced ------------------------------------------------------
@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_a_copy_of_the_argument_is_not_baked_in(how):
    f = lambda x: how(x) * 2
    j = tv.jit(f)
    j(tv.tensor([1.0, 2.0]))
    x = tv.tensor([10.0, 20.0])
    assert same(j(x), f(x))


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_a_copy_of_a_variable_reads_its_value_when_the_program_runs(how):
    v = tv.variable([1.0, 2.0])
    f = lambda: how(v) * 2
    j = tv.jit(f)
    j()
    v.assign([10.0, 20.0])
    assert same(j(), f()) and np.array_equal(j().numpy(), [20.0, 40.0])


def test_a_copy_of_a_variable_taken_before_an_assign_keeps_the_old_value():
    v = tv.variable([1.0, 2.0])

    def f(x):
        old = copy.copy(v)
        v.assign(v + x)
        return old * 1 + v

    j = tv.jit(f)
    x = tv.tensor([1.0, 1.0])
    assert np.array_equal(j(x).numpy(), [3.0, 5.0])  # traced: old [1, 2], v [2, 3]
    assert np.array_equal(j(x).numpy(), [5.0, 7.0])  # compiled: old [2, 3], v [3, 4]


# --- 5. a frozen Variable stays frozen under jit ----------------------------------------
def test_minimize_with_jit_stops_training_a_variable_made_untrainable():
    def run(jit):
        a, b = tv.variable([1.0, 2.0]), tv.variable([3.0])
        opt = tv.optim.SGD(0.1)
        loss = lambda: tv.sum((a * b - 1.0) ** 2)
        for step in range(4):
            if step == 2:
                b.trainable = False
            opt.minimize(loss, jit=jit)  # every trainable variable the loss uses
        return a.numpy(), b.numpy()

    (a0, b0), (a1, b1) = run(False), run(True)
    assert same(a0, a1) and same(b0, b1)


def test_fit_with_jit_keeps_a_frozen_variable_frozen():
    x, y = tv.data.spirals(n_samples=64, n_classes=3, seed=0)

    def run(jit):
        tv.nn.set_seed(0)
        model = tv.nn.Sequential([tv.nn.Dense(8, "relu"), tv.nn.Dense(3)])

        class Freeze(tv.nn.Callback):
            def on_epoch_end(self, epoch, logs=None):
                model.parameters()[0].trainable = False  # the first layer's kernel

        model.fit(x, y, "softmax_cross_entropy", "sgd", epochs=3, batch_size=32, verbose=0,
                  seed=0, shuffle=False, jit=jit, callbacks=[Freeze()])  # fmt: skip
        return [p.numpy() for p in model.parameters()]

    for p, q in zip(run(False), run(True)):
        assert same(p, q)


# --- 6. cached programs keep no call's tensors; the cache is bounded ---------------------
def test_cached_programs_keep_no_tensors_of_the_call_that_traced_them():
    x = tv.tensor(np.ones(250_000, np.float32))
    j = tv.jit(lambda x, s: tv.grad(lambda x: tv.sum(tv.tanh(x * s) * x))(x), cache_size=64)
    j(x, 0.5)
    gc.collect()
    tracemalloc.start()
    try:
        for i in range(10):
            j(x, 1.0 + i)
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert j.traces == 11
    assert kept < 1_000_000, kept  # ten programs; one 250k-float32 array is 1 MB


def test_the_cache_keeps_the_most_recently_used_signatures():
    j = tv.jit(lambda x, k: x * k, cache_size=3)
    x = tv.tensor([1.0])
    for k in range(5):
        j(x, k)
    assert len(j._cache) == 3 and j.traces == 5
    j(x, 4)
    assert j.traces == 5  # still cached
    j(x, 0)
    assert j.traces == 6  # dropped, traced again
    with pytest.raises(ValueError, match="cache_size must be a positive int"):
        tv.jit(lambda x: x, cache_size=0)


# --- 7. higher order under jit --------------------------------------------------------------
@pytest.mark.parametrize("power", [2, 3, 0.5, -1])
def test_jit_hessian_of_a_power_with_a_python_number(power):
    f = lambda x: tv.sum(x**power)
    x = tv.tensor([0.5, 1.5, 2.0], dtype="float64")
    h = compiled(tv.jit(tv.hessian(f)), x)
    assert same(h, tv.hessian(f)(x))
    t = torch.autograd.functional.hessian(lambda t: (t**power).sum(), torch.tensor(x.numpy()))
    np.testing.assert_allclose(h.numpy(), t.numpy(), rtol=1e-12, atol=1e-15)


def test_jit_hessian_through_max_pool_agrees_with_pytorch():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 4, 4, 2))
    x[0, 0, 1, 0] = x[0, 0, 0, 0]  # a tie: the first maximum wins, as in PyTorch
    f = lambda x: tv.sum(tv.max_pool2d(x, 2) ** 3)
    h = compiled(tv.jit(tv.hessian(f)), tv.tensor(x))
    assert same(h, tv.hessian(f)(tv.tensor(x)))

    def tf(t):
        return (torch.nn.functional.max_pool2d(t.permute(0, 3, 1, 2), 2) ** 3).sum()

    t = torch.autograd.functional.hessian(tf, torch.tensor(x)).numpy()
    np.testing.assert_allclose(h.numpy(), t, rtol=1e-12, atol=1e-12)


# --- 8. any name a user can give ------------------------------------------------------------
NAMES = ["σ²", "W₁", "b₀", "ｒｅａｄ", "ℓ", "l", "map", "class", "a b", "1st", "\x1b[31mred",
         "\x00", "\ud800", "", "x" * 300, "dx", "_c0"]  # fmt: skip


@pytest.mark.parametrize("name", NAMES, ids=[repr(n) for n in NAMES])
def test_any_name_compiles(name):
    w = tv.variable([1.0, 2.0], name=name)
    c = tv.tensor([3.0, 4.0], name=name)

    def f(l, read):  # noqa: E741 - a parameter named l beside a Variable named ℓ
        return tv.sum(w * 3.0) + tv.sum(l * read * c) * tv.sum(w * l)  # w read first

    x, r = tv.tensor([1.0, 1.0]), tv.tensor(2.0)
    assert same(compiled(tv.jit(f), x, r), f(x, r))
    g = tv.grad(lambda l: f(l, r))  # noqa: E741
    assert same(compiled(tv.jit(g), x), g(x))
    assert "def " in tv.show_code(f, x, r, graph=False).text


def test_named_variables_train_under_minimize_and_fit_with_jit():
    a, b = tv.variable([1.0], name="σ²"), tv.variable([2.0], name="ｒｅａｄ")
    opt = tv.optim.SGD(0.1)
    for _ in range(2):
        opt.minimize(lambda: tv.sum((a * b - 1.0) ** 2), var_list=[a, b], jit=True)
    assert np.isfinite(a.numpy()).all()


# --- guards you can read --------------------------------------------------------------------
def test_show_code_lists_the_guards_and_why_it_retraced(rebind):
    w = tv.variable([1.0, 2.0], name="w")
    f = lambda x, k: tv.sum(_inner(x) * w) * k
    j = tv.jit(f)
    x = tv.tensor([1.0, 2.0])
    j(x, 1.0)
    rebind(3.0)
    j(x, 1.0)
    assert j.retrace_reason == "global 'scale' was rebound (was 2.0)"
    view = tv.show_code(j, x, 1.0, graph=False)
    text = "\n".join(view.guards)
    assert "global 'scale' == 3.0 (float)" in text
    assert "argument x: a tensor float32[2]" in text and "static value 1.0 (float)" in text
    assert "Variable 'w'" in text and "trainable is True" in text
    assert "traced again because: global 'scale' was rebound" in view.code.static_html()
    j(x, 2.0)
    assert j.retrace_reason == "a static value changed: 1.0 -> 2.0"
    j(tv.tensor([1.0, 2.0], dtype="float64"), 2.0)
    assert j.retrace_reason == "tensor argument 0: float32[2] -> float64[2]"


def test_entering_and_leaving_a_gradient_override_retraces_and_returns():
    f = tv.grad(lambda x: tv.sum(tv.tanh(x)))
    j = tv.jit(f)
    x = tv.tensor([0.5, -1.0])
    j(x)
    override = lambda dy, saved, attrs: {"x": lambda: dy * 2.0}  # noqa: E731
    with tv.gradient_override("Tanh", override):
        assert same(j(x), f(x)) and np.array_equal(j(x).numpy(), [2.0, 2.0])
    assert same(j(x), f(x)) and j.traces == 2  # the first program again


# --- N1 (found by the world fuzzer): gradient code that read a value under jit -------------
_READS = {
    "cumprod": (lambda x: tv.sum(tv.cumprod(x, None)), [1.0, 2.0, 3.0]),
    "cumprod with a zero": (lambda x: tv.sum(tv.cumprod(x, None)), [0.0, 2.0, 3.0]),
    "eigh vectors": (lambda a: tv.sum(tv.linalg.eigh(a + a.mT)[1][..., 0] ** 2 * a), [[1.0, 2.0], [0.0, 3.0]]),
    "np.outer with a constant": (lambda x: tv.sum(np.outer(x, np.array([2.0]))), [1.0, 2.0]),
    "np.cross with a constant": (lambda x: tv.sum(np.cross(x, np.array([2.0, 1.0, 0.5]))), [1.0, 2.0, 3.0]),
    "exp2": (lambda x: tv.sum(tv.exp2(x)), [1.0, 2.0]),
    "x ** 0 at 0": (lambda x: tv.sum(x**0 + x**3), [0.0, 2.0]),
    "x ** float32 exponent array": (lambda x: tv.sum(x ** np.array([-1.0, 0.5], np.float32)), [1.0, 2.0]),
    "0 ** b": (lambda b: tv.sum(tv.tensor([0.0, 2.0], dtype="float64") ** b), [0.0, 3.0]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(_READS))
def test_jit_grad_of_ops_whose_gradient_branched_on_values(case):
    f, value = _READS[case]
    x = tv.tensor(np.array(value, dtype=np.float64))
    g = tv.grad(f)
    got = compiled(tv.jit(g), x)
    if case.startswith("cumprod"):  # the division-free form under jit: rounding apart
        np.testing.assert_allclose(got.numpy(), g(x).numpy(), rtol=1e-13)
    else:
        assert same(got, g(x))
    t = torch.tensor(np.array(value), requires_grad=True)
    torch_f = {
        "cumprod": lambda t: torch.cumprod(t, 0).sum(),
        "cumprod with a zero": lambda t: torch.cumprod(t, 0).sum(),
        "exp2": lambda t: torch.exp2(t).sum(),
        "0 ** b": lambda t: (torch.tensor([0.0, 2.0], dtype=torch.float64) ** t).sum(),
    }.get(case)
    if torch_f is not None:
        torch_f(t).backward()
        np.testing.assert_allclose(got.numpy(), t.grad.numpy(), rtol=1e-12)


# --- N4 (found by the world fuzzer's memory check): result containers kept from the trace ---
def test_a_dict_subclass_result_carries_each_calls_tensors():
    w = tv.variable(np.ones(3), name="w")
    f = lambda x: tv.variable_grads(lambda: tv.sum(w * x * x))  # a GradsByVariable (dict)
    j = tv.jit(f)
    j(tv.tensor(np.ones(3)))
    x = tv.tensor(np.full(3, 5.0))
    got, want = j(x), f(x)
    assert type(got.grads) is type(want.grads) and same(got.grads[w], want.grads[w])
    assert same(got.grads["w"], tv.tensor(np.full(3, 25.0)))


def test_a_result_object_holding_tensors_is_refused_not_replayed():
    class Result:
        def __init__(self, t):
            self.t = t

    with pytest.raises(TypeError, match="returned a Result holding tensors"):
        tv.jit(lambda x: Result(x * 2))(tv.tensor([1.0]))


class _Tensors(list):
    pass


def test_a_list_subclass_result():
    j = tv.jit(lambda x: _Tensors([x * 2, x + 1]))
    j(tv.tensor([1.0]))
    out = j(tv.tensor([3.0]))
    assert type(out) is _Tensors and [t.item() for t in out] == [6.0, 4.0]


def test_a_returned_copy_of_the_argument_is_each_calls_value():
    # the world fuzzer (seed 100951): a deepcopy returned through an op that gives its input
    # back (np.roll along a size-1 axis) came back as the traced call's tensor on every call
    f = lambda x: [np.roll(copy.deepcopy(x), 3, 0), copy.copy(x)]
    j = tv.jit(f)
    j(tv.tensor([[1.0, 2.0, 3.0]]))
    x = tv.tensor([[4.0, 5.0, 6.0]])
    for got, want in zip(j(x), f(x)):
        assert same(got, want) and got is not x
