import ast
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest
from graph_cases import ENGINES, chain_tape, reuse_tape, scoped_tape, styles_tape

import tapeviz as tv
from tapeviz.graph import available_engines, extract, normalize_highlight, render_svg, to_dot
from tapeviz.present.palette import OKABE_ITO


def _node_block(dot: str, node_id: str) -> str:
    return next(line for line in dot.splitlines() if line.startswith(f'"{node_id}" ['))


def _svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    return ["".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text")]


def test_the_wasm_engine_is_available_here():
    assert "wasm" in available_engines()  # pip-only: the default path


@pytest.mark.system_dot
def test_the_system_engine_is_available_here():
    assert "system" in available_engines()


def test_forward_dot_content():
    tape, x, w, *_ = reuse_tape()
    dot = to_dot(extract(tape))
    assert 'rankdir="LR"' in dot  # a short chain reads left to right
    assert 'subgraph "cluster_scope0"' in dot and ">blk<" in dot  # the scope is a cluster
    mul = _node_block(dot, "n0")
    assert "<B>Mul</B>" in mul and "numpy" in mul and OKABE_ITO["blue"] in mul
    assert "saved for backward" in _node_block(dot, "s0") and "input a (2,) 8 B" in dot
    assert '{rank=same; "n0"; "s0"}' in dot  # the saved box sits beside its op
    xnode = _node_block(dot, f"t{x.id}")
    assert "data [1 2]" in xnode and "grad [0.855 -1.11]" in xnode  # micrograd record
    assert 'labelloc="b"' in dot and "variable (double border)" in dot  # the key under it
    assert to_dot(extract(tape), rankdir="TB").count('rankdir="TB"') == 1


def test_styles_differ_by_colour_and_shape():
    dot = to_dot(extract(styles_tape()))
    shapes = {
        op: re.search(r'shape="(\w+)"', _node_block(dot, op)).group(1)
        for op in ["n0", "n1", "n2", "n3", "n4"]
    }
    assert shapes == {"n0": "box", "n1": "box", "n2": "hexagon", "n3": "octagon", "n4": "component"}
    assert "dashed" in _node_block(dot, "n1")  # override: dashed border
    assert "my_square" in _node_block(dot, "n2") and "kernel Twice" in _node_block(dot, "n2")
    assert "memory m (3,) 12 B" in dot
    for words in [
        "custom_grad (hexagon)",
        "DifferentiableFunction (octagon)",
        "CompiledLayer (component)",
        "gradient override (box, dashed)",
        "constant (dotted)",
    ]:
        assert words in dot  # the legend names each style drawn


def test_edge_width_grows_with_bytes():
    dot = to_dot(extract(scoped_tape(2, 4)), collapse=False)
    widths = [float(w) for w in re.findall(r'penwidth="([\d.]+)"', dot)]
    small = to_dot(extract(reuse_tape()[0]))
    small_widths = [float(w) for w in re.findall(r'-> "\w+" \[penwidth="([\d.]+)"', small)]
    assert max(widths) > max(small_widths)


@pytest.mark.parametrize("engine", ENGINES)
def test_svg_through_each_engine(engine):
    tape, *_ = reuse_tape()
    for mode in ["forward", "backward", "both"]:
        svg = render_svg(extract(tape), engine=engine, mode=mode)
        texts = _svg_texts(svg)
        assert svg.startswith("<svg")
        assert "Tanh" in " ".join(texts) or mode == "backward"
        if mode != "forward":
            assert any("\u2202 Tanh" in t for t in texts)  # the step cluster of Tanh
            assert any("accumulate += x" in t for t in texts)


@pytest.mark.parametrize("engine", ENGINES)
def test_hostile_names_render_as_text(engine):
    data = extract(styles_tape())
    dot = to_dot(data, html_labels=engine == "system")
    assert '"a"->b' not in dot  # quotes are escaped wherever the name appears
    if engine == "system":
        assert "<B>&lt;script&gt;alert(1)&lt;/script&gt;</B>" in dot
        assert "&quot;a&quot;-&gt;b" in dot
    svg = render_svg(data, engine=engine)
    assert "<script" not in svg.lower()
    texts = _svg_texts(svg)
    assert any("<script>alert(1)</script>" in t for t in texts)
    assert any('"a"->b' in t for t in texts)


@pytest.mark.parametrize("engine", ENGINES)
def test_highlight_states(engine):
    tape, *_ = reuse_tape()
    data = extract(tape)
    highlight = {1: "error: wrong scale", "n0": "visited", "n2": "current", "n3": "selected"}
    dot = to_dot(data, highlight=highlight)
    assert OKABE_ITO["vermillion"] in _node_block(dot, "n1")
    texts = " ".join(_svg_texts(render_svg(data, engine=engine, highlight=highlight)))
    for words in ["error: wrong scale", "visited", "current", "selected"]:
        assert words in texts
    back = to_dot(data, mode="backward", highlight={"n1": "error: wrong scale"})
    assert "wrong scale" in back  # the gradient cluster of a highlighted op is marked


def test_highlight_rejects_unknown_states():
    assert normalize_highlight({3: ("error", "nan")}) == {"n3": ("error", "nan")}
    with pytest.raises(ValueError, match="must be one of error, current, visited, selected"):
        normalize_highlight({"n1": "purple"})


def test_bad_options_are_named():
    data = extract(reuse_tape()[0])
    with pytest.raises(ValueError, match="mode must be one of"):
        to_dot(data, mode="sideways")
    with pytest.raises(ValueError, match="engine must be one of"):
        render_svg(data, engine="cairo")


@pytest.mark.parametrize("engine", ENGINES)
def test_thousand_op_graphs_collapse(engine):
    # how fast they render is measured in bench/bench_graph.py, not asserted here
    for tape in (scoped_tape(), chain_tape()):
        data = extract(tape)
        assert data.meta["n_ops"] >= 1000
        for mode in ("forward", "backward"):
            svg = render_svg(data, engine=engine, mode=mode)
            assert 0 < svg.count('class="node"') < 100  # collapsed, not 1,000+ nodes
    dot = to_dot(extract(scoped_tape()))
    assert "block0" in dot and "block49" in dot and "identical to block0" in dot


def test_repeated_blocks_merge_when_over_budget():
    data = extract(scoped_tape(30, 8))
    dot = to_dot(data, collapse=True, max_nodes=20)
    assert "block0 \u2026 block29 (\u00d730 identical)" in dot


def test_show_graph_views():
    x = tv.tensor([0.5, 1.0], name="x")
    view = tv.show_graph(lambda x: tv.sum(tv.tanh(x) * x), x, backward="both")
    bundle = view._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg")
    assert "cluster_b" not in view.to_dot()  # "both" levels each gradient with its op
    assert "cluster_b" in tv.show_graph(lambda x: tv.sum(tv.tanh(x) * x), x, backward=True).to_dot()
    assert "GraphView(3 ops" in repr(view)


@pytest.mark.parametrize("engine", ENGINES)
def test_hostile_scope_names_render_as_text(engine):
    x = tv.tensor([1.0], name="x")
    with tv.Tape() as tape:
        with tv.name_scope('<i>"s"}{|\\N'):
            tv.exp(x)
    svg = render_svg(extract(tape), engine=engine)
    assert any('<i>"s"}{|\\N' in t for t in _svg_texts(svg))


def test_a_saved_value_no_gradient_needs_says_not_kept_instead_of_0_bytes():
    x = tv.tensor([1.0, 2.0], name="x")
    with tv.Tape() as tape:
        tape.watch(x)
        y = tv.sum(tv.tanh(x) * 2.0)  # only d/d(2.0) would read tanh(x): not kept
    mul = next(n for n in tape.nodes if n.kernel == "Mul")
    unneeded = [s for s in mul.saved if not getattr(s, "needed", True)]
    tape.gradient(y, x)
    dot = tv.show_graph(tape).to_dot()
    assert dot.count("not kept (0 B): no gradient needs it") == len(unneeded)
    assert "input a (2,) 0 B" not in dot  # never the bare, puzzling "0 B"


@pytest.mark.parametrize("html_labels", [True, False])
def test_the_legend_names_the_dashed_and_dotted_edges_of_the_both_view(html_labels):
    x = tv.tensor([1.0, 2.0], name="x")
    both = tv.show_graph(lambda x: tv.sum(tv.tanh(x) * x), x, backward="both")
    dot = to_dot(both.data, html_labels=html_labels, mode="both")
    assert "the gradient ops it ran" in dot and "saved value read by a gradient op" in dot
    forward = to_dot(both.data, html_labels=html_labels, mode="forward")
    assert "the gradient ops it ran" not in forward


def _system_cases_without_the_mark(source: str) -> list[str]:
    """Test functions in ``source`` that render with engine "system" but do not carry the
    ``system_dot`` mark: a bare "system" in a parametrize list, or ``engine="system"``."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")):
            continue
        if any("system_dot" in ast.unparse(d) for d in fn.decorator_list):
            continue
        lists = [
            e
            for d in fn.decorator_list
            if isinstance(d, ast.Call) and "parametrize" in ast.unparse(d.func)
            for a in d.args[1:]
            if isinstance(a, (ast.List, ast.Tuple))
            for e in a.elts
        ]
        keywords = [
            k.value
            for c in ast.walk(fn)
            if isinstance(c, ast.Call)
            for k in c.keywords
            if k.arg == "engine"
        ]
        if any(isinstance(v, ast.Constant) and v.value == "system" for v in lists + keywords):
            found.append(fn.name)
    return found


def test_every_system_engine_case_skips_without_dot():
    """`make test` is green on a machine without Graphviz only if every test that draws with
    the system dot skips there (issue 17): it must carry the system_dot mark (ENGINES does)."""
    tests = pathlib.Path(__file__).resolve().parents[1]
    found = {
        str(p.relative_to(tests)): names
        for p in sorted(tests.rglob("*.py"))
        if (names := _system_cases_without_the_mark(p.read_text(encoding="utf-8")))
    }
    assert not found, f"mark these @pytest.mark.system_dot or use ENGINES: {found}"
    bad = '@pytest.mark.parametrize("engine", ["system", "wasm"])\ndef test_a(engine): pass\n'
    assert _system_cases_without_the_mark(bad) == ["test_a"]
    assert _system_cases_without_the_mark("def test_b():\n    render(d, engine='system')\n")
    good = "@pytest.mark.system_dot\ndef test_c():\n    render(d, engine='system')\n"
    assert _system_cases_without_the_mark(good) == []
