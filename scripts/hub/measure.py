"""Measure a class on one machine: N simulated students on the JupyterHub of
``jupyterhub_config.py``, each opening notebook 00 and an assignment at once and running
every cell (as "Run All" does), over the hub's proxy. Not part of ``make test``.

For each N: create N users and start their servers together (the spawn time); then every
student opens both notebooks (two kernels) and runs all their cells, concurrently (the
time until the last cell of each notebook has run); the memory is the proportional set
size (PSS: shared pages split among the processes sharing them) of the hub, the proxy and
every student's server and kernels. Prints a table and writes JSON.

    python scripts/hub/measure.py --students 1 4 8 --out hub.json

Needs ``pip install jupyterhub`` in the course environment and ``npm install -g
configurable-http-proxy``; sends traffic only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import nbformat
import psutil
import requests
import websocket

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NOTEBOOKS = ("notebooks/00_backprop_from_scratch.ipynb", "student/b_value.ipynb")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub:
    """JupyterHub in a subprocess, with an admin service token for its REST API."""

    def __init__(self, homes: Path, port: int):
        self.token, self.port, self.homes = secrets.token_hex(16), port, homes
        self.url = f"http://127.0.0.1:{port}"
        service = homes / "service_config.py"
        service.write_text(
            "c = get_config()\n"
            f"c.JupyterHub.services = [{{'name': 'measure', 'api_token': '{self.token}'}}]\n"
            "c.JupyterHub.load_roles = [{'name': 'measure', 'services': ['measure'], 'scopes': "
            "['admin:users', 'admin:servers', 'access:servers', 'read:users']}]\n"
            f"load_subconfig({str(HERE / 'jupyterhub_config.py')!r})\n"
        )
        env = dict(os.environ, TAPEVIZ_HUB_HOMES=str(homes), TAPEVIZ_HUB_PORT=str(port))
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        self.log = open(homes / "hub.log", "wb")
        exe = Path(sys.executable).parent / "jupyterhub"
        self.proc = subprocess.Popen([str(exe), "-f", str(service)], cwd=homes, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT)  # fmt: skip
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"token {self.token}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyterhub exited: see {homes / 'hub.log'}")
            try:
                if self.session.get(f"{self.url}/hub/api/", timeout=2).ok:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise RuntimeError("jupyterhub did not answer in 120 s")

    def api(self, method: str, path: str, **kw):
        r = self.session.request(method, f"{self.url}/hub/api{path}", timeout=300, **kw)
        r.raise_for_status()
        return r.json() if r.content else None

    def pss_mb(self) -> float:
        """PSS of the hub and every process under it (proxy, servers, kernels), in MB."""
        procs = [psutil.Process(self.proc.pid)] + psutil.Process(self.proc.pid).children(True)
        total = 0
        for p in procs:
            try:
                total += p.memory_full_info().pss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return total / 2**20

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def spawn(hub: Hub, names: list[str], timeout: float = 600) -> dict:
    """Start every student's server at once; seconds until each was ready (or the error)."""
    hub.api("POST", "/users", json={"usernames": names})
    started, ready = time.monotonic(), {}
    for name in names:
        hub.api("POST", f"/users/{name}/server")
    while len(ready) < len(names) and time.monotonic() - started < timeout:
        for name in names:
            if name not in ready:
                server = hub.api("GET", f"/users/{name}")["servers"].get("", {})
                if server.get("ready"):
                    ready[name] = time.monotonic() - started
        time.sleep(1)
    return {n: ready.get(n, f"not ready after {timeout:.0f} s") for n in names}


def run_notebook(hub: Hub, user: str, path: str, out: dict) -> None:
    """Open ``path`` in a new kernel of ``user``'s server and run every code cell in order."""
    base = f"{hub.url}/user/{user}/api"
    started = time.monotonic()
    try:
        r = hub.session.post(f"{base}/sessions", timeout=300, json={
            "path": path, "type": "notebook", "kernel": {"name": "python3"}})  # fmt: skip
        r.raise_for_status()
        kernel = r.json()["kernel"]["id"]
        ws = websocket.create_connection(
            f"ws://127.0.0.1:{hub.port}/user/{user}/api/kernels/{kernel}/channels",
            header=[f"Authorization: token {hub.token}"], timeout=600)  # fmt: skip
        cells = [c.source for c in nbformat.read(ROOT / _local(path), 4).cells
                 if c.cell_type == "code"]  # fmt: skip
        errors = [e for code in cells if (e := _execute(ws, code))]
        ws.close()
        out[(user, path)] = {"seconds": time.monotonic() - started, "errors": errors}
    except Exception as e:  # what breaks is the result here, not a crash of the script
        out[(user, path)] = {"seconds": time.monotonic() - started, "errors": [repr(e)[:300]]}


def _local(path: str) -> str:
    return path if path.startswith("notebooks/") else f"assignments/{path}"


def _execute(ws, code: str) -> str | None:
    """Send one execute_request; wait for its reply; the error name if the cell raised."""
    msg_id, session = uuid.uuid4().hex, uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": session,
                   "username": "student", "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True,
                    "user_expressions": {}, "allow_stdin": False, "stop_on_error": False},
    }))  # fmt: skip
    while True:
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "execute_reply":
            content = msg["content"]
            return None if content["status"] == "ok" else content.get("ename", "error")


def one_round(hub: Hub, n: int, tag: str) -> dict:
    names = [f"{tag}s{i}" for i in range(n)]
    before = hub.pss_mb()
    spawned = spawn(hub, names)
    idle = hub.pss_mb()
    results, threads = {}, []
    peak = [idle]

    def sample():
        while any(t.is_alive() for t in threads):
            peak[0] = max(peak[0], hub.pss_mb())
            time.sleep(1)

    started = time.monotonic()
    for name in names:
        for path in NOTEBOOKS:
            threads.append(threading.Thread(target=run_notebook, args=(hub, name, path, results)))
    for t in threads:
        t.start()
    sampler = threading.Thread(target=sample)
    sampler.start()
    for t in threads:
        t.join()
    sampler.join()
    after = hub.pss_mb()
    wall = time.monotonic() - started
    for name in names:
        hub.api("DELETE", f"/users/{name}/server")
    time.sleep(3)
    for name in names:
        hub.api("DELETE", f"/users/{name}")
    spawn_s = [v for v in spawned.values() if isinstance(v, float)]
    runs = {p: sorted(r["seconds"] for (u, q), r in results.items() if q == p) for p in NOTEBOOKS}
    return {
        "students": n,
        "spawn_s_max": max(spawn_s) if spawn_s else None,
        "spawn_failures": [f"{k}: {v}" for k, v in spawned.items() if not isinstance(v, float)],
        "run_all_s": {p: {"median": r[len(r) // 2], "max": r[-1]} for p, r in runs.items() if r},
        "wall_s": wall,
        "errors": sorted({e for r in results.values() for e in r["errors"]}),
        "pss_mb": {"before": before, "servers_idle": idle, "peak": peak[0], "after": after},
        "mb_per_student_peak": (peak[0] - before) / n,
        "mb_per_student_after": (after - before) / n,
        "load_avg_1min": os.getloadavg()[0],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--out", type=Path, default=Path("hub-measure.json"))
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tapeviz-hub-") as tmp:
        hub = Hub(Path(tmp), free_port())
        try:
            for i, n in enumerate(args.students):
                row = one_round(hub, n, f"r{i}")
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            hub.stop()
    info = {"cores": os.cpu_count(), "memory_gb": psutil.virtual_memory().total / 2**30}
    args.out.write_text(json.dumps({"machine": info, "rounds": rows}, indent=1))
    print("\n| students | spawn (max s) | Run All 00 (median/max s) | Run All B (median/max s) "
          "| MB/student (peak) | errors |\n|---|---|---|---|---|---|")  # fmt: skip
    for r in rows:
        a, b = (r["run_all_s"].get(p, {}) for p in NOTEBOOKS)
        print(
            f"| {r['students']} | {r['spawn_s_max'] or '—':.4} | {a.get('median', 0):.1f} / "
            f"{a.get('max', 0):.1f} | {b.get('median', 0):.1f} / {b.get('max', 0):.1f} | "
            f"{r['mb_per_student_peak']:.0f} | {', '.join(r['errors']) or 'none'} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
