"""Node labels: a small spec (a list of lines) written as a Graphviz HTML-like label or as
plain text.

The system ``dot`` gets HTML-like labels (bold titles, small print, a coloured backend
badge, a ``data | grad`` record). The WebAssembly Graphviz is built without HTML-label
support, so it gets the same lines as plain text. Either way all user text is escaped:
``html.escape`` inside HTML labels, ``style.attr`` (backslashes and quotes) in plain ones,
so a tensor named ``<script>`` or ``"a"->b`` is drawn as text, never read as markup or DOT;
first, in both, a character XML, Graphviz or UTF-8 cannot carry (a control character, a NUL,
a lone surrogate) or a bidi override is written as its escape (``present.text.visible``).

Spec lines: ``("title", text, tag)``, ``("text", text, colour)``, ``("values", value, grad,
show_grad)``, ``("badge", backend)``, ``("mark", state, text)``.
"""

from __future__ import annotations

from ..present.palette import GREY, SHADE
from ..present.text import html_text
from .style import BACKEND_BADGES, HIGHLIGHTS, MIN_PT, attr, fmt_value


def esc(text) -> str:
    """Text safe inside a Graphviz HTML-like label (``<``, ``>``, ``&``, quotes and
    backslashes escaped; see ``present.text.visible`` for the characters written as escapes)."""
    # a backslash doubled: Graphviz expands \N, \G, \L in HTML labels too, after decoding
    # entities (a tensor named "\N" was drawn as the node's id)
    return html_text(text).replace("\\", "\\\\").replace("\n", "<BR/>")


def small(text: str, color: str | None = None, size: int = MIN_PT) -> str:
    col = f' COLOR="{color}"' if color else ""
    return f'<FONT POINT-SIZE="{size}"{col}>{esc(text)}</FONT>'


def _row(cell: str) -> str:
    return f"<TR><TD>{cell}</TD></TR>"


def _badge(backend: str) -> str:
    color = BACKEND_BADGES.get(backend, GREY["edge"])
    return (
        f'<TABLE BORDER="0" CELLPADDING="1" CELLSPACING="0"><TR><TD BGCOLOR="{color}">'
        f'<FONT POINT-SIZE="{MIN_PT}" COLOR="white"> {esc(backend)} </FONT></TD></TR></TABLE>'
    )


def _values(value, grad, show_grad: bool) -> str:
    """micrograd's ``data | grad`` record for a small tensor."""
    data = small("data " + fmt_value(value))
    cell = f'<TD BORDER="1" SIDES="T" ALIGN="LEFT">{data}</TD>'
    if not show_grad:
        return f"<TR>{cell}</TR>"
    g = "grad " + (fmt_value(grad) if grad is not None else "\u2013")
    cell += f'<TD BORDER="1" SIDES="TL" ALIGN="LEFT">{small(g, SHADE["reddish_purple"])}</TD>'
    return (
        '<TR><TD><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2"><TR>'
        f"{cell}</TR></TABLE></TD></TR>"
    )


def _mark_words(state: str, text: str | None) -> str:
    return HIGHLIGHTS[state][3] + (f": {text}" if text else "")


def _html_line(line) -> str:
    kind = line[0]
    if kind == "title":
        tag = (" " + small(line[2], GREY["text"])) if line[2] else ""
        return _row(f"<B>{esc(line[1])}</B>{tag}" if line[1] else tag.strip())
    if kind == "text":
        return _row(small(line[1], line[2]))
    if kind == "values":
        return _values(*line[1:])
    if kind == "badge":
        return _row(_badge(line[1]))
    words, color = _mark_words(line[1], line[2]), HIGHLIGHTS[line[1]][4]
    return _row(f'<B><FONT POINT-SIZE="{MIN_PT}" COLOR="{color}">{esc(words)}</FONT></B>')


def _plain_line(line) -> str:
    kind = line[0]
    if kind == "title":
        return line[1] + (f" ({line[2]})" if line[2] and line[1] else line[2] or "")
    if kind == "text":
        return line[1]
    if kind == "values":
        text = "data " + fmt_value(line[1])
        if line[3]:
            text += "\ngrad " + (fmt_value(line[2]) if line[2] is not None else "\u2013")
        return text
    if kind == "badge":
        return f"[{line[1]}]"
    return _mark_words(line[1], line[2])


def label(spec: list, use_html: bool) -> str:
    """The DOT value of a ``label=`` attribute for ``spec``."""
    if use_html:
        return (
            '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
            + "".join(_html_line(line) for line in spec)
            + "</TABLE>>"
        )
    return attr("\n".join(_plain_line(line) for line in spec))


def swatch_cells(fill: str, border: str, style: str, words: str) -> str:
    """Two legend cells (HTML): a coloured swatch and its words."""
    cell = f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="2" STYLE="{style}" WIDTH="18"> </TD>'
    return f'{cell}<TD ALIGN="LEFT">{small(words)}</TD>'
