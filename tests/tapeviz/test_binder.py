"""binder/requirements.txt pins exactly what pyproject.toml's "lab" extra installs."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def _expand(extras: dict, name: str) -> set[str]:
    out = set()
    for req in extras[name]:
        if req.startswith("tapeviz["):
            for sub in req[len("tapeviz[") : -1].split(","):
                out |= _expand(extras, sub)
        else:
            out.add(req)
    return out


def test_binder_pins_match_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    want = set(project["dependencies"]) | _expand(project["optional-dependencies"], "lab")
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    got = {ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")}
    assert got == want, f"only in binder: {got - want}; only in pyproject: {want - got}"
    assert "pip install --no-deps ." in (ROOT / "binder" / "postBuild").read_text()
