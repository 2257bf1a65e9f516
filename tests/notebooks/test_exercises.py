"""Every exercise grades: its placeholder and a wrong answer get "not yet", the right answer
"correct".

An exercise is a code cell tagged ``exercise`` (shipped with ``...`` placeholders) followed by
a check cell calling ``check("<name>", …)`` (``tapeviz.teach``). A check never raises, so the
notebook still runs top to bottom (tests/notebooks/test_notebooks.py) with the placeholders
in place; here each notebook runs once with, after every check cell, a wrong answer and its
check, then the right answer and its check. The answers live in this test, not in the
notebooks.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbenv import NOTEBOOKS_DIR
from test_notebooks import execute_notebook, kernel_env  # noqa: F401 - the fixture

CHECK = re.compile(r"""\bcheck\(\s*["']([^"']+)["']""")

# exercise name -> (a wrong answer, the right answer), as the exercise cell's new source
ANSWERS = {
    "00.L=d*f": ("d_grad = 2.0\nf_grad = 4.0", "d_grad = -2.0\nf_grad = 4.0"),
    "00.d=e+c": ("e_grad = 1.0\nc_grad = 1.0", "e_grad = -2.0\nc_grad = -2.0"),
    "00.e=a*b": ("a_grad = 3.0\nb_grad = -2.0", "a_grad = 6.0\nb_grad = -4.0"),
    "00.b=a+a": ("a_grad = 1.0", "a_grad = 2.0"),
    "00.neuron": (  # wrong: tanh's local derivative taken as 1 - o, not 1 - o**2
        "n_grad = 1 - 0.7071\nx1_grad = -3 * n_grad\nw1_grad = 2 * n_grad\nx2_grad = n_grad\n"
        "w2_grad = 0.0",
        "n_grad = 0.5\nx1_grad = -1.5\nw1_grad = 1.0\nx2_grad = 0.5\nw2_grad = 0.0",
    ),
    "02.two-layer": (
        "dz = dh * (1 - z**2)\ndW1 = X.T @ dz",  # tanh'(z) written with z, not h
        "dz = dh * (1 - h**2)\ndW1 = X.T @ dz",
    ),
    "02.sigmoid-slope": ("answer_1 = 0.5", "answer_1 = 0.25"),
    "02.sum(Mv)": ("answer_2 = [1, 1]", "answer_2 = M.sum(axis=0).tolist()"),
    "02.x*x": ("answer_3 = (3, 3, 3)", "answer_3 = (3, 3, 6)"),
}


def exercises(nb) -> list[tuple[int, str]]:
    """``(index of the exercise cell, exercise name)`` for every tagged exercise."""
    found = []
    for i, cell in enumerate(nb.cells):
        if "exercise" in cell.metadata.get("tags", []):
            nxt = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
            match = CHECK.search(nxt.source) if nxt is not None else None
            assert match, f"exercise cell {i} is not followed by a check(...) cell"
            found.append((i, match.group(1)))
    return found


def _with_answers(nb):
    """A copy of ``nb`` with wrong and right attempts after each check; returns it and
    ``{check cell index: (name, "placeholder" | "wrong" | "right")}``."""
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    roles, marks = {}, dict(exercises(nb))
    cells = list(nb.cells)
    for i, cell in enumerate(cells):
        out.cells.append(cell)
        if i - 1 in marks:
            name = marks[i - 1]
            roles[len(out.cells) - 1] = (name, "placeholder")
            for role, source in zip(("wrong", "right"), ANSWERS[name]):
                out.cells.append(nbformat.v4.new_code_cell(source))
                out.cells.append(nbformat.v4.new_code_cell(cell.source))
                roles[len(out.cells) - 1] = (name, role)
    return out, roles


def _verdict(cell) -> str:
    texts = [o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])]
    errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"a check cell raised: {errors[0].ename}: {errors[0].evalue}"
    (text,) = [t for t in texts if t.startswith("exercise ")]
    return text


def notebooks_with_exercises():
    paths = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
    return [p for p in paths if exercises(nbformat.read(p, as_version=4))]


def test_every_exercise_has_answers_here():
    names = [n for p in notebooks_with_exercises() for _, n in exercises(nbformat.read(p, 4))]
    assert names and sorted(names) == sorted(ANSWERS), "ANSWERS and the notebooks disagree"
    for p in notebooks_with_exercises():
        for i, _ in exercises(nbformat.read(p, as_version=4)):
            assert "..." in nbformat.read(p, as_version=4).cells[i].source, (p.name, i)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("path", notebooks_with_exercises(), ids=lambda p: p.name)
def test_placeholder_and_wrong_fail_right_passes(path, tmp_path, kernel_env):  # noqa: F811
    nb, roles = _with_answers(nbformat.read(path, as_version=4))
    probe = tmp_path / path.name
    nbformat.write(nb, probe)
    ran = execute_notebook(probe, NOTEBOOKS_DIR)
    for index, (name, role) in roles.items():
        text = _verdict(ran.cells[index])
        want = "correct" if role == "right" else "not yet"
        assert text.startswith(f"exercise {name}: {want}"), f"{role} answer of {name}: {text}"


# what "Run All" on the untouched notebook must show instead of an answer, by notebook: the
# engine's gradients as "?" until the student's agree, "show me" left unpressed
UNANSWERED = {
    "00_backprop_from_scratch.ipynb": [
        "d/da: yours …, engine ?",
        "answer the last step in the stepper above, or set SHOW_ME = True",
    ],
    "02_backprop_by_hand.ipynb": ["the engine's steps appear here once your dz and dW1 check"],
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", sorted(UNANSWERED))
def test_run_all_shows_no_answer(name, kernel_env):  # noqa: F811
    ran = execute_notebook(NOTEBOOKS_DIR / name, NOTEBOOKS_DIR)
    outputs = [out for cell in ran.cells for out in cell.get("outputs", [])]
    joined = "\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs)
    for expected in UNANSWERED[name]:
        assert expected in joined, f"{name}: expected {expected!r} in the outputs"
    typeset = [o for o in outputs if "text/latex" in o.get("data", {})]
    assert not typeset, f"{name}: Run All typeset a worked line: {typeset[0]['data']['text/latex']}"
