"""User text (a tensor's name, a function's name, a node label) made safe to draw anywhere.

A name can hold any character Python allows: an ANSI colour code, a form feed, a bell, a
NUL, a lone surrogate, a right-to-left override. XML 1.0 forbids most control characters (an
SVG holding one does not parse: the graph widget drew nothing), Graphviz stops at a NUL, UTF-8
cannot encode a lone surrogate (a widget message holding one fails to send), and a bidi
override silently reverses the text after it. ``visible`` writes each such character as its
escape, ``\\x1b``, ``\\x00``, ``\\ud800``, ``\\u202e``: the name is drawn, and drawn as it is.
Every other character (letters of any script, ``σ²``, emoji, tabs and newlines) is kept.
"""

from __future__ import annotations

import html
import re

__all__ = ["visible", "html_text", "visible_tree"]

# C0 controls but tab and newline, DEL and the C1 controls, surrogates, the two
# non-characters XML forbids, and the bidi embeddings, overrides and isolates
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]"
)


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text) -> str:
    """``str(text)`` with each character that cannot be drawn, or would hide or reorder
    what follows, written as its escape (``"a\\x1b[31m"``).

    Example:
        >>> from tapeviz.present.text import visible
        >>> visible("loss\\x07") == "loss\\\\x07"
        True
    """
    s = str(text)
    return _HIDDEN.sub(_escape, s) if _HIDDEN.search(s) else s


def html_text(text) -> str:
    """User text for HTML: ``visible`` then ``html.escape`` (quotes too)."""
    return html.escape(visible(text), quote=True)


def visible_tree(obj):
    """``visible`` applied to every string (keys too) in nested dicts, lists and tuples: data
    a widget sends to the browser as JSON, where a lone surrogate cannot be encoded."""
    if isinstance(obj, str):
        return visible(obj)
    if isinstance(obj, dict):
        return {visible_tree(k): visible_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(visible_tree(v) for v in obj)
    return obj
