"""Issue 35, item 4: the audit's HTML (what a notebook shows) says all its text says (node,
file:line, the mistake, the worst entry, analytic against numerical), and
``report.show_graph()`` draws the tape with the wrong nodes red."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core import display
from tapeviz.core.engine import source_location


@tv.custom_grad
def doubled_tanh(x, save):  # planted: the gradient counted twice
    save([x])
    return tv.tanh(x), lambda dy, saved: dy * (1 - tv.tanh(saved[0]) ** 2) * 2.0


@tv.custom_grad
def minus_sigmoid(x, save):  # planted: σ(z) for σ(-z)
    save([x])
    return tv.log(tv.sigmoid(x)), lambda dy, saved: dy * tv.sigmoid(saved[0])


def _audit():
    x = tv.tensor(np.array([0.5, -1.0, 2.0]), dtype="float64")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        tv.sum(doubled_tanh(x) * tv.exp(x) + minus_sigmoid(x))
    return tape, tv.audit(tape)


def test_the_html_shows_what_the_text_shows():
    _, report = _audit()
    assert len(report.failures) == 2
    page = report._repr_html_()
    for n in report.failures:
        text = "\n".join(n.lines())
        assert str(n.node_id) in page and html.escape(n.label) in page
        where = source_location.where(n.source, func=False)
        assert where in text and html.escape(where) in page  # file:line
        for verdict in n.report.verdicts:  # the mistake, named
            assert verdict in text and html.escape(verdict) in page
        for c in n.report.checks:
            worst = re.search(r"worst at (\(.*?\)): analytic (\S+) vs numerical (\S+) ", c.line())
            index, analytic, numerical = worst.groups()
            assert all(s in page for s in (index, analytic, numerical)), (c.line(), page)
    assert "report.show_graph()" in page


def test_a_passing_audit_offers_no_graph():
    x = tv.tensor([0.5, 1.5])
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        tv.sum(tv.tanh(x) * x)
    page = tv.audit(tape)._repr_html_()
    assert "PASS" in page and "show_graph" not in page and "<table>" not in page


def test_show_graph_draws_the_wrong_nodes_red_with_their_mistake():
    tape, report = _audit()
    graph = report.show_graph()
    assert isinstance(graph, tv.GraphWidget) and graph.tape is tape
    want = {f"n{n.node_id}": ("error", n.report.verdicts[0].split(":")[0]) for n in report.failures}
    assert dict(graph.highlighted) == want
    assert set(want) == {f"n{i}" for i in report.failed_node_ids}
    texts = {t for _, t in want.values()}
    assert texts == {"off by the same factor at every entry", "looks like the gradient at -x"}
    svg = graph.svg
    assert all(t in html.unescape(svg) for t in texts)


def test_show_graph_without_a_tape_or_the_widgets_says_why():
    _, report = _audit()
    report.tape = None
    with pytest.raises(ValueError, match="holds no tape"):
        report.show_graph()
    with pytest.raises(ImportError, match=r"import tapeviz .*tapeviz\[viz\]"):
        display.view("no such view", "AuditReport.show_graph")
