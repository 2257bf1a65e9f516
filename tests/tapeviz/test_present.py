"""One vocabulary: core returns plain data, tapeviz.present draws it; one palette, one fmt_bytes."""

import pathlib
import re

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.core import display
from tapeviz.present import palette, reports
from tapeviz.present.units import fmt_bytes

ROOT = pathlib.Path(__file__).resolve().parents[2]
# an HTML tag, inline CSS ("style='color:…'", not a style= keyword argument), a hex colour
HTML_OR_COLOUR = re.compile(r"<(div|table|span|tr|td|b)\b|style=['\"][\w-]+:|#[0-9a-fA-F]{6}\b")


HEX = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")


def _hits(folder: str) -> list[str]:
    """``path:line: HTML|HEX: text`` for each line of HTML, CSS or a hex colour under folder."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            kind = "HEX" if HEX.search(line) else "HTML" if HTML_OR_COLOUR.search(line) else ""
            if kind:
                found.append(f"{path.relative_to(ROOT)}:{k}: {kind}: {line.strip()}")
    return found


def test_core_holds_no_html_and_no_colours():
    assert not _hits("core"), "\n".join(_hits("core"))


def test_the_html_check_finds_html_and_colours():
    for line in ['f"<table>{x}</table>"', "OK = '#009E73'", "\"<p style='color:red'>\""]:
        assert HTML_OR_COLOUR.search(line), line
    for line in ["x = y  # issue #16, see <https://a.b>", 'record(style="custom_grad")']:
        assert not HTML_OR_COLOUR.search(line), line


def test_colours_are_spelled_once_in_tapeviz():
    """Every colour of tapeviz's Python is a name from tapeviz.present.palette, none a literal."""
    found = [hit for hit in _hits("tapeviz") if "HEX" in hit and "present/palette.py" not in hit]
    assert not found, "import these from tapeviz.present.palette:\n" + "\n".join(found)


def _palette_values() -> set[str]:
    """Every colour the palette module names (constants, dict values, tuple items)."""
    values = set()
    for value in vars(palette).values():
        items = value.values() if isinstance(value, dict) else value
        items = [items] if isinstance(items, str) else items
        if isinstance(items, (list, tuple)) or isinstance(value, dict):
            values.update(v.upper() for v in items if isinstance(v, str) and v.startswith("#"))
    return values


def _long_hex(colour: str) -> str:
    """``#abc`` -> ``#AABBCC``."""
    c = colour.upper()
    return "#" + "".join(ch * 2 for ch in c[1:]) if len(c) == 4 else c


def test_browser_code_spells_only_palette_colours():
    allowed, found = _palette_values(), []
    for path in sorted((ROOT / "tapeviz" / "static").glob("*.[cj]s*")):
        for colour in HEX.findall(path.read_text(encoding="utf-8")):
            if _long_hex(colour) not in allowed:
                found.append(f"{path.name}: {colour}")
    assert not found, "add to tapeviz/present/palette.py or use a palette colour: " + str(found)
    assert _long_hex("#abc") == "#AABBCC" and "#D55E00" in allowed and "#123456" not in allowed


def test_the_palette_holds_okabe_ito_and_verdicts():
    assert palette.OKABE_ITO["vermillion"] == palette.FAIL == "#D55E00"
    assert palette.PASS == palette.OKABE_ITO["bluish_green"] == "#009E73"
    assert len(set(palette.SERIES)) == 6 and set(palette.SERIES) <= set(palette.OKABE_ITO.values())


@pytest.mark.parametrize(
    "n, text",
    [
        (None, "?"),
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (1536.0, "1.5 KiB"),
        (8 * 1024**2, "8.0 MiB"),
        (3 * 1024**3, "3.0 GiB"),
        (2048 * 1024**4, "2048.0 TiB"),
    ],  # fmt: skip
)
def test_fmt_bytes_uses_iec_units(n, text):
    assert fmt_bytes(n) == text


def test_graph_and_widgets_share_fmt_bytes():
    from tapeviz.graph import details, nodes
    from tapeviz.widgets.memory import panel as memory_panel
    from tapeviz.widgets.memory import plots as memory_plots

    for module in (details, nodes, memory_panel, memory_plots):
        assert module.fmt_bytes is fmt_bytes, module.__name__


def _tanh_sum(x):
    return tv.sum(tv.tanh(x))


def _wrong_report():
    x = tv.tensor(np.array([0.3, -0.2]))
    with tv.gradient_override("Tanh", lambda dy, s, a: {"x": lambda: dy * 2.0}):
        return tv.check_grads(_tanh_sum, x, forward=False, raise_on_failure=False)


def test_reports_render_through_the_registry():
    bad = _wrong_report()
    html = bad._repr_html_()
    assert html == reports.gradcheck_html(bad)
    assert "FAIL" in html and palette.FAIL in html and "value mismatch" in html
    ok = tv.check_grads(_tanh_sum, tv.tensor(np.array([0.3, -0.2])))
    assert "PASS" in ok._repr_html_() and palette.PASS in ok._repr_html_()


def test_without_a_renderer_a_report_is_text_only(monkeypatch):
    monkeypatch.setattr(display, "_HTML", {})
    report = _wrong_report()
    assert report._repr_html_() is None  # Jupyter then shows text/plain
    assert str(report).startswith("check_grads(_tanh_sum, order=1, mode=full): FAIL")


def test_register_html_by_name_and_subclass(monkeypatch):
    monkeypatch.setattr(display, "_HTML", {})

    class Base(display.HtmlRepr):
        pass

    class Child(Base):
        pass

    display.register_html(f"{__name__}.{Base.__qualname__}", lambda o: "by name")
    assert Child()._repr_html_() == "by name"
    display.register_html(Child, lambda o: "by class")
    assert Child()._repr_html_() == "by class" and Base()._repr_html_() == "by name"
    display.unregister_html(Child)
    assert Child()._repr_html_() == "by name"
    with pytest.raises(TypeError, match="register_html"):
        display.register_html(Child(), lambda o: "")
