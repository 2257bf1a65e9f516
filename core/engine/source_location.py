"""Where a node was recorded, as a person reads it: ``train.py:12`` or ``In [3], line 2``.

In Jupyter the code of a cell runs from the kernel's temporary file
(``/tmp/ipykernel_<pid>/<hash>.py``); IPython's compiler keeps the execution count behind
each such name. Looked up through ``sys.modules`` only: core never imports IPython.
"""

from __future__ import annotations

import re
import sys

__all__ = ["Source", "call_columns", "cell_number", "where"]


class Source(tuple):
    """A node's ``(file, line, function)``, and which call on that line recorded it: ``at``,
    the instruction offset in the user's frame (a loop's turns repeat it; two calls on one
    line differ), and ``cols``, the ``(start, end)`` columns of that call's expression (None
    where Python does not keep them). Reads, unpacks and compares as the 3-tuple.

    Example:
        >>> s = Source("train.py", 12, "step", at=40, cols=(8, 19))
        >>> s == ("train.py", 12, "step") and s.at == 40
        True
    """

    def __new__(cls, file, line, function, at=None, cols=None):
        self = super().__new__(cls, (file, line, function))
        self.at, self.cols = at, cols
        return self

    def __reduce__(self):  # pickle and copy keep the call site
        return (Source, (*self, self.at, self.cols))


def call_columns(code, offset: int):
    """``(start, end)`` columns of the expression of the instruction at ``offset`` in
    ``code`` (on its first line), or None (Python < 3.11, or no position kept)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None
    for i, pos in enumerate(positions()):
        if i == offset // 2:
            start, end = pos[2], pos[3]
            same_line = pos[0] is not None and pos[0] == pos[1]
            return (start, end) if start is not None and end is not None and same_line else None
    return None


def cell_number(file: str) -> int | None:
    """The execution count of the IPython cell compiled under the name ``file``, or None.

    Example:
        >>> cell_number("/home/me/train.py") is None  # a file (or no IPython running)
        True
    """
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


def where(source, func: bool = True) -> str:
    """``(file, line, function)`` as a person reads it.

    Args:
        source: a node's ``source`` (from ``engine.caller_source``), or None.
        func: append ``in <function>`` (not for a cell's top level).

    Returns:
        ``In [3], line 2`` for a notebook cell, ``/path/train.py:12 in step`` for a file,
        ``an unknown line`` without a source.

    Example:
        >>> where(("/home/me/train.py", 12, "step"))
        '/home/me/train.py:12 in step'
    """
    if not source:
        return "an unknown line"
    file, line, function = source
    cell = cell_number(file)
    if cell is None:
        return f"{file}:{line}" + (f" in {function}" if func else "")
    inside = f" in {function}" if func and function != "<module>" else ""
    return f"In [{cell}], line {line}{inside}"
