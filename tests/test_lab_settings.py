"""Issue 35, items 2 and 9: `make lab` builds only what the notebooks need, and every
JupyterLab we set up (make lab, binder, the class hub) opens on the notebook, not on the
"Would you like to get notified about official Jupyter news?" toast."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
OVERRIDES = ROOT / "binder" / "overrides.json"
PLUGIN = "@jupyterlab/apputils-extension:notification"


def _composite(app_settings_dir: pathlib.Path, tmp_path) -> dict:
    """The notification settings JupyterLab's own server code resolves with this
    ``app_settings_dir`` (schemas of the installed JupyterLab, no user settings)."""
    settings_utils = pytest.importorskip("jupyterlab_server.settings_utils")
    jupyterlab = pytest.importorskip("jupyterlab")
    schemas = pathlib.Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    if not (schemas / "@jupyterlab" / "apputils-extension" / "notification.json").exists():
        pytest.skip(f"no JupyterLab {jupyterlab.__version__} schemas under {schemas}")
    overrides, error = settings_utils._get_overrides(str(app_settings_dir))
    assert not error, error
    result, warnings = settings_utils.get_settings(
        str(app_settings_dir), str(schemas), str(tmp_path / "user"), schema_name=PLUGIN,
        overrides=overrides,
    )  # fmt: skip
    # the server applies overrides to the schema's defaults; the page reads those (and
    # a user's own settings, none here) as the composite
    defaults = {k: p.get("default") for k, p in result["schema"]["properties"].items()}
    return {**defaults, **result["settings"]}


def test_the_overrides_turn_the_news_question_off_in_jupyterlab(tmp_path):
    settings = tmp_path / "settings"
    settings.mkdir()
    before = _composite(settings, tmp_path)
    assert before["fetchNews"] == "none"  # JupyterLab's default: it asks (the toast)
    (settings / "overrides.json").write_text(OVERRIDES.read_text())
    after = _composite(settings, tmp_path)
    assert after["fetchNews"] == "false" and after["checkForUpdates"] is False


def _recipe(target: str) -> str:
    out = subprocess.run(
        ["make", "-n", "-B", "-C", str(ROOT), target], capture_output=True, text=True, check=True
    )
    return out.stdout


def test_make_lab_installs_the_notebooks_stack_and_the_overrides():
    lab = _recipe("lab")
    assert '-e ".[lab,slides]"' in lab and ".[test]" not in lab
    assert (
        "install -D -m 644 binder/overrides.json "
        ".venv/share/jupyter/lab/settings/overrides.json" in lab
    )
    test = _recipe("test")  # make test adds the rest, after what make lab installs
    assert test.index('".[lab,slides]"') < test.index('".[test]"') < test.index("pytest")
    assert "touch .venv/.installed\n" in test  # the stamp .ci/run and the docs rely on


def test_the_lab_extras_cover_what_the_notebooks_import():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert extras["slides"] == ["jupyterlab-rise>=0.43"]  # 00 and 02 are tagged as slides
    assert "tapeviz[slides]" in extras["course"] and "jupyterlab>=4" in extras["lab"]
    imported = set()
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                imported |= set(
                    re.findall(r"^\s*(?:import|from)\s+(\w+)", "".join(cell["source"]), re.M)
                )
    # each top-level import is the standard library, tapeviz, or in the lab extra's tree
    in_lab = {"numpy", "tapeviz", "numba", "matplotlib", "IPython", "sklearn"}
    assert imported - set(sys.stdlib_module_names) <= in_lab, imported


def test_binder_and_the_hub_install_the_overrides_too(tmp_path):
    post = (ROOT / "binder" / "postBuild").read_text()
    assert "binder/overrides.json" in post and "share/jupyter/lab/settings/overrides.json" in post
    prefix = tmp_path / "env"
    settings = prefix / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True)
    (settings / "overrides.json").write_text(json.dumps({"x:y": {"keep": 1}}))
    code = (
        "import runpy, sys, types\n"
        f"sys.prefix = {str(prefix)!r}\n"
        "cfg = types.SimpleNamespace()\n"
        "class Any:\n"
        "    def __getattr__(self, name):\n"
        "        return self\n"
        "    def __setattr__(self, name, value):\n"
        "        pass\n"
        f"runpy.run_path({str(ROOT / 'scripts/hub/jupyterhub_config.py')!r},"
        " init_globals={'get_config': Any})\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
    merged = json.loads((settings / "overrides.json").read_text())
    assert merged["x:y"] == {"keep": 1}  # what was there stays
    assert merged[PLUGIN] == json.loads(OVERRIDES.read_text())[PLUGIN]
    assert _composite(settings, tmp_path)["fetchNews"] == "false"
