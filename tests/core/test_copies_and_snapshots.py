"""Issue 22, classes 1 and 2: a copy is a new object with its own identity, and a no-op form
of a Variable (a copy, a cast to its own dtype, a reshape to its own shape, ...) is a new
tensor that does not follow later ``assign``s. Gradients are judged against HIPS autograd."""

import copy
import pickle
import subprocess
import sys

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import tapeviz.core as core


def _loss(a, b):
    return a * 2.0 + b * 7.0


def test_a_deep_copied_variable_has_its_own_gradient():
    w = core.variable([1.0, -2.0], name="w")
    w2 = copy.deepcopy(w)
    assert w2.id != w.id and w2.name == "w" and isinstance(w2, core.Variable)
    with core.Tape() as tape:
        y = core.sum(_loss(w, w2))
    gw, gw2 = tape.gradient(y, [w, w2])
    ref = [
        autograd.grad(lambda a, b: anp.sum(_loss(a, b)), i)(w.numpy(), w2.numpy()) for i in (0, 1)
    ]
    np.testing.assert_allclose(gw.numpy(), ref[0])
    np.testing.assert_allclose(gw2.numpy(), ref[1])


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
@pytest.mark.parametrize("make", [core.tensor, core.variable])
def test_every_copy_of_a_tensor_gets_a_new_id_and_keeps_value_name_class(how, make):
    x = make(np.array([1.5, 2.5]), name="x")
    c = {"copy": copy.copy, "deepcopy": copy.deepcopy,
         "pickle": lambda t: pickle.loads(pickle.dumps(t))}[how](x)  # fmt: skip
    assert c is not x and c.id != x.id
    assert type(c) is type(x) and c.name == "x" and c.dtype == x.dtype
    np.testing.assert_array_equal(c.numpy(), x.numpy())
    if isinstance(x, core.Variable):
        x.assign([9.0, 9.0])  # the copy does not follow the original
        np.testing.assert_array_equal(c.numpy(), [1.5, 2.5])


def test_a_deep_copied_model_teacher_student_gets_its_own_gradients():
    teacher = core.nn.Dense(2)
    x = core.tensor(np.array([[0.5, -1.0, 2.0]]))
    teacher(x)
    student = copy.deepcopy(teacher)
    ids_t = {p.id for p in teacher.parameters()}
    assert ids_t.isdisjoint({p.id for p in student.parameters()})
    params = list(teacher.parameters()) + list(student.parameters())
    with core.Tape() as tape:
        loss = core.sum(teacher(x)) + 3.0 * core.sum(student(x))
    grads = tape.gradient(loss, params)
    n = len(grads) // 2
    for gt, gs in zip(grads[:n], grads[n:]):
        np.testing.assert_allclose(gs.numpy(), 3.0 * gt.numpy(), rtol=1e-6)


def test_a_tensor_unpickled_in_a_new_process_does_not_collide_with_its_tensors(tmp_path):
    w = core.variable([2.0, 3.0], name="w")
    path = tmp_path / "w.pkl"
    path.write_bytes(pickle.dumps(w))
    script = f"""
import pickle
import numpy as np
import tapeviz.core as core
fresh = [core.variable([float(i)]) for i in range(100)]   # ids 1, 2, ... in this process
w = pickle.loads(open({str(path)!r}, "rb").read())
assert all(w.id != f.id for f in fresh), "collision"
with core.Tape() as tape:
    y = core.sum(w * w) + core.sum(fresh[{w.id} % 100] * 5.0)
g, gf = tape.gradient(y, [w, fresh[{w.id} % 100]])
assert g.numpy().tolist() == [4.0, 6.0], g
assert gf.numpy().tolist() == [5.0], gf
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_pickling_a_disposed_tensor_is_a_named_error():
    x = core.tensor([1.0], name="gone")
    x.dispose()
    with pytest.raises(core.DisposedError, match="'gone'"):
        pickle.dumps(x)


# class 2: every no-op form of a Variable is a new tensor (numpy's rule: a copy is a copy)
NO_OP_FORMS = {
    "np.copy": lambda v: np.copy(v),
    "astype": lambda v: v.astype(v.dtype),
    "np.astype": lambda v: np.astype(v, v.dtype),
    "tv.cast": lambda v: core.cast(v, v.dtype),
    "tv.reshape": lambda v: core.reshape(v, v.shape),
    "v.reshape": lambda v: v.reshape(v.shape),
    "np.reshape": lambda v: np.reshape(v, v.shape),
    "tv.transpose": lambda v: core.transpose(v, tuple(range(v.ndim))),
    "np.transpose": lambda v: np.transpose(v, tuple(range(v.ndim))),
    "broadcast_to": lambda v: core.broadcast_to(v, v.shape),
    "np.broadcast_to": lambda v: np.broadcast_to(v, v.shape),
    "+v": lambda v: +v,
    "np.positive": lambda v: np.positive(v),
    "squeeze": lambda v: core.squeeze(v),
    "np.squeeze": lambda v: np.squeeze(v),
    "roll 0": lambda v: core.roll(v, 0, 0),
    "np.roll 0": lambda v: np.roll(v, 0, 0),
    "swapaxes": lambda v: core.swapaxes(v, 0, 0),
    "moveaxis": lambda v: np.moveaxis(v, 0, 0),
    "atleast_1d": lambda v: np.atleast_1d(v),
    "ravel": lambda v: core.ravel(v),
    "flatten": lambda v: v.flatten(),
    "dropout, not training": lambda v: core.dropout(v, 0.5, training=False),
    "dropout, rate 0": lambda v: core.dropout(v, 0.0),
    "round": lambda v: core.round(v),
    "nan_to_num": lambda v: core.nan_to_num(v),
    "np.nan_to_num": lambda v: np.nan_to_num(v),
    "tv.tensor": lambda v: core.tensor(v),
}


@pytest.mark.parametrize("form", list(NO_OP_FORMS))
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_a_no_op_form_of_a_variable_is_a_snapshot(form, dtype):
    v = core.variable(np.array([1, 2, 3], dtype), name="v")
    snap = NO_OP_FORMS[form](v)
    assert snap is not v and not isinstance(snap, core.Variable)
    v.assign(np.array([7, 8, 9], dtype))  # an optimizer step
    np.testing.assert_array_equal(np.asarray(snap.numpy()).ravel(), [1, 2, 3])


@pytest.mark.parametrize("form", ["np.copy", "astype", "tv.reshape", "+v", "squeeze"])
def test_the_snapshot_still_carries_the_gradient(form):
    v = core.variable(np.array([1.0, -2.0, 3.0]), name="v")
    with core.Tape() as tape:
        y = core.sum(NO_OP_FORMS[form](v) * v)
    ref = autograd.grad(lambda a: anp.sum(a * a))(v.numpy())
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), ref)
