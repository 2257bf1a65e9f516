"""Where a node was recorded, as the graph shows it: ``In [3], line 2`` in a notebook
(``tapeviz.core.engine.dispatch.source_location`` finds the cell behind the kernel's temporary file)."""

from __future__ import annotations

import os

from tapeviz.core.engine.source_location import cell_number


def source_record(src) -> dict | None:
    """``(file, line, function)`` -> ``{file, line, func, cell, text, at, cols}``; ``text``
    is ``In [3], line 2`` for a notebook cell, ``train.py:12`` for a file; ``at`` and
    ``cols`` say which call on the line (``core.engine.dispatch.source_location.Source``; None if unknown)."""
    if not src:
        return None
    file, line, func = src
    cell = cell_number(file)
    text = f"In [{cell}], line {line}" if cell is not None else f"{os.path.basename(file)}:{line}"
    return {"file": file, "line": line, "func": func, "cell": cell, "text": text,
            "at": getattr(src, "at", None), "cols": getattr(src, "cols", None)}  # fmt: skip


def source_text(src: dict) -> str:
    """One line for a details panel: ``In [3], line 2`` (in ``f`` when inside a function)."""
    if src.get("cell") is None:
        return f"{src['file']}:{src['line']} in {src['func']}"
    inside = "" if src["func"] == "<module>" else f" in {src['func']}"
    return src["text"] + inside
