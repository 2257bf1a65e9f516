"""Where a node was recorded, as a person reads it: ``In [3], line 2`` in a notebook.

In Jupyter the engine sees the kernel's temporary file for each cell
(``/tmp/ipykernel_<pid>/<hash>.py``); IPython's compiler keeps which execution count each of
those names belongs to. Looked up through ``sys.modules``: tapeviz never imports IPython.
"""

from __future__ import annotations

import os
import re
import sys


def cell_number(file: str) -> int | None:
    """The execution count of the IPython cell compiled under the name ``file``, or None."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if hasattr(ipython, "get_ipython") else None
    compiler = getattr(shell, "compile", None)
    name = None
    if hasattr(compiler, "format_code_name"):  # IPython >= 8: ("Cell", "In[3]")
        name = (compiler.format_code_name(file) or (None, None))[1]
    elif isinstance(getattr(compiler, "_filename_map", None), dict):
        number = compiler._filename_map.get(file)
        name = None if number is None else str(number)
    match = re.search(r"\d+", name) if isinstance(name, str) else None
    return int(match.group()) if match else None


def source_record(src) -> dict | None:
    """``(file, line, function)`` -> ``{file, line, func, cell, text}``; ``text`` is
    ``In [3], line 2`` for a notebook cell, ``train.py:12`` for a file."""
    if not src:
        return None
    file, line, func = src
    cell = cell_number(file)
    text = f"In [{cell}], line {line}" if cell is not None else f"{os.path.basename(file)}:{line}"
    return {"file": file, "line": line, "func": func, "cell": cell, "text": text}


def source_text(src: dict) -> str:
    """One line for a details panel: ``In [3], line 2`` (in ``f`` when inside a function)."""
    if src.get("cell") is None:
        return f"{src['file']}:{src['line']} in {src['func']}"
    inside = "" if src["func"] == "<module>" else f" in {src['func']}"
    return src["text"] + inside
