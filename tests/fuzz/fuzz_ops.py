"""The differential fuzzer's op table: every public op written three times, as source text.

An ``Op`` holds one or more tapeviz call forms (``tv.exp({a})``, ``{a}.exp()``,
``np.exp({a})`` through numpy's dispatch, operators), its numpy mirror and its PyTorch mirror.
Programs (``fuzz_program.py``) are rendered from these templates, so what runs is exactly
the script a failure prints. Templates use ``{a} {b} {c}`` for operands and the names of
``params`` for the rest. The numpy mirror is the oracle of forward values and dtypes, PyTorch
2.13 (float64) the oracle of every derivative; both mirrors are checked against each other
on every program, so a wrong mirror shows up as a harness error, never as a tapeviz failure.

Shape families (``shape``) say which first operand an op takes: ``any``; ``nd1`` (rank >= 1);
``matrix`` (rank 2); ``square`` (n x n, maybe batched); ``nhwc`` (images). Operands after the
first are shaped by ``rhs`` (``bcast``: broadcasts against the first; ``same``; ``matmul``;
``square``: a right-hand side for solve; ``labels``/``probs``: loss targets).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import tapeviz as tv


@dataclass(frozen=True)
class Op:
    name: str
    forms: tuple[str, ...]  # tapeviz templates
    np: str  # numpy mirror template
    torch: str  # PyTorch mirror template
    nargs: int = 1
    domains: tuple[str, ...] = ("any",)  # value domain of a fresh operand, per argument
    shape: str = "any"  # shape family of the first operand
    rhs: str = "bcast"  # shape rule of the other operands
    params: Callable | None = None  # (rng, shapes) -> {name: source text}
    consts: tuple[str, ...] = ("value", "scalar", "array", "list")  # kinds of later operands
    float_only: bool = True  # int and bool operands are refused (a clear TypeError)
    swap: bool = True  # a constant may stand first (``2.0 - x``)
    diff: bool = True  # differentiable: its gradient is compared
    group: str = "elementwise"
    # ULPS of rounding allowed beyond the measured amplification: ops whose formula differs
    # from PyTorch's in the order of its terms (pinv: its second derivative at seeds 243 and
    # 289 is 2-3x the default from PyTorch's on one machine, 8x on another: LAPACK's SVD
    # rounds differently per CPU, and the Hessian amplifies it beyond the float32 estimate)
    ulps: int = 16


OPS: list[Op] = []
_SUPPORTED = set(tv.supported_numpy())
_METHODS = {n for n in dir(tv.Tensor) if not n.startswith("_")}


def add(name, forms, np_t, torch_t, **kw) -> None:
    OPS.append(Op(name, tuple(forms), np_t, torch_t, **kw))


def _forms(name: str, args: str, np_name: str | None = None, extra=()) -> list[str]:
    """``tv.name(args)``, the method form when Tensor has it, ``np.name`` when dispatched."""
    forms = [f"tv.{name}({args})"]
    rest = args.split(", ", 1)
    if name in _METHODS:
        forms.append(f"{{a}}.{name}({rest[1] if len(rest) > 1 else ''})")
    np_name = np_name or name
    if f"numpy.{np_name}" in _SUPPORTED:
        forms.append(f"np.{np_name}({args})")
    return forms + list(extra)


def unary(name, np_t=None, torch_t=None, domain="any", np_name=None, **kw):
    np_t = np_t or f"np.{np_name or name}({{a}})"
    torch_t = torch_t or f"torch.{name}({{a}})"
    add(name, _forms(name, "{a}", np_name), np_t, torch_t, domains=(domain,), **kw)


# --- unary elementwise, smooth: name, numpy, torch, domain ------------------------------
for _n, _dom in [("exp", "any"), ("log", "pos"), ("log1p", "gtm1"), ("sqrt", "pos"),
                 ("square", "any"), ("sin", "any"), ("cos", "any"), ("tan", "unit"),
                 ("tanh", "any"), ("sinh", "any"), ("cosh", "any"), ("arcsin", "unit"),
                 ("arccos", "unit"), ("arctan", "any"), ("arcsinh", "any"),
                 ("arccosh", "gt1"), ("arctanh", "unit"), ("exp2", "any"), ("expm1", "any"),
                 ("log2", "pos"), ("log10", "pos"), ("deg2rad", "any"), ("rad2deg", "any"),
                 ("sinc", "any")]:  # fmt: skip
    # sinc: PyTorch's second derivative cancels near 0 (5e-13 off at x = -0.0142, seed
    # 101390, where mpmath agrees with tapeviz's Taylor series to 1 ulp)
    unary(_n, domain=_dom, **({"ulps": 8192} if _n == "sinc" else {}))
unary("reciprocal", torch_t="torch.reciprocal({a})", domain="nonzero")
unary("rsqrt", np_t="1 / np.sqrt({a})", domain="pos")
unary("neg", np_t="np.negative({a})", np_name="negative", float_only=False)
unary("sigmoid", np_t="_as(sp.expit({a}), {a}.dtype)")
unary("erf", np_t="_as(sp.erf({a}), {a}.dtype)")
unary("relu", np_t="np.maximum({a}, 0)")
unary("gelu", np_t="_as({a} * sp.ndtr({a}), {a}.dtype)", torch_t="F.gelu({a})")
unary("selu", np_t="SELU_SCALE * np.where({a} > 0, {a}, SELU_ALPHA * np.expm1({a}))",
      torch_t="F.selu({a})")  # fmt: skip
unary("softplus", np_t="np.logaddexp({a}, 0)", torch_t="F.softplus({a})")
unary("abs", np_t="np.abs({a})", np_name="absolute", float_only=False)
unary("fabs", np_t="np.fabs({a})", torch_t="torch.abs({a})")
unary("sign", np_t="np.sign({a})", torch_t="t_sign({a})", float_only=False)
unary("floor", float_only=False)
unary("ceil", float_only=False)
unary("nan_to_num", float_only=False)
unary("identity", np_t="np.copy({a})", torch_t="{a}.clone()", np_name="copy", float_only=False)
unary("stop_gradient", np_t="np.copy({a})", torch_t="{a}.detach()")
add("round", ["tv.round({a}, {d})", "{a}.round({d})", "np.round({a}, {d})"],
    "np.round({a}, {d})", "torch.round({a}, decimals={d})",
    params=lambda rng, s: {"d": str(int(rng.integers(0, 3)))})  # fmt: skip
add(
    "leaky_relu",
    ["tv.leaky_relu({a}, {alpha})"],
    "np.where({a} > 0, {a}, {alpha} * {a})",
    "F.leaky_relu({a}, {alpha})",
    params=lambda rng, s: {"alpha": rng.choice(["0.2", "0.01"])},
)
add(
    "elu",
    ["tv.elu({a}, {alpha})"],
    "np.where({a} > 0, {a}, {alpha} * np.expm1({a}))",
    "F.elu({a}, {alpha})",
    params=lambda rng, s: {"alpha": rng.choice(["1.0", "0.5"])},
)
add("cast", ["tv.cast({a}, {dt})", "{a}.astype({dt})"], "{a}.astype({dt})",
    "{a}.to(TORCH_DTYPES[{dt}])", float_only=False,
    params=lambda rng, s: {"dt": repr(str(rng.choice(["float32", "float64"])))})  # fmt: skip


# --- binary elementwise -------------------------------------------------------------------
def binary(name, op_sym=None, np_name=None, torch_t=None, domains=("any", "any"), **kw):
    np_name = np_name or name
    extra = [f"{{a}} {op_sym} {{b}}"] if op_sym else []
    forms = [f"tv.{name}({{a}}, {{b}})"]
    if f"numpy.{np_name}" in _SUPPORTED:
        forms.append(f"np.{np_name}({{a}}, {{b}})")
    add(name, forms + extra, f"np.{np_name}({{a}}, {{b}})",
        torch_t or f"torch.{name}({{a}}, {{b}})", nargs=2, domains=domains, **kw)  # fmt: skip


binary("add", "+", float_only=False)
binary("sub", "-", "subtract", "torch.sub({a}, {b})", float_only=False)
binary("mul", "*", "multiply", float_only=False)
binary("div", "/", "divide", "torch.div({a}, {b})", ("any", "nonzero"), float_only=False)
binary("pow", "**", "power", domains=("pos", "any"), float_only=False)
binary("maximum", float_only=False)
binary("minimum", float_only=False)
binary("fmax", float_only=False)
binary("fmin", float_only=False)
binary("arctan2", torch_t="torch.atan2({a}, {b})")
binary("hypot")
binary("logaddexp")
binary("logaddexp2")
binary("mod", "%", "remainder", "torch.remainder({a}, {b})", ("any", "nonzero"))
for _n, _sym, _th in [("greater", ">", "gt"), ("less", "<", "lt"), ("greater_equal", ">=", "ge"),
                      ("equal", "==", "eq"), ("not_equal", "!=", "ne"), ("less_equal", "<=", "le")]:  # fmt: skip
    binary(_n, _sym, torch_t=f"torch.{_th}({{a}}, {{b}})", diff=False, float_only=False)
add("where", ["tv.where({c}, {a}, {b})", "np.where({c}, {a}, {b})"], "np.where({c}, {a}, {b})",
    "torch.where({c}, {a}, {b})", nargs=3, float_only=False, rhs="where")  # fmt: skip
add("clip", ["tv.clip({a}, {lo}, {hi})", "{a}.clip({lo}, {hi})", "np.clip({a}, {lo}, {hi})"],
    "np.clip({a}, {lo}, {hi})", "torch.clamp({a}, {lo}, {hi})",
    params=lambda rng, s: dict(zip(("lo", "hi"), rng.choice(
        [("-0.5", "0.5"), ("0.0", "1.0"), ("-1.0", "2.0"), ("0.5", "0.5")]))))  # fmt: skip
