"""tapeviz against an independent oracle (HIPS autograd): every kernel with a gradient, on
every backend, float64 and float32, forward, gradient and Hessian-vector product.

The cases are in ``oracle_cases_*.py``; the harness in ``oracle.py``. On the numba backend
the compiled kernels run for every size (``min_size = 0``) and the compiled elementwise
kernels are registered, so the oracle judges numba's own code, not numpy's behind it.
"""

from __future__ import annotations

import importlib
import pathlib

import autograd.numpy as anp
import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import BACKENDS, DTYPES, OracleCase, check_case
from oracle_cases_ops import rand
from oracle_forward import FORWARD_CASES, check_forward

import tapeviz.core as core
from tapeviz.core.backends import numba as nb
from tapeviz.core.registry.gradients import gradient_table

_HERE = pathlib.Path(__file__).parent
CASE_MODULES = sorted(p.stem for p in _HERE.glob("oracle_cases_*.py"))


def _all_cases() -> list[OracleCase]:
    cases = []
    for name in CASE_MODULES:
        cases += importlib.import_module(name).CASES
    return cases


CASES = _all_cases()


@pytest.fixture(scope="module")
def compiled_numba():
    old = nb.settings.min_size
    nb.settings.min_size = 0
    try:
        yield
    finally:
        nb.settings.min_size = old


def _runs(case: OracleCase):
    for backend in BACKENDS:
        for dtype in DTYPES:
            if case.float32 or dtype is not np.float32:
                yield backend, dtype


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_oracle(case, compiled_numba):
    """One test per case, every backend and dtype inside it (all failures are reported)."""
    failures = []
    for backend, dtype in _runs(case):
        try:
            check_case(case, backend, dtype)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n\n".join(failures)


def test_case_ids_are_unique_and_notes_explain_overrides():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for c in CASES:
        assert c.expect is None or (c.note and not c.hvp), c.id
        assert c.args and all(np.asarray(a).dtype == np.float64 for a in c.args), c.id


def test_every_kernel_with_a_gradient_has_an_oracle_case():
    """Fails when a built-in kernel with a gradient is added without an oracle case."""
    covered = {k for c in CASES for k in c.kernels}
    differentiable = {name for name, cfg in gradient_table().items() if cfg.builtin}
    missing = differentiable - covered
    assert not missing, f"kernels with a gradient but no oracle case: {sorted(missing)}"
    unknown = covered - differentiable
    assert not unknown, f"oracle cases name kernels with no built-in gradient: {sorted(unknown)}"


@pytest.mark.parametrize("case", FORWARD_CASES, ids=[c.id for c in FORWARD_CASES])
def test_forward_oracle(case, compiled_numba):
    """The kernels without a gradient: numpy's value exactly, on every backend and dtype."""
    failures = []
    for backend in BACKENDS:
        for dtype in case.dtypes:
            try:
                check_forward(case, backend, dtype)
            except AssertionError as e:
                failures.append(str(e))
    assert not failures, "\n\n".join(failures)


def _builtin_kernels(backend: str) -> set[str]:
    """The kernels tapeviz itself registers on ``backend`` (not ones a test or user added)."""
    return {
        k.kernel_name
        for k in core.kernels_for_backend(backend)
        if getattr(k.fn, "__module__", "").startswith("tapeviz.core.")
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_registered_kernel_has_an_oracle_case(backend, compiled_numba):
    """Every built-in kernel on each backend, with a gradient or without, has a case here:
    a gradient case (value, gradient, HVP) or a forward case. Fails for a new kernel."""
    covered = {k for c in CASES for k in c.kernels} | {c.kernel for c in FORWARD_CASES}
    missing = _builtin_kernels(backend) - covered
    assert not missing, f"kernels on {backend!r} with no oracle case: {sorted(missing)}"


def _kernels_run(case: OracleCase) -> set[str]:
    """Kernels recorded while computing the case's value, gradient and second gradient."""
    args = [core.tensor(a) for a in case.args]
    sources = [args[i] for i in case.argnums]
    with np.errstate(all="ignore"), core.Tape(persistent=True) as outer:
        outer.watch(*sources)
        with core.Tape() as inner:
            inner.watch(*sources)
            y = case.tv_fn(*args)
            loss = core.sum(y * y)
        grads = inner.gradient(loss, sources, unconnected_gradients="zero")
        total = core.sum(core.stack([core.sum(g * g) for g in grads]))
        outer.gradient(total, sources, unconnected_gradients="zero")
    return {n.kernel for n in outer.nodes}


def test_every_listed_kernel_runs_in_its_cases():
    """A case's ``kernels`` is checked, not trusted: each one runs in that case."""
    wrong = []
    for case in CASES:
        missing = set(case.kernels) - _kernels_run(case)
        if missing:
            wrong.append((case.id, sorted(missing)))
    assert not wrong, f"cases listing kernels they never run: {wrong}"


def _case(case_id: str) -> OracleCase:
    return next(c for c in CASES if c.id == case_id)


def _wrong_tanh_grad_y(dz, saved, attrs):  # the y-gradient of TanhGrad off by a factor 2
    dy, y = saved
    return {"dy": lambda: dz * (1 - y * y), "y": lambda: dz * dy * y * -4}


def test_the_oracle_catches_wrong_answers():
    """A check that cannot fail is no check: wrong first and second derivatives, a lost NaN,
    a wrong shape are each caught, on the backend where they happen."""
    tanh = _case("tanh[2, 3]")
    with core.gradient_override("Tanh", lambda dy, saved, attrs: {"x": lambda: dy}):
        with pytest.raises(AssertionError, match="gradient w.r.t. argument 0"):
            check_case(tanh, "numpy", np.float64)
    with core.gradient_override("TanhGrad", _wrong_tanh_grad_y):
        check_case(_case("tanh[edge]"), "numpy", np.float64)  # no HVP there: not seen
        with pytest.raises(AssertionError, match="Hessian-vector product"):
            check_case(tanh, "numba", np.float32)
    zero = lambda dy, saved, attrs: {"a": lambda: dy * 0, "b": lambda: dy * 0}  # noqa: E731
    with core.gradient_override("Maximum", zero), pytest.raises(AssertionError, match="NaN|nan"):
        check_case(_case("maximum[nan]"), "numpy", np.float64)
    x = np.arange(6.0).reshape(2, 3)
    transposed = OracleCase("wrong shape", (), lambda x: x.T, lambda x: x, (x,))
    with pytest.raises(AssertionError, match=r"forward value: shape \(3, 2\)"):
        check_case(transposed, "numpy", np.float64)


_BINARY = {"add": (core.add, anp.add), "mul": (core.mul, anp.multiply),
           "maximum": (core.maximum, anp.maximum), "div": (core.div, anp.true_divide)}  # fmt: skip


@settings(max_examples=30, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3
    ),
    op=st.sampled_from(sorted(_BINARY)),
    backend=st.sampled_from(BACKENDS),
)
def test_broadcasting_binary_ops_against_the_oracle(shapes, op, backend, compiled_numba):
    """Shapes drawn by hypothesis (size 0 and 1 included); gradients reduced to each shape."""
    (sa, sb), _ = shapes
    tv_fn, ag_fn = _BINARY[op]
    a = rand(sa, f"hyp{op}a")
    b = rand(sb, f"hyp{op}b", "positive" if op == "div" else "any")
    case = OracleCase(f"hypothesis:{op}{sa}{sb}", (), lambda a, b: tv_fn(a, b) ** 2,
                      lambda a, b: ag_fn(a, b) ** 2, (a, b), argnums=(0, 1))  # fmt: skip
    for dtype in DTYPES:
        check_case(case, backend, dtype)


_REDUCE = {"sum": (core.sum, anp.sum), "max": (core.max, anp.max), "mean": (core.mean, anp.mean),
           "logsumexp": (core.logsumexp, None)}  # fmt: skip


@settings(max_examples=30, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3),
    data=st.data(),
    op=st.sampled_from(sorted(_REDUCE)),
    keepdims=st.booleans(),
)
def test_reductions_over_drawn_axes_against_the_oracle(shape, data, op, keepdims, compiled_numba):
    """Shapes and axis sets drawn by hypothesis; both backends, both dtypes."""
    import autograd.scipy.special as asp

    axis = data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1).map(tuple))
    tv_fn, ag_fn = _REDUCE[op]
    ag_fn = ag_fn or asp.logsumexp
    x = rand(shape, f"hyp{op}")
    case = OracleCase(f"hypothesis:{op}{shape}{axis}{keepdims}", (),
                      lambda x: tv_fn(x, axis, keepdims) ** 2,
                      lambda x: ag_fn(x, axis, keepdims=keepdims) ** 2, (x,))  # fmt: skip
    for backend in BACKENDS:
        for dtype in DTYPES:
            check_case(case, backend, dtype)
