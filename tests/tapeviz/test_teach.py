"""The grader: placeholders and wrong answers get "not yet: <the pattern>", right ones
"correct"; the package holds no answer and its feedback gives no direction to search in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tapeviz.teach
from tapeviz.teach import check, exercise_names
from tapeviz.teach.patterns import PATTERNS, describe
from tapeviz.teach.seal import SEALED

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "assignments" / "source"))
import seal_exercises  # noqa: E402  (the instructor's references, outside the package)

M = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
GIVEN = {"02.sum(Mv)": dict(M=M), "02.two-layer": seal_exercises.two_layer_data()}


def _check(name, answers):
    if list(answers) == ["answer"]:
        return check(name, answers["answer"], given=GIVEN.get(name))
    return check(name, given=GIVEN.get(name), **answers)


@pytest.mark.parametrize("name", sorted(seal_exercises.exercises()))
def test_each_reference_passes_and_each_misconception_is_named(name):
    answers, praise, wrong, _ = seal_exercises.exercises()[name]
    right = _check(name, answers)
    assert right.correct and right.message == praise, right
    for key, items in wrong.items():
        for value, message in items:
            verdict = _check(name, dict(answers, **{key: value}))
            assert not verdict and verdict.message.endswith(message), verdict


@pytest.mark.parametrize("name", sorted(seal_exercises.exercises()))
def test_sign_and_factor_are_named_for_every_answer(name):
    answers = seal_exercises.exercises()[name][0]
    for key, value in answers.items():
        v = np.asarray(value, np.float64)
        if not v.any():
            continue
        sign = _check(name, dict(answers, **{key: -v}))
        assert PATTERNS["sign"] in sign.message, sign
        double = _check(name, dict(answers, **{key: 2 * v}))
        assert PATTERNS["factor"] in double.message, double
        near = _check(name, dict(answers, **{key: v + 0.002 * np.abs(v).max()}))
        assert not near, near  # a near miss is a miss (the tolerance is ~1.5e-4 relative)


def test_arrays_name_an_offset_or_the_entries_off():
    answers = seal_exercises.exercises()["02.two-layer"][0]
    shifted = _check("02.two-layer", dict(answers, dz=answers["dz"] + 0.05))
    assert shifted.message == "dz: " + PATTERNS["offset"]
    one = answers["dW1"].copy()
    one[1, 2] += 0.3
    some = _check("02.two-layer", dict(answers, dW1=one))
    assert some.message == "dW1: " + PATTERNS["some"].format(n=1, size=15, index=(1, 2))


def test_scalar_feedback_gives_no_direction():
    """ "too large / too small" let a student binary-search; every other wrong number now
    reads the same, whatever side of the answer it is on."""
    words = {check("02.sigmoid-slope", x).message for x in (0.1, 0.2, 0.3, 0.4, 7.0, -3.0)}
    assert words == {PATTERNS["scalar"]}
    assert check("02.sigmoid-slope", 0.25 + 1e-6)  # within the tolerance


def test_placeholders_missing_keys_shapes_data():
    assert check("02.sigmoid-slope", ...).message == PATTERNS["placeholder"]
    assert "pass f_grad" in check("00.L=d*f", d_grad=-2.0).message
    assert "shape (2,), got (1,)" in check("02.sum(Mv)", [9.0], given=dict(M=M)).message
    assert "expected numbers" in check("02.x*x", "six").message
    assert "NaN or Inf" in check("02.sigmoid-slope", float("nan")).message
    assert "data changed" in check("02.sum(Mv)", [9, 12], given=dict(M=M * 2)).message
    assert "data changed" in check("02.sum(Mv)", [9, 12]).message


def test_verdicts_display_and_unknown_names():
    html = check("00.b=a+a", a_grad=1.0)._repr_html_()
    assert "not yet" in html and "one edge" in html
    assert "correct" in check("00.b=a+a", a_grad=2.0)._repr_html_()
    with pytest.raises(KeyError, match="no exercise 'nope'.*00.L=d\\*f"):
        check("nope", 1)
    assert set(seal_exercises.exercises()) == set(exercise_names())


def test_the_package_holds_no_answers():
    """Only hashes, shapes and grid exponents: no float anywhere in the sealed table, and no
    function in tapeviz.teach that computes an exercise's answer."""

    def floats(node):
        if isinstance(node, float):
            yield node
        elif isinstance(node, dict):
            for v in node.values():
                yield from floats(v)
        elif isinstance(node, list):
            for v in node:
                yield from floats(v)

    assert list(floats(json.loads(SEALED.read_text()))) == []
    assert not hasattr(tapeviz.teach, "EXERCISES")
    package = ROOT / "tapeviz"
    for path in package.rglob("*.py"):
        text = path.read_text()
        assert "reference(" not in text and "6.8813735870195432" not in text, path


def test_describe_names_each_pattern_and_never_the_value():
    x = np.array([-2.0, -0.5, 0.5, 3.0])
    want = np.where(x > 0, 1.7, 0.17)
    assert describe(want, want) is None
    cases = {
        "sign": -want,
        "factor": 3 * want,
        "offset": want + 0.7,
        "zero": np.zeros(4),
        "where": np.where(x > 0, 1.7, 0.0),  # the x < 0 branch forgotten
    }
    for pattern, got in cases.items():
        words = describe(got, want, where={"x < 0": x < 0})
        assert words.startswith(PATTERNS[pattern].split("{")[0]), (pattern, words)
        for v in want:
            assert f"{v:g}" not in words.replace("x < 0", "")
    assert describe([1.0, 2.0], want).startswith("expected shape (4,)")
    assert describe(..., want) == PATTERNS["placeholder"]
    assert describe(np.array([1.0, 9.0, 5.0, 4.0]), want).startswith("4 of 4 entries")


def test_reveal_shows_the_engine_only_where_you_agree():
    import tapeviz as tv
    from tapeviz.teach import reveal

    a, b = tv.tensor(2.0, dtype="float64"), tv.tensor(-3.0, dtype="float64")
    c = tv.tensor(10.0, dtype="float64")
    with tv.Tape() as tape:
        tape.watch([a, b, c])
        e = a * b
        d = e + c
    tape.gradient(d, [a, b, c])
    r = reveal(tape, a=-3.0, b=..., c=-1.0, e=1.0)
    assert r.hidden == ["b", "c"]
    rows = {n: (want, verdict) for n, _, want, verdict in r.rows}
    assert rows["a"] == (-3.0, "agrees") and rows["b"] == (None, PATTERNS["placeholder"])
    assert rows["c"] == (None, PATTERNS["sign"])
    dot = r.graph.to_dot()
    assert dot.count("grad ?") == 2 and "grad 2" not in dot  # b's gradient is a = 2
    assert "engine ?" in repr(r) and "2" not in repr(r).split("d/db")[1].split("\n")[0]
    shown = reveal(tape, show=True, a=..., b=...)
    assert shown.hidden == [] and "grad ?" not in shown.graph.to_dot()
    with pytest.raises(ValueError, match="no tensor named zz.*names: a, b, c, d, e"):
        reveal(tape, zz=1.0)
