"""tv.show_graph where a newcomer first calls it: a plain script, and PNG without system dot."""

import io
import os
import pathlib
import subprocess
import sys

import numpy as np
from PIL import Image

import tapeviz as tv
from tapeviz.graph.show import NOT_SHOWN

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = """
import tapeviz as tv
x = tv.tensor([0.5, -1.0], name="x")
with tv.Tape() as tape:
    tape.watch(x)
    y = tv.sum(tv.tanh(x))
{line}
print("done")
"""


def _script(line: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = SCRIPT.format(line=line)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_a_plain_script_is_told_how_to_see_the_graph(tmp_path):
    out = _script("tv.show_graph(tape)", tmp_path)
    assert out.returncode == 0, out.stderr
    assert NOT_SHOWN in out.stderr and ".save(" in NOT_SHOWN


def test_a_saved_graph_needs_no_hint(tmp_path):
    out = _script('tv.show_graph(tape).save("g.svg")', tmp_path)
    assert out.returncode == 0, out.stderr
    assert NOT_SHOWN not in out.stderr
    assert (tmp_path / "g.svg").read_text().lstrip().startswith("<svg")


def test_png_without_system_graphviz(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere: the wasm path
    x = tv.tensor([0.5, -1.0], name="x")
    view = tv.show_graph(lambda x: tv.sum(tv.tanh(x) * x), x, backward="both")
    path = view.save(tmp_path / "g.png")
    image = Image.open(io.BytesIO(path.read_bytes()))
    assert image.format == "PNG"
    width_pt = float(view.to_svg().split('width="', 1)[1].split("pt", 1)[0])
    assert abs(image.width - width_pt * 96 / 72 * 2) <= 2  # 2x a browser's size
    pixels = np.asarray(image.convert("L"))
    assert (pixels < 128).mean() > 0.005  # dark strokes and text, not a blank canvas


CELLS = [
    "import tapeviz as tv\nfrom tapeviz.graph import extract\nfrom tapeviz.graph.details import node_details",
    "x = tv.tensor([1.0, 2.0])\nwith tv.Tape() as tape:\n    tape.watch(x)\n    y = tv.sum(tv.exp(x))",
    "src = extract(tape).ops[0]['source']\nprint(src['file'])\nprint(src['text'])",
    "try:\n    with tv.detect_anomaly():\n        tv.log(tv.tensor([-1.0]))\n"
    "except tv.AnomalyError as e:\n    print(repr(str(e)))",
]


def test_a_notebook_cell_is_named_by_its_execution_count(tmp_path):
    # an in-process IPython shell with ipykernel's compiler: cells compile to the kernel's
    # temporary files (…/ipykernel_<pid>/<hash>.py), as in Jupyter
    program = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from ipykernel.compiler import XCachingCompiler\n"
        "shell = InteractiveShell.instance(compiler_class=XCachingCompiler)\n"
        f"for cell in {CELLS!r}:\n"
        "    assert shell.run_cell(cell, store_history=True).success, cell\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr
    file, text, anomaly = out.stdout.strip().splitlines()[-3:]
    assert "ipykernel_" in file and file.endswith(".py")  # what the engine saw
    assert text == "In [2], line 4"  # what a person reads: the tape was recorded in cell 2
    assert "In [4], line 3" in anomaly and "ipykernel_" not in anomaly  # core's messages too


def test_a_file_is_named_by_its_basename():
    from tapeviz.graph.cells import source_record, source_text

    src = source_record(("/home/me/train.py", 12, "step"))
    assert src["cell"] is None and src["text"] == "train.py:12"
    assert source_text(src) == "/home/me/train.py:12 in step"
