"""``import tapeviz`` loads numpy and tapeviz only: numba (and llvmlite), scipy, matplotlib,
the widget stack (ipywidgets, anywidget) and wasmtime load when first used (issue 27: they
made the import take 500-890 ms). ``bench/bench_import.py`` measures the time; this test
checks the cause without a clock, in a fresh interpreter."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

HEAVY = ("numba", "llvmlite", "scipy", "matplotlib", "ipywidgets", "anywidget", "wasmtime")


def _loaded_after(code: str) -> list[str]:
    probe = (
        f"{code}; import sys; "
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_tapeviz_loads_no_heavy_module():
    assert _loaded_after("import tapeviz") == []
    assert _loaded_after("import tapeviz.core") == []


def test_first_use_loads_what_it_needs():
    # a sigmoid and an erf need scipy.special: loaded then, not before
    got = _loaded_after(
        "import tapeviz as tv; tv.erf(tv.tensor([0.5])); tv.sigmoid(tv.tensor([0.5]))"
    )
    if importlib.util.find_spec("scipy") is not None:
        assert "scipy" in got
    assert "numba" not in got


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba not installed")
def test_the_numba_backend_is_listed_and_loads_on_first_use():
    got = _loaded_after(
        "import tapeviz as tv; assert 'numba' in tv.list_backends(); "
        "import sys; assert 'numba' not in sys.modules; "
        "k = tv.get_kernel('Add', 'numba'); assert k.backend_name == 'numba'; "
        "import numpy as np; "
        "exec('with tv.backend(\"numba\"):\\n y = tv.sum(tv.tensor(np.ones(3)))'); "
        "assert float(y) == 3.0"
    )
    assert "numba" in got


def test_jit_code_generation_parts_load_when_a_function_is_compiled():
    """numba fusion and the code renderer (11 ms of import together) are for a compiled
    function, not for ``import tapeviz``."""
    probe = (
        "import sys, tapeviz as tv; parts = ('fusion', 'render'); "
        "print([p for p in parts if 'tapeviz.core.jit.' + p in sys.modules]); "
        "f = tv.jit(lambda x: tv.sum(x * x)); t = tv.tensor([1.0, 2.0]); f(t); f.trace(t).code; "
        "print([p for p in parts if 'tapeviz.core.jit.' + p in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, after = out.stdout.splitlines()
    assert before == "[]" and "'render'" in after
