"""The interpreter exits cleanly: no ``Exception ignored in Tensor.__del__`` when module
globals are gone at shutdown, nothing on stderr after numba's parallel kernels, and a script
that raises prints its traceback and nothing else."""

from __future__ import annotations

import gc
import sys

import numpy as np

import tapeviz.core as core

_TENSOR_MODULE = sys.modules[
    "tapeviz.core.tensors.tensor"
]  # ``core.tensors.tensor`` is the function of that name


def test_tensor_del_needs_no_module_global(monkeypatch):
    """At interpreter exit module globals become None before the last tensors die."""
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    gc.collect()  # an earlier test's garbage collected below would change the count
    gc.disable()
    try:
        x = core.tensor(np.ones(3))
        x_id, before = x.id, core.memory()["num_tensors"]
        monkeypatch.setattr(_TENSOR_MODULE, "LIVE", None)  # as the shutdown leaves it
        del x
        monkeypatch.undo()
        count = core.memory()["num_tensors"]
    finally:
        gc.enable()
    assert unraisable == []
    assert count == before - 1  # it still left the live count
    assert x_id not in _TENSOR_MODULE.LIVE


def test_a_script_that_raises_prints_its_traceback_and_nothing_else(run_script):
    path, out = run_script(
        """
        import threading

        import numpy as np

        import tapeviz as tv

        x = tv.tensor(np.linspace(-1, 1, 6), name="x")
        with tv.Tape() as tape:
            tape.watch(x)
            y = tv.sum(tv.exp(x) * x)
        g = tape.gradient(y, x)
        scope = tv.tidy()
        scope.__enter__()  # a tidy scope left open holds its tensors to the end
        kept = [tv.tensor(np.ones(3) * i) for i in range(5)]
        model = tv.nn.Sequential([tv.nn.Dense(3, "tanh"), tv.nn.Dense(1)])
        model(x.reshape((2, 3)))
        raise RuntimeError("boom")
        """
    )
    line = path.read_text().splitlines().index('raise RuntimeError("boom")') + 1
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "Traceback (most recent call last):",
        f'  File "{path}", line {line}, in <module>',
        '    raise RuntimeError("boom")',
        "RuntimeError: boom",
    ]


def test_numba_parallel_kernels_exit_cleanly(run_script):
    _, out = run_script(
        """
        import numpy as np

        import tapeviz.core as core
        from tapeviz.core.backends import numba as nb

        nb.settings.min_size = 0  # the compiled kernels, even for small arrays
        nb.settings.num_threads = None  # numba's own thread pool
        x = core.tensor(np.linspace(-1.0, 1.0, 24).reshape(4, 6))
        with core.backend("numba"), core.Tape() as tape:
            tape.watch(x)
            y = core.sum(core.softmax(x, axis=-1) * core.log_softmax(x, axis=-1))
        g = tape.gradient(y, x)
        print(sorted({n.backend for n in tape.nodes}), round(float(g.numpy().sum()), 9))
        """
    )
    assert out.returncode == 0 and out.stderr == ""
    backends, total = out.stdout.rsplit(" ", 1)
    assert backends == "['numba']" and float(total) == 0.0  # softmax is shift-invariant
