"""tapeviz against an independent oracle (HIPS autograd): every kernel with a gradient, on
every backend, float64 and float32, forward, gradient and Hessian-vector product.

The cases are in ``oracle_cases_*.py``; the harness in ``oracle.py``. On the numba backend
the compiled kernels run for every size (``min_size = 0``) and the compiled elementwise
kernels are registered, so the oracle judges numba's own code, not numpy's behind it.
"""

from __future__ import annotations

import importlib
import pathlib

import numpy as np
import pytest
from oracle import BACKENDS, DTYPES, OracleCase, check_case

import core
from core.backends import numba as nb
from core.registry import gradient_table

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
    nb.use_compiled_elementwise(True)
    try:
        yield
    finally:
        nb.settings.min_size = old
        nb.use_compiled_elementwise(False)


def _params():
    for case in CASES:
        for backend in BACKENDS:
            for dtype in DTYPES:
                if dtype is np.float32 and not case.float32:
                    continue
                yield pytest.param(case, backend, dtype, id=f"{case.id}-{backend}-{dtype.__name__}")


@pytest.mark.parametrize(("case", "backend", "dtype"), list(_params()))
def test_oracle(case, backend, dtype, compiled_numba):
    check_case(case, backend, dtype)


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
