"""Every built-in primitive is one ``Definition`` row (core/gradients/<family>.py), and what
the registry holds after import is exactly what the rows say."""

from __future__ import annotations

import ast
import inspect
import pathlib
from collections import Counter

import tapeviz.core as core
from tapeviz.core import kernel_names as K
from tapeviz.core.gradients import DEFINITIONS, FAMILIES
from tapeviz.core.registry import BUILTIN_GRADIENTS, PRIMITIVES

CORE = pathlib.Path(core.__file__).parent


def test_each_built_in_kernel_name_has_exactly_one_row():
    counts = Counter(d.name for d in DEFINITIONS)
    assert [n for n, c in counts.items() if c > 1] == []
    assert set(counts) == K.ALL


def test_the_registry_holds_what_the_rows_say():
    for d in DEFINITIONS:
        prim = PRIMITIVES[d.name]
        assert prim.kernels["numpy"].fn is d.numpy, d.name
        assert prim.batch is d.batch and prim.decomposition is d.decomposition, d.name
        if d.vjp is None:
            assert prim.grad is None and d.name not in BUILTIN_GRADIENTS, d.name
            continue
        g = prim.grad
        assert g.grad_fn is d.vjp and g.builtin and d.name in BUILTIN_GRADIENTS, d.name
        assert g.save_all_inputs == (d.saves == "*"), d.name
        assert g.inputs_to_save == (() if d.saves == "*" else tuple(d.saves)), d.name
        assert g.outputs_to_save == tuple(d.saves_outputs), d.name
        assert dict(g.formula) == dict(d.formula or {}), d.name
        assert dict(g.needed_by) == dict(d.needed_by or {}), d.name
        assert g.optional_inputs == tuple(d.optional), d.name


def test_no_kernel_or_gradient_is_registered_outside_the_definitions():
    """A built-in registered by a call somewhere else would be a second definition: only
    ``install`` (core/define.py) and the numba backend (its compiled kernels and delegations)
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
    modules = {p.stem for p in (CORE / "gradients").glob("*.py") if p.stem != "__init__"}
    assert modules == listed


def test_every_gradient_reads_as_math_or_words():
    """The stepper and the graph describe a node's gradient by its formula, else by the
    first line of its VJP's docstring: a built-in with neither would show a function name."""
    bare = [d.name for d in DEFINITIONS if d.vjp and not d.formula and not inspect.getdoc(d.vjp)]
    assert bare == []
