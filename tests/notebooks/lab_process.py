"""JupyterLab as a subprocess for the browser tests: start on a free port, stop.

The server listens on 127.0.0.1 only, with a random token, and keeps all its state (config,
runtime, settings, workspaces, data) in a temp dir; its "python3" kernel is this interpreter
(see nbenv.py).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from nbenv import jupyter_env, write_kernelspec

# no news/update toasts over the notebook; every cell attached to the DOM (JupyterLab's
# default windowing leaves off-screen cells unrendered, which would hide widgets from queries)
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


@dataclass
class LabServer:
    """A running JupyterLab (``app="lab"``) or Jupyter Notebook 7 (``app="notebook"``):
    ``url`` (no trailing slash), ``token``, served ``root``."""

    url: str
    token: str
    root: Path
    proc: subprocess.Popen
    log: Path
    app: str = "lab"

    def notebook_url(self, name: str) -> str:
        if self.app == "notebook":
            return f"{self.url}/notebooks/{name}?token={self.token}"
        return f"{self.url}/lab/tree/{name}?reset&token={self.token}"

    def kernel_pids(self) -> set[int]:
        """Process ids of the kernels this server runs now."""
        import psutil  # ipykernel's dependency

        kids = psutil.Process(self.proc.pid).children(recursive=True)
        return {p.pid for p in kids if "ipykernel_launcher" in " ".join(_cmdline(p))}

    def kernel_restarts(self) -> int:
        """How many times the server has restarted a dead kernel so far (its log says so)."""
        return self.log.read_text(errors="replace").count("restarting kernel")

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cmdline(proc) -> list[str]:
    try:
        return proc.cmdline()
    except Exception:  # gone meanwhile
        return []


def _lab_command(root: Path, port: int, token: str, app: str = "lab") -> list[str]:
    exe = Path(sys.executable).parent / f"jupyter-{app}"
    module = {"lab": "jupyterlab", "notebook": "notebook"}[app]
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", module]
    return cmd + [
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.allow_root=True",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]


def _lab_env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(jupyter_env(write_kernelspec(work / "path")))
    # draw as a pip-only install does (Graphviz in WebAssembly), though CI installs `dot`:
    # that is the path a new user meets, and the one that must not take the kernel down
    env.setdefault("TAPEVIZ_GRAPHVIZ", "wasm")
    for name, sub in [
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
    ]:
        (work / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(work / sub)
    for plugin, values in LAB_SETTINGS.items():
        path = work / "settings" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    return env


def start_lab(root: Path, work: Path, timeout: float = 120.0, app: str = "lab") -> LabServer:
    """Start JupyterLab (or Notebook 7: ``app="notebook"``) serving ``root`` (state under
    ``work``); return once it answers.

    Raises:
        RuntimeError: the server exited or did not answer within ``timeout`` seconds; the
            message holds the end of its log.
    """
    port, token = free_port(), secrets.token_hex(16)
    log = work / "jupyterlab.log"
    with open(log, "wb") as sink:
        proc = subprocess.Popen(
            _lab_command(root, port, token, app),
            env=_lab_env(work),
            cwd=root,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, root, proc, log, app)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter-lab exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/api/status?token={token}", timeout=2):
                return server
        except OSError:
            time.sleep(0.25)
    stop_lab(server)
    raise RuntimeError(f"jupyter-lab did not answer in {timeout:.0f} s:\n{server.log_tail()}")


def stop_lab(server: LabServer, timeout: float = 20.0) -> None:
    """Shut the server (and its kernels) down: SIGTERM, then SIGKILL if it lingers."""
    if server.proc.poll() is not None:
        return
    server.proc.terminate()
    try:
        server.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(timeout)
