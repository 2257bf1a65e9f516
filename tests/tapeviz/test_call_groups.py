"""Issue 35, item 7: two calls on one line are not a loop. Graph groups of the same code are
"turn k/n" only when a loop repeats the same call sites; two calls on one line (no loop
between them) are "call 1/2", "call 2/2", each with the part of the line that tells them
apart. ``core.engine.dispatch.source_location.Source`` carries which call recorded a node."""

from __future__ import annotations

import copy
import pickle

import numpy as np

import tapeviz as tv
from tapeviz.core.engine.source_location import Source, where
from tapeviz.graph.collapse import plan
from tapeviz.graph.extract import extract

Z = np.array([0.5, -1.0, 2.0])
Y = np.array([1.0, 0.0, 1.0])


def log_sigmoid(z):
    return tv.log(tv.sigmoid(z))


@tv.custom_grad
def log_sigmoid_op(z, save):
    save([z])
    return tv.log(tv.sigmoid(z)), lambda dy, s: dy * tv.sigmoid(-s[0])


def _labels(tape):
    return [g["label"] for g in plan(extract(tape), max_nodes=8, merge_repeats=False)["groups"]]


def _loss(f):
    z, y = tv.tensor(Z), tv.tensor(Y)
    with tv.Tape(persistent=True) as tape:
        tape.watch(z)
        loss = -tv.mean(y * f(z) + (1 - y) * f(-z))  # two calls on one line
    return tape, loss


def test_two_calls_on_one_line_are_calls_not_turns():
    for f in (log_sigmoid, log_sigmoid_op):  # a Python function, a custom op
        labels = _labels(_loss(f)[0])
        assert len(labels) == 2 and not any("turn " in s.split(" \u00b7 ")[1] for s in labels)
        assert labels[0].endswith("call 1/2: y * f(z)"), labels
        assert labels[1].endswith("call 2/2: (1 - y) * f(-z)"), labels


def test_a_loop_still_has_turns():
    h = tv.tensor(Z)
    with tv.Tape(persistent=True) as tape:
        for _ in range(3):
            h = tv.tanh(h * 2.0 + 1.0)
    labels = _labels(tape)
    assert [s.rsplit(" \u00b7 ", 1)[1] for s in labels] == ["turn 1/3", "turn 2/3", "turn 3/3"]
    with tv.Tape(persistent=True) as tape:  # a loop whose body calls a function
        for _ in range(2):
            h = log_sigmoid(h) * 2.0
    assert [s.rsplit(" \u00b7 ", 1)[1] for s in _labels(tape)] == ["turn 1/2", "turn 2/2"]


def test_a_loop_of_two_calls_on_one_line_numbers_both():
    h = tv.tensor(Z)
    with tv.Tape(persistent=True) as tape:
        for _ in range(2):
            h = log_sigmoid(h) * log_sigmoid(-h)
    tails = [s.split(" \u00b7 ", 1)[1] for s in _labels(tape)]
    calls = [t.split(":")[0] for t in tails]
    turns = [t.rsplit(", ", 1)[1] for t in tails]
    assert calls == ["call 1/2", "call 2/2"] * 2 and turns == ["turn 1/2"] * 2 + ["turn 2/2"] * 2
    texts = [t.split(": ", 1)[1].rsplit(", ", 1)[0] for t in tails]
    assert texts[0] != texts[1] and texts[:2] == texts[2:], texts  # told apart, per turn


def test_sources_without_call_sites_read_as_before():
    tape, _ = _loss(log_sigmoid)
    for node in tape.nodes:  # sources recorded elsewhere are plain tuples: no call site
        node.source = tuple(node.source)
    labels = _labels(tape)
    assert [s.rsplit(" \u00b7 ", 1)[1] for s in labels] == ["turn 1/2", "turn 2/2"]


def test_a_source_reads_as_its_three_tuple_and_keeps_its_call_site():
    tape, _ = _loss(log_sigmoid)
    s = tape.nodes[-1].source
    assert isinstance(s, Source) and s == (s[0], s[1], s[2]) and len(s) == 3
    file, line, func = s
    assert where(s) == f"{file}:{line} in {func}" and s.at is not None
    for twin in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert twin == s and (twin.at, twin.cols) == (s.at, s.cols)
    sites = {(n.source[1], n.source.at) for n in tape.nodes if n.source[1] == line}
    assert len(sites) > 1  # the ops of one line come from several call sites
