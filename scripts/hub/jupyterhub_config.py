"""A JupyterHub for one class on one machine: tapeviz's notebooks and assignments.

Dummy authentication (any name logs in; set TAPEVIZ_HUB_PASSWORD for one shared password)
and local processes (``SimpleLocalProcessSpawner``: no system accounts; each student's
home is a folder under TAPEVIZ_HUB_HOMES with a copy of the notebooks). Fine for a lab
session on a machine the class trusts; a real course puts its university's login
(an OAuthenticator) and per-user isolation (systemdspawner, DockerSpawner) in their place.

    jupyterhub -f scripts/hub/jupyterhub_config.py

See docs/course.md ("A JupyterHub for the class on one machine") for the setup and the
measured capacity.
"""

import json
import os
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821 - JupyterHub's config loader provides it

ROOT = Path(__file__).resolve().parents[2]
HOMES = Path(os.environ.get("TAPEVIZ_HUB_HOMES", "/tmp/tapeviz-hub-homes"))
PORT = int(os.environ.get("TAPEVIZ_HUB_PORT", "8000"))

c.JupyterHub.ip = "127.0.0.1"  # put TLS and a public address in front for a real class
c.JupyterHub.port = PORT
c.JupyterHub.hub_port = PORT + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
c.JupyterHub.db_url = f"sqlite:///{HOMES / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(HOMES / "jupyterhub_cookie_secret")
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ.get("TAPEVIZ_HUB_PASSWORD", "")
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {"instructor"}
c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = str(HOMES / "{username}")
c.Spawner.cmd = [str(Path(sys.executable).parent / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab/tree/notebooks/00_backprop_from_scratch.ipynb"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.mem_limit = os.environ.get("TAPEVIZ_HUB_MEM_LIMIT")  # advisory for local spawners
if os.geteuid() == 0:
    c.Spawner.args = ["--allow-root"]


def copy_course(spawner):
    """Each student starts with their own copy of the notebooks and the student assignments."""
    home = Path(spawner.home_dir_template.format(username=spawner.user.name))
    for folder in ("notebooks", "assignments/student"):
        target = home / Path(folder).name
        if not target.exists():
            shutil.copytree(ROOT / folder, target)


c.Spawner.pre_spawn_hook = copy_course


def quiet_lab(prefix=None) -> Path:
    """The students' JupyterLab (this environment's) opens on the notebook, not on the
    "get notified about official Jupyter news?" toast: binder/overrides.json merged into
    ``<prefix>/share/jupyter/lab/settings/overrides.json`` (what ``make lab`` installs)."""
    target = (
        Path(prefix or sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    )
    wanted = json.loads((ROOT / "binder" / "overrides.json").read_text(encoding="utf-8"))
    have = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {}
    for plugin, values in wanted.items():
        have.setdefault(plugin, {}).update(values)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(have, indent=2) + "\n", encoding="utf-8")
    return target


quiet_lab()
