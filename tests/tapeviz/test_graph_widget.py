import pathlib
import re
import shutil
import subprocess

import pytest
from graph_cases import reuse_tape, styles_tape

import tapeviz as tv
from tapeviz.graph import GraphView
from tapeviz.graph.show import fit_width
from tapeviz.graph.widget.widget import VIEW_PARTS, view_module


def test_widget_traits_have_help_and_start_rendered():
    tape, *_ = reuse_tape()
    w = tv.GraphWidget(tape)
    for name in [
        "svg",
        "mode",
        "show_saved",
        "show_values",
        "selected",
        "details",
        "highlighted",
        "error",
    ]:
        assert w.trait_metadata(name, "help"), name
        assert w.trait_metadata(name, "sync"), name
    assert w.svg.startswith("<svg") and w.mode == "forward" and w.error == ""
    assert w.has_backward and w.details == {}


def test_selecting_a_node_fills_details():
    tape, x, *_ = reuse_tape()
    w = tv.GraphWidget(tape)
    w.selected = "n1"
    assert w.details["title"] == "Tanh (n1)"
    assert ["kernel", "Tanh"] in w.details["rows"]
    saved = [s for s in w.details["sections"] if s["title"].startswith("saved")]
    assert saved and ["bytes", "8 B"] in saved[0]["rows"] and saved[0]["histogram"]
    w.selected = f"t{x.id}"
    assert w.details["kind"] == "tensor"
    assert [s["title"] for s in w.details["sections"]] == ["value", "gradient"]
    w.selected = ""
    assert w.details == {}


def test_switching_mode_and_toggles_change_the_svg():
    tape, *_ = reuse_tape()
    w = tv.GraphWidget(tape)
    forward = w.svg
    w.mode = "backward"
    assert w.svg != forward and "accumulate" in w.svg
    w.mode = "both"
    both = w.svg
    assert "accumulate" in both and "Tanh" in both
    w.show_saved = False
    assert "saved for backward" not in w.svg and "saved for backward" in both
    w.show_values = False
    assert "data [" not in w.svg
    w.rankdir = "TB"
    assert w.error == ""


def test_highlight_from_python():
    tape, *_ = reuse_tape()
    w = tv.GraphWidget(tape)
    w.highlight({1: "error: wrong scale", "n2": "current"})
    assert w.highlighted == {"n1": "error: wrong scale", "n2": "current"}
    assert "wrong scale" in w.svg and "current" in w.svg
    w.highlight({})
    assert "wrong scale" not in w.svg
    with pytest.raises(ValueError, match="must be one of"):
        w.highlight({"n1": "glowing"})


def test_errors_show_in_place():
    x = tv.tensor([1.0, 2.0])
    with tv.Tape() as tape:
        tape.watch(x)
        tv.exp(x)
    w = tv.GraphWidget(tape)  # no gradient computed
    assert not w.has_backward
    w.mode = "backward"
    assert "no backward pass" in w.error and w.svg.startswith("<svg")
    w.mode = "forward"
    assert w.error == ""


def test_static_fallback_in_the_mimebundle():
    w = tv.GraphWidget(lambda x: tv.sum(x * x), tv.tensor([1.0, 2.0]))
    data, _ = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    # the same drawing, its displayed size capped to a notebook's width (fit_width)
    assert data["image/svg+xml"] == fit_width(w.svg)
    assert data["image/svg+xml"].split("viewBox")[1] == w.svg.split("viewBox")[1]


def test_fit_width_shrinks_wide_graphs_but_keeps_text_legible():
    head = '<svg width="{}pt" height="100pt" viewBox="0 0 {} 100">'
    assert fit_width(head.format(500, 500)) == head.format(500, 500)  # fits: unchanged
    assert fit_width(head.format(750, 750)).startswith('<svg width="720pt" height="96pt"')
    # 3000 pt would need 0.24: it stops at 11/12, where 9 pt text is 11 px (it scrolls instead)
    assert fit_width(head.format(3000, 3000)).startswith('<svg width="2750pt" height="92pt"')
    assert fit_width("<svg viewBox='0 0 1 1'/>") == "<svg viewBox='0 0 1 1'/>"


def test_widget_esm_and_css_ship_with_the_package():
    static = pathlib.Path(tv.__file__).parent / "static"
    js = tv.GraphWidget._esm
    assert js == view_module() and 'model.set("selected"' in js
    assert (static / "graph_widget.css").is_file()


def _functions(js: str) -> dict:
    """``{name: lines}`` of the top-level functions of ``js`` (``function f(`` to ``}``)."""
    out, name, start = {}, None, 0
    for i, line in enumerate(js.splitlines()):
        m = re.match(r"function (\w+)\(", line)
        if m:
            name, start = m[1], i
        elif name and line == "}":
            out[name], name = i - start + 1, None
    return out


def test_the_view_module_is_its_parts_each_short_top_level_functions():
    """anywidget loads one module (no relative imports from its blob): the parts under
    static/graph/ are joined in VIEW_PARTS's order, the last one exports; each function
    is short (graph_widget.js had one 495-line ``render``)."""
    folder = pathlib.Path(tv.__file__).parent / "static" / "graph"
    assert sorted(p.name for p in folder.glob("*.js")) == sorted(VIEW_PARTS)  # none left out
    exports = [p for p in VIEW_PARTS if "export default" in (folder / p).read_text()]
    assert exports == [VIEW_PARTS[-1]] == ["main.js"]
    js = view_module()
    assert not re.search(r"^\s*import\b", js, re.M)
    names = re.findall(r"^(?:function|const|let) (\w+)", js, re.M)
    assert len(names) == len(set(names)), "a top-level name is defined twice"
    lines = _functions(js)
    assert "render" in lines and lines["render"] <= 15, lines.get("render")
    assert max(lines.values()) <= 60, max(lines.items(), key=lambda kv: kv[1])


@pytest.mark.skipif(shutil.which("node") is None, reason="node checks the module's syntax")
def test_the_view_module_parses(tmp_path):
    path = tmp_path / "graph_view.mjs"
    path.write_text(view_module())
    out = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_show_graph_targets(tmp_path):
    tape, x, w, y, _ = reuse_tape()
    assert tv.show_graph(tape).tape is tape
    assert tv.show_graph(y).tape is tape  # a tensor finds the tape that made it
    with pytest.raises(ValueError, match="was not produced on any live tape"):
        tv.show_graph(tv.tensor([1.0]))
    with pytest.raises(TypeError, match="expected a Tape, a Tensor or a function"):
        tv.show_graph(42)
    view = tv.show_graph(
        lambda a, b: tv.sum(a * b), [1.0, 2.0], tv.tensor([3.0, 4.0]), backward=True
    )
    assert isinstance(view, GraphView) and view.data.meta["has_backward"]
    for name in ["g.svg", "g.dot", "g.png"]:
        path = view.save(tmp_path / name)
        assert path.stat().st_size > 100
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="expected a .svg, .dot, .gv or .png path"):
        view.save(tmp_path / "g.pdf")


def test_show_graph_without_a_backward_pass_says_so():
    tape = styles_tape()
    assert tv.show_graph(tape, backward="both").data.meta["n_backward_ops"] > 0
    x = tv.tensor([1.0])
    with tv.Tape() as bare:
        tv.exp(x)
    with pytest.raises(ValueError, match="has no backward pass"):
        tv.show_graph(bare, backward=True)
