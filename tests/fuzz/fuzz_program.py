"""A fuzz program: leaves (the inputs) and straight-line statements over the op table, and
how it is written out as Python source for each of the three systems.

The tapeviz source is what the fuzzer runs and what a failure prints; the numpy mirror casts
each statement to the dtype tapeviz documents (``fuzz_dtypes.expected_dtype``), so both
follow one dtype flow; the PyTorch mirror casts each statement to a dtype map (``float64``
everywhere for the reference run, the program's own dtypes, or one step lower, for the run
that measures how much rounding the program amplifies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from fuzz_ops import Op


@dataclass
class Leaf:
    name: str
    value: np.ndarray  # exactly the leaf's value and dtype
    kind: str = "tensor"  # "tensor" or "variable"
    diff: bool = True  # differentiated (float leaves only)


@dataclass
class Const:
    """An operand that is not a tensor: a Python number, a numpy array or a list/tuple."""

    kind: str  # "scalar" | "array" | "list" | "tuple"
    value: object  # the Python number, or an ndarray (its dtype is the array's / list's)


@dataclass
class Stmt:
    out: str
    op: Op
    form: int
    args: list  # leaf or statement names (str) or Const
    params: dict
    dtype: np.dtype  # what tapeviz documents for the result (numpy's, adjusted)
    cdtype: str = ""  # numpy's common dtype of the tensor operands (PyTorch needs them equal)


@dataclass
class Program:
    seed: int
    leaves: list[Leaf] = field(default_factory=list)
    stmts: list[Stmt] = field(default_factory=list)
    tags: set = field(default_factory=set)  # e.g. "tie:sort": a documented convention applies

    @property
    def diff(self) -> list[int]:
        return [i for i, leaf in enumerate(self.leaves) if leaf.diff]

    @property
    def float_outputs(self) -> list[int]:
        return [k for k, s in enumerate(self.stmts) if s.dtype.kind == "f"]

    def signature(self) -> str:
        return " ; ".join(f"{s.op.name}[{s.form}]" for s in self.stmts)


# --- literals -------------------------------------------------------------------------------
def number(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return repr(bool(x))
    if isinstance(x, (int, np.integer)):
        return repr(int(x))
    x = float(x)
    if math.isnan(x):
        return "np.nan"
    if math.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(x)


def nested(arr: np.ndarray) -> str:
    """A nested list literal of ``arr``'s values (exact: repr round-trips floats)."""
    if arr.ndim == 0:
        return number(arr.item())
    return "[" + ", ".join(nested(a) for a in arr) + "]"


def array_literal(arr: np.ndarray) -> str:
    if arr.size == 0:
        return f"np.zeros({arr.shape}, dtype=np.{arr.dtype})"
    return f"np.array({nested(arr)}, dtype=np.{arr.dtype})"


def leaf_source(leaf: Leaf) -> str:
    make = "tv.variable" if leaf.kind == "variable" else "tv.tensor"
    return f"{leaf.name} = {make}({array_literal(leaf.value)})"


# --- operands in each system ----------------------------------------------------------------
def tv_operand(a) -> str:
    if isinstance(a, str):
        return a
    if a.kind == "scalar":
        return number(a.value)
    if a.kind == "array":
        return array_literal(a.value)
    text = nested(a.value)
    if a.kind == "tuple" and a.value.ndim >= 1:
        text = "(" + text[1:-1] + ("," if a.value.shape[0] == 1 else "") + ")"
    return text


def np_operand(a) -> str:
    if isinstance(a, str) or a.kind in ("scalar", "array"):
        return tv_operand(a)
    # DESIGN.md: "Lists of Python floats become float32" (and ints int32, tensor.py)
    return array_literal(a.value)


def torch_operand(a) -> str:
    if isinstance(a, str):
        return a
    if a.kind == "scalar":
        v = a.value
        dtype = "torch.bool" if isinstance(v, bool) else "torch.int64" if isinstance(
            v, int) else "torch.float64"  # fmt: skip
        return f"torch.tensor({number(v)}, dtype={dtype})"
    return f"torch.as_tensor({array_literal(a.value)})"


def _call(template: str, stmt: Stmt, operand) -> str:
    names = dict(zip("abc", (operand(a) for a in stmt.args)))
    if operand is torch_operand and stmt.cdtype and len(stmt.args) > 1:
        for k, a in zip("ab", stmt.args):  # where's condition (c) stays bool
            if not (isinstance(a, Const) and a.kind == "scalar"):
                names[k] = f"_as({names[k]}, DT[{stmt.cdtype!r}])"
    params = dict(stmt.params)
    if "key" in params and operand is torch_operand:
        params["key"] = f"np.s_[{params['key']}]"
    return template.format(**names, **params)


# --- whole programs ---------------------------------------------------------------------------
def _signature(prog: Program, name: str) -> str:
    return f"def {name}({', '.join(leaf.name for leaf in prog.leaves)}):"


def _returns(prog: Program) -> str:
    return f"    return [{', '.join(s.out for s in prog.stmts)}]"


def tv_source(prog: Program) -> str:
    body = [f"    {s.out} = {_call(s.op.forms[s.form], s, tv_operand)}" for s in prog.stmts]
    return "\n".join([_signature(prog, "f"), *body, _returns(prog)])


def np_source(prog: Program) -> str:
    body = [f"    {s.out} = _as({_call(s.op.np, s, np_operand)}, np.{s.dtype})" for s in prog.stmts]
    return "\n".join([_signature(prog, "f_np"), *body, _returns(prog)])


def torch_source(prog: Program) -> str:
    """``f_torch(*leaves, dtypes)``: each statement cast to ``dtypes[its dtype]``."""
    body = [
        f"    {s.out} = _as({_call(s.op.torch, s, torch_operand)}, DT[{str(s.dtype)!r}])"
        for s in prog.stmts
    ]
    head = _signature(prog, "f_torch")[:-2] + ", DT):"
    return "\n".join([head, *body, _returns(prog)])


def leaves_source(prog: Program) -> str:
    return "\n".join(leaf_source(leaf) for leaf in prog.leaves)


def sub_program(prog: Program, upto: int | None = None, only: int | None = None) -> Program:
    """The first ``upto`` statements, or statement ``only`` alone on its operands' values
    (``values``: the numpy mirror's, set by ``fuzz_gen``) as new leaves."""
    if only is None:
        sub = Program(prog.seed, prog.leaves, prog.stmts[:upto], set(prog.tags))
        names = {leaf.name for leaf in prog.leaves} | {s.out for s in sub.stmts}
        sub.values = {k: v for k, v in prog.values.items() if k in names}
        return sub
    s = prog.stmts[only]
    known = {leaf.name: leaf for leaf in prog.leaves}
    leaves, seen = [], set()
    for a in s.args:
        if isinstance(a, str) and a not in seen:
            seen.add(a)
            if a in known:
                leaves.append(known[a])
            else:
                v = prog.values[a]
                leaves.append(Leaf(a, v, "tensor", v.dtype.kind == "f"))
    sub = Program(prog.seed, leaves, [s], set(prog.tags))
    sub.values = {**{leaf.name: leaf.value for leaf in leaves}, s.out: prog.values[s.out]}
    return sub
