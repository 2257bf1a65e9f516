"""Issue 33 item 14: any name renders. A control character in a tensor name (an ANSI colour
code, a form feed, a bell) made the graph's SVG invalid XML, so the widget drew nothing and its
error stayed empty; a NUL or a lone surrogate gave an error that did not name the tensor.

Threat model: a name is any Python string (user code, a loaded checkpoint, a name built from
data). It can hold what XML forbids (C0 controls, U+FFFE), what Graphviz stops at (NUL), what
UTF-8 cannot encode (a lone surrogate: a widget message holding one is never sent), what
reorders the text after it (bidi overrides), what is markup (``<script>``, quotes, ``&``,
``]]>``, ``<!--``) or DOT syntax (``{}|<>\\"``, ``\\N``), and it can be very long. Each goes
through a tensor name, a Variable name and a name scope into ``tv.show_graph(...).to_dot()``,
the SVG of each Graphviz engine (parsed with ``xml.etree``), the GraphWidget, the
BackpropStepper, the MemoryInspector and ``tv.show_code``; every widget's state must serialise
as Jupyter sends it and hold no such character, no markup may become an element, and the name
must be readable (its ``visible`` form) in the drawing."""

from __future__ import annotations

import html.parser
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from graph_cases import ENGINES
from ipywidgets.widgets import widget as ipw
from jupyter_client.session import json_packer

import tapeviz as tv
from tapeviz.graph import extract, render_svg, to_dot
from tapeviz.present.text import visible

HOSTILE = [
    "\x1b[31mred\x1b[0m", "form\x0cfeed", "bell\x07", "nul\x00byte", "lone\ud800high",
    "lone\udfffLow", "esc\udc80aped", "rtl\u202eevil", "rlm\u200fmark", "iso\u2066late\u2069",
    "<script>alert(1)</script>", "q\"uo'te", "dot{}[]|<>\\\"", "\\N\\G\\l", "a&amp;b]]><!--c-->",
    "cr\rlf\r\n", "tab\tnl\n", "del\x7fc1\x85", "nonchar\ufffe\uffff", "σ²_W₁ 🎉 e\u0301",
    "", "  ", "x" * 5000,
]  # fmt: skip
_BAD = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]"
)
SVG_TEXT = "{http://www.w3.org/2000/svg}text"


def _ids(name):
    return ascii(name)[:24]


def _tape(name):
    x = tv.tensor([0.5, -1.0], name=name)
    w = tv.variable([2.0, 3.0], name=name + "w")
    with tv.Tape(persistent=True) as tape:
        tape.watch(x)
        with tv.name_scope(name.replace("/", "|") or "s"):  # a scope holds no "/"
            h = tv.tanh(x * w)
        y = tv.sum(h * x)
    tape.gradient(y, [x, w])
    return tape


@pytest.mark.parametrize("name", HOSTILE, ids=_ids)
def test_the_dot_holds_no_hidden_character(name):
    dot = to_dot(extract(_tape(name)), html_labels=True)
    dot.encode("utf-8")  # a lone surrogate cannot be encoded: it must not be there
    assert not _BAD.search(dot.replace("\t", " ")), ascii(dot)[:300]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", HOSTILE, ids=_ids)
def test_the_svg_parses_as_xml_and_draws_the_name(name, engine):
    svg = render_svg(extract(_tape(name)), engine=engine)
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    assert not any(e.tag.endswith("script") for e in root.iter())
    texts = " ".join("".join(e.itertext()) for e in root.iter(SVG_TEXT))
    shown = "".join(visible(name).split("\n")[0].split())  # Graphviz may drop a tab
    if shown and len(shown) < 100:
        assert shown[:20] in "".join(texts.split()), (shown, texts[:500])


def _new_widgets(make):
    before = set(ipw._instances)
    obj = make()
    made = [w for k, w in ipw._instances.items() if k not in before]
    return obj, made


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def _check_state(made, name):
    assert made
    for w in made:
        state = w.get_state()
        json_packer(state)  # as Jupyter sends it: a lone surrogate raised here
        for key, value in state.items():
            if not isinstance(value, str) or key in ("_esm", "_css"):
                continue
            assert not _BAD.search(value.replace("\t", " ")), (type(w).__name__, key)
            if "<" in value:
                parser = _Tags()
                parser.feed(value)
                assert "script" not in parser.tags, (type(w).__name__, key)


@pytest.mark.parametrize("name", HOSTILE, ids=_ids)
def test_the_graph_widget_draws_it(name):
    tape = _tape(name)
    w, made = _new_widgets(lambda: tv.GraphWidget(tape, mode="both"))
    assert w.error == "" and w.svg.startswith("<svg")
    ET.fromstring(w.svg)
    _check_state(made, name)
    for node_id in extract(tape).index():  # the side panel of every node
        w.selected = node_id
        _check_state([w], name)


@pytest.mark.parametrize("name", HOSTILE, ids=_ids)
def test_the_stepper_and_the_memory_inspector_show_it(name):
    tape = _tape(name)
    s, made = _new_widgets(lambda: tv.BackpropStepper(tape))
    for _ in range(s.count):
        s.next()
    _check_state(made, name)
    _, made = _new_widgets(lambda: tv.MemoryInspector(_tape(name)))
    _check_state(made, name)


@pytest.mark.parametrize("name", HOSTILE, ids=_ids)
def test_show_code_shows_it(name):
    w = tv.variable(np.array([2.0, 3.0]), name=name)

    def loss(x):
        return tv.sum(tv.tanh(x * w))

    view, made = _new_widgets(lambda: tv.show_code(tv.grad(loss), tv.tensor([0.5, -1.0])))
    _check_state(made, name)
    assert "\x00" not in view.text
