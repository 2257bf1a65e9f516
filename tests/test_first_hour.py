"""Issue 35, item 8: a newcomer's polish. check_grads says it passed in a notebook and stays
quiet in a script; ``tv.__all__`` holds no ``__future__`` feature; every notebook cell has an
id; the README's "Ten lines" label what they print; the memory inspector's graph box is as
tall as its graph."""

from __future__ import annotations
import __future__

import json
import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

import tapeviz as tv

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _script(code: str, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )


def test_a_passing_check_grads_is_quiet_in_a_script(tmp_path):
    out = _script(
        "import tapeviz as tv\ntv.check_grads(lambda x: tv.tanh(x) * x, [0.5])\n", tmp_path
    )
    assert out.returncode == 0 and out.stdout == "", out.stdout + out.stderr


@pytest.fixture
def notebook(monkeypatch):
    """This process as a Jupyter kernel sees it: IPython's shell with a kernel."""
    shell = types.SimpleNamespace(kernel=object())
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake)


def test_a_passing_check_grads_says_so_in_a_notebook(notebook, capsys):
    report = tv.check_grads(lambda x: tv.tanh(x) * x, [0.5, -1.0])
    assert report.passed  # and the report is returned
    line = capsys.readouterr().out
    assert re.fullmatch(
        r"passed: check_grads\(<lambda>\): 2 checks, worst abs err \S+ \(band \S+\)\n", line
    ), line
    tv.check_grads(lambda x: tv.tanh(x) * x, [0.5], raise_on_failure=False)  # the widget's
    assert capsys.readouterr().out == ""
    with tv.gradient_override("Tanh", lambda dy, s, a: {"x": lambda: dy * 2.0}):
        with pytest.raises(tv.GradientCheckError):
            tv.check_grads(lambda x: tv.tanh(x), [0.5, -1.0])
    assert "passed" not in capsys.readouterr().out


def test_a_terminal_ipython_is_a_script(monkeypatch, capsys):
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: types.SimpleNamespace()  # no kernel: a terminal
    monkeypatch.setitem(sys.modules, "IPython", fake)
    tv.check_grads(lambda x: tv.tanh(x) * x, [0.5])
    assert capsys.readouterr().out == ""


def test_all_holds_no_future_feature():
    for module in (tv, tv.core):
        features = [
            n for n in module.__all__ if isinstance(getattr(module, n, None), __future__._Feature)
        ]
        assert features == [] and "annotations" not in module.__all__


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_notebook_cell_has_an_id(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5)  # ids are part of 4.5
    missing = [i for i, c in enumerate(nb["cells"]) if not c.get("id")]
    assert missing == [], f"{path.name}: cells {missing} have no id (MissingIDFieldWarning)"
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids), f"{path.name}: repeated cell ids"


def test_the_ten_lines_label_what_they_print(tmp_path):
    from test_readme import python_blocks

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = python_blocks(text.split("## Ten lines", 1)[1].split("\n## ", 1)[0])
    out = _script(block, tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    starts = [line for line in out.stdout.splitlines() if line and not line.startswith(" ")]
    assert starts and all(re.match(r"[A-Za-z][\w ]*: ", s) for s in starts), out.stdout


def test_the_memory_graph_box_is_as_tall_as_its_graph():
    css = (ROOT / "tapeviz" / "static" / "memory_view.css").read_text(encoding="utf-8")
    (rule,) = re.findall(r"\.tv-mem \.tv-mem-graph \{([^}]*)\}", css)
    assert "max-height" not in rule and "height:" not in rule.replace(" ", ""), rule
