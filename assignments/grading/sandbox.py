"""The grader's side of a submission: a separate process (``driver.py``) that runs the
notebook's code cells and answers probe calls over two pipes, under time and size limits.

What the submission's process gets: a fresh empty folder as its working directory with a
copy of the notebook (nothing else), an environment without the grader's variables, and
resource limits. As root (a container, a grading machine), it also runs as user ``nobody``
in namespaces of its own: no network, its own /tmp, its own process list, and the folders
in ``HIDDEN`` (the course's sources, hidden tests and the repository's history) covered by
empty ones; it then cannot read the hidden tests or the solutions, nor write any file the
grader reads. Not as root, those folders stay readable to it (``isolated`` is False, and
grade.py says so).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from driver import ChannelError, receive, send

DRIVER = Path(__file__).resolve().with_name("driver.py")
NOBODY = 65534


class SubmissionError(Exception):
    """A probe call that did not give an answer: the message says why (for the report)."""


def _limits():  # in the child, before it becomes the submission
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))
    resource.setrlimit(resource.RLIMIT_NPROC, (512, 512))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def can_isolate() -> bool:
    """Root, with unshare and setpriv: the submission runs as nobody in its namespaces."""
    return os.geteuid() == 0 and all(shutil.which(t) for t in ("unshare", "setpriv", "mount"))


class Submission:
    """One notebook run in its own process; ``call(probe, **args)`` returns a probe's answer
    (plain data) or raises ``SubmissionError``. A process that dies or hangs in a call is
    started again (the notebook rerun) for the next call, up to ``restarts`` times."""

    def __init__(self, notebook_name, notebook_text, cells, probes, *, pythonpath="",
                 hidden=(), run_timeout=300.0, call_timeout=60.0, reply_limit=64 << 20,
                 restarts=5, isolate=True):  # fmt: skip
        self.name, self.notebook_text = notebook_name, notebook_text
        self.cells, self.probes, self.pythonpath = list(cells), probes, pythonpath
        self.hidden = [Path(h) for h in hidden if Path(h).is_dir()]
        self.run_timeout, self.call_timeout = run_timeout, call_timeout
        self.reply_limit, self.restarts_left = reply_limit, restarts
        self.isolated = isolate and can_isolate()
        self.proc = None
        self.cell_errors: list[str] = []
        self.broken: str | None = None  # why no call can be answered (e.g. a run timed out)
        self._next_id = 0

    # --- the process ---------------------------------------------------------------------
    def _command(self, workdir: Path, read_fd: int, write_fd: int) -> list[str]:
        python = [sys.executable, "-X", "faulthandler", str(DRIVER), str(read_fd), str(write_fd)]
        if not self.isolated:
            return python
        covers = "".join(f" && mount -t tmpfs -o size=1m,mode=0 none '{h}'" for h in self.hidden)
        script = (
            f"cd '{workdir}' && mount -t tmpfs -o mode=1777,size=256m none /tmp"
            f" && mount -t tmpfs -o mode=1777,size=64m none /dev/shm{covers}"
            f" && exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups"
            ' --no-new-privs -- "$@"'
        )
        return ["unshare", "--mount", "--net", "--ipc", "--pid", "--fork", "--mount-proc",
                "--", "sh", "-c", script, "sh", *python]  # fmt: skip

    def _start(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="tapeviz-submission-"))
        (self.workdir / f"{self.name}.ipynb").write_text(self.notebook_text, encoding="utf-8")
        if self.isolated:
            os.chown(self.workdir, NOBODY, NOBODY)
            os.chown(self.workdir / f"{self.name}.ipynb", NOBODY, NOBODY)
        to_child, from_grader = os.pipe()
        from_child, to_grader = os.pipe()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.workdir),
               "TMPDIR": "/tmp", "MPLBACKEND": "Agg", "PYTHONPATH": self.pythonpath,
               "PYTHONDONTWRITEBYTECODE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}  # fmt: skip
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            self._command(self.workdir, to_child, to_grader), cwd=self.workdir, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
            pass_fds=(to_child, to_grader), start_new_session=True, preexec_fn=_limits,
        )  # fmt: skip
        os.close(to_child)
        os.close(to_grader)
        self.write_fd, self.read_fd = from_grader, from_child
        deadline = time.monotonic() + self.run_timeout
        try:
            send(self.write_fd, {"cells": self.cells, "probes": self.probes})
            ready = receive(self.read_fd, self.reply_limit, deadline)
        except TimeoutError:
            self._stop()
            self.broken = f"the notebook did not finish running in {self.run_timeout:g} s"
            return
        except (EOFError, ChannelError, OSError) as e:
            self._stop()
            self.broken = f"the notebook's process ended while running its cells ({e or 'exit'})"
            return
        if not isinstance(ready, dict) or ready.get("ready") is not True:
            self._stop()
            self.broken = "the notebook's process did not report its cells"
            return
        errors = ready.get("errors")
        self.cell_errors = [str(e)[:200] for e in errors] if isinstance(errors, list) else []

    def _stop(self) -> None:
        if self.proc is None:
            return
        for fd in (self.write_fd, self.read_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.stderr.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.proc = None

    def close(self) -> None:
        """End the submission's process and remove its folder."""
        self._stop()

    # --- calls ---------------------------------------------------------------------------
    def call(self, probe: str, **args):
        """The answer of ``probe(ns, **args)`` in the submission's process."""
        if self.proc is None and self.broken is None:
            self._start()
        if self.broken is not None:
            raise SubmissionError(self.broken)
        self._next_id += 1
        ident = self._next_id
        try:
            send(self.write_fd, {"id": ident, "probe": probe, "args": args})
            reply = receive(self.read_fd, self.reply_limit, time.monotonic() + self.call_timeout)
        except TimeoutError:
            self._restart()
            raise SubmissionError(f"no answer within {self.call_timeout:g} s") from None
        except (EOFError, OSError):
            self._restart()
            raise SubmissionError("the notebook's process ended during the call") from None
        except ChannelError as e:
            self._restart()
            raise SubmissionError(f"the answer was not plain numbers: {e}") from None
        if not isinstance(reply, dict) or reply.get("id") != ident:
            self._restart()
            raise SubmissionError("an answer to another call")
        if "error" in reply:
            raise SubmissionError(f"raised {str(reply['error'])[:200]}")
        return reply.get("ok")

    def _restart(self) -> None:
        self._stop()
        if self.restarts_left <= 0:
            self.broken = "the notebook's process ended or hung too often"
        self.restarts_left -= 1
