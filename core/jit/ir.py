"""What a trace records: values and the statements that make them, in the order they ran.

A ``Value`` is one array of the program: an argument, a constant, a variable read, a random
draw or a kernel output. A ``Stmt`` is one step: a kernel call, a variable read or assign,
a random draw, or (numba) a fused loop standing for several kernel calls. Straight-line: the
program is the list of statements; ``outputs`` name what it returns.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from ..engine import dispatch as engine

__all__ = ["Value", "Stmt", "Program", "user_site"]


@dataclass(eq=False, slots=True)
class Value:
    """One array of the program.

    ``kind``: ``"arg"`` (dynamic argument ``index``), ``"const"`` (``array`` baked in),
    ``"var"`` (a Variable read at call time), ``"op"`` (a kernel output), ``"random"``.
    ``tensor_id``: the id of the tensor that held it while tracing (names and graph links).
    """

    kind: str
    shape: tuple
    dtype: np.dtype
    index: int = -1
    array: np.ndarray | None = None
    tensor_id: int = 0
    name: str = ""


@dataclass(eq=False, slots=True)
class Stmt:
    """One step: ``kind`` is ``"kernel"``, ``"read"``, ``"assign"``, ``"random"``, ``"check"``
    (a value check that raises, ``draw(*arrays)``) or ``"fused"``.

    ``kernel``: ``prim``, ``config`` (the KernelConfig run), ``keys`` (input names, in order),
    ``attrs``; ``read``/``assign``: ``var`` (the Variable, or the argument index when
    ``var_arg``); ``random``: ``draw`` (a zero-argument function giving a fresh array).
    ``phase``: ``"forward"`` or ``"backward"``; ``grad_of``: the forward statement whose
    gradient a backward statement computes; ``source``: (file, line, function) of the user's
    line; ``node``: (tape, node id) of the tape node recorded for it, if any.
    """

    kind: str
    ins: list
    outs: list
    prim: object = None
    config: object = None
    keys: tuple = ()
    attrs: dict = field(default_factory=dict)
    var: object = None
    var_arg: bool = False
    draw: object = None
    phase: str = "forward"
    grad_of: Stmt | None = None
    source: tuple | None = None
    node: tuple | None = None
    parts: list = field(default_factory=list)  # "fused": the kernel statements it replaces
    note: str = ""  # a comment shown with the statement (fusion: what was measured)
    site: tuple = ()  # (id of the user's frame, instruction offset): splits loop iterations
    many: bool = False  # the kernel returned a tuple or list (even of one array)
    scalars: tuple = ()  # outputs the kernel returned as numpy scalars, not arrays

    @property
    def kernel(self) -> str:
        return self.prim.name if self.prim is not None else self.kind


@dataclass(eq=False)
class Program:
    """A traced function: its statements, arguments and outputs (flat lists of ``Value``)."""

    name: str
    stmts: list
    args: list
    outputs: list
    arg_names: list
    var_args: set = field(default_factory=set)  # argument indexes that are Variables


def user_site():
    """(file, line, function) of the user's line running now, and (frame id, instruction
    offset) there: ops of one execution of a line have rising offsets."""
    source = engine.caller_source()
    if source is None:
        return None, ()
    f = sys._getframe(2)
    while f is not None and (f.f_code.co_filename != source[0] or f.f_lineno != source[1]):
        f = f.f_back
    return source, ((id(f), f.f_lasti) if f is not None else ())
