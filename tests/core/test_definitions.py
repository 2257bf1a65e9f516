"""Every built-in primitive is one ``Primitive`` row (core/primitives/<family>.py): the
registry holds those very objects after import, with exactly what the rows say in force."""

from __future__ import annotations

import ast
import inspect
import pathlib
import warnings
from collections import Counter

import numpy as np

import tapeviz.core as core
from tapeviz.core.primitives import FAMILIES, ROWS
from tapeviz.core.registry import kernel_names as K
from tapeviz.core.registry.kernels import BUILTIN_GRADIENTS, PRIMITIVES

CORE = pathlib.Path(core.__file__).parent


def test_each_built_in_kernel_name_has_exactly_one_row():
    counts = Counter(d.name for d in ROWS)
    assert [n for n, c in counts.items() if c > 1] == []
    assert set(counts) == K.ALL


def test_the_registry_holds_what_the_rows_say():
    for row in ROWS:
        d, prim = row.declared, PRIMITIVES[row.name]
        assert prim is row, row.name
        assert prim.kernels["numpy"].fn is d.kernels["numpy"], row.name
        assert prim.batch is d.batch and prim.decomposition is d.decomposition, row.name
        if d.vjp is None:
            assert prim.grad is None and row.name not in BUILTIN_GRADIENTS, row.name
            continue
        g = prim.grad
        assert g.grad_fn is d.vjp and g.builtin and row.name in BUILTIN_GRADIENTS, row.name
        assert g.save_all_inputs == d.save_all_inputs, row.name
        assert g.inputs_to_save == d.inputs_to_save, row.name
        assert g.outputs_to_save == d.outputs_to_save, row.name
        assert dict(g.formula) == dict(d.formula or {}), row.name
        assert dict(g.needed_by) == dict(d.needed_by or {}), row.name
        assert g.optional_inputs == d.optional, row.name


def test_registering_the_rows_again_restores_a_removed_or_replaced_builtin():
    """``core.primitives.register()`` puts every row back as written: a kernel removed and a
    gradient replaced since import are in force again (tests restore the built-ins so)."""
    row = PRIMITIVES[K.EXP]
    numpy_kernel, vjp = row.kernels["numpy"].fn, row.grad.grad_fn
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # replacing a built-in gradient warns
            core.register_gradient(K.EXP, lambda dy, saved, attrs: {"x": lambda: dy})
        core.unregister_kernel(K.EXP, "numpy")
        assert "numpy" not in row.kernels and row.grad.grad_fn is not vjp
    finally:
        core.primitives.register()
    assert PRIMITIVES[K.EXP] is row
    assert row.kernels["numpy"].fn is numpy_kernel and row.grad.grad_fn is vjp
    x = core.tensor([0.5], dtype="float64")
    assert core.grad(lambda t: core.sum(core.exp(t)))(x).numpy()[0] == np.exp(0.5)


def test_no_kernel_or_gradient_is_registered_outside_the_definitions():
    """A built-in registered by a call somewhere else would be a second definition: only
    ``install`` (core/primitives/define.py) and the numba backend (its compiled kernels and delegations)
    call the registries inside core."""
    allowed = {"define.py", "numba/__init__.py"}
    calls = ("register_kernel", "register_gradient", "register_batching", "register_decomposition")
    found = []
    for path in CORE.rglob("*.py"):
        rel = path.relative_to(CORE).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in calls and not any(rel.endswith(a) for a in allowed):
                    found.append(f"{rel}:{node.lineno} {name}")
    assert found == []


def test_every_family_is_listed():
    """A family module with rows that the list leaves out would never be registered."""
    listed = {f.__name__.rsplit(".", 1)[-1] for f in FAMILIES}
    folder = CORE / "primitives"
    modules = {p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "define")}
    assert modules == listed


def test_every_gradient_reads_as_math_or_words():
    """The stepper and the graph describe a node's gradient by its formula, else by the
    first line of its VJP's docstring: a built-in with neither would show a function name."""
    bare = [
        r.name
        for r in ROWS
        if r.declared.vjp and not r.declared.formula and not inspect.getdoc(r.declared.vjp)
    ]
    assert bare == []


def test_numba_registers_the_compiled_kernel_each_row_names_and_delegates_the_rest():
    """A row's ``numba=`` is the one place a compiled kernel is named: the backend registers
    exactly those, and every other built-in runs numpy's kernel with a reason."""
    from tapeviz.core.backends import numba as nb

    named = {r.name: r.declared.numba for r in ROWS if r.declared.numba}
    assert named, "no row names a compiled kernel"
    for name, ref in named.items():
        config = PRIMITIVES[name].kernels["numba"]
        assert config.fn is nb.compiled(ref) and config.delegates_to is None, name
    delegated = nb.delegated_kernels()
    assert set(delegated) == {r.name for r in ROWS} - set(named)
