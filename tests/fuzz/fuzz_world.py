"""The world fuzzer's scenarios: a drawn program inside a "world" that changes between calls.

``tv.jit`` compiles a function once per signature and replays the program later; every way
a user changes the world between two calls (rebinding a name the function reads, passing a
closure tensor as the argument, flipping ``trainable``, opening a gradient override,
switching backend, passing ``-0.0`` after ``0.0``, naming a tensor "σ²") is a chance for the
replayed program to be stale. This module draws, per seed, a program from the differential
fuzzer's generator (``fuzz_gen``: the same op tables) and a ``Plan``: one perturbation class,
how the function is reached (``ROUTES``) and what it returns (``TOPS``). ``world`` writes the
plan out as Python source: a setup (the world) and a list of steps, each changing the world
and/or calling ``F``. ``fuzz_world_run`` runs that source twice, with ``JIT = False`` (every
``jit`` the identity: eager tapeviz) and ``JIT = True``, and compares each call bit for bit.

Classes (``CLASSES``; issue 33's numbers in brackets):
``rebind`` [2, and 3 for closure numbers]: a global or closure number, a closure tensor or a
program leaf is rebound between calls, read through each route; ``alias`` [1]: the closure
tensor itself, a view, ``copy.copy``/``deepcopy``, ``tv.tensor`` of it or its numpy array is
passed as the argument (a Variable too); ``copy`` [4]: ``copy.copy``/``deepcopy`` of the
argument or of a closure Variable inside the function; ``trainable`` [5]: ``trainable``
flips between ``minimize(jit=...)`` steps or ``jit(variable_grads)`` calls; ``override``: a
``gradient_override`` block, or the Mul gradient or kernel registered again; ``backend``:
numpy and numba between calls; ``static`` [3]: Python numbers and tuples that are ``==``
but not the same (``0.0``/``-0.0``, ``1``/``1.0``/``True``, ``(1,)``/``(1.0,)``, NaN);
``unicode`` [8]: tensor and Variable names of any Unicode; ``cache`` [6]: many static
values (the runner counts the call results a world keeps alive); ``hessian`` [7]:
``jit(hessian(f))`` of a function with ``x ** 2``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import fuzz_ops
import fuzz_ops_more  # noqa: F401 - fills fuzz_ops.OPS
import numpy as np
from fuzz_gen import Generator
from fuzz_program import Leaf, Program, array_literal, tv_source

CLASSES = ("rebind", "alias", "copy", "trainable", "override", "backend", "static", "unicode",
           "cache", "hessian")  # fmt: skip
ROUTES = ("direct", "closure", "helper1", "helper2", "helper3", "helper4", "helper5",
          "nested_jit", "partial", "callable", "custom_grad")  # fmt: skip
TOPS = ("values", "grad", "value_and_grad")
NAN, INF = float("nan"), float("inf")
# numbers that are == to each other (or NaN) but not the same value: the statics worth trying
EQUAL_GROUPS = [(0.0, -0.0), (1.0, 1, True), (0, False, 0.0), (NAN, -NAN), (INF, -INF),
                (2.0, 3.0), ((1,), (1.0,)), ((True,), (1,)), ((0.0,), (-0.0,))]  # fmt: skip
# names a user can give a tensor (issue 33 class 8 and beyond): math notation, names that
# fold together under NFKC, Python keywords, names of the generated code, spaces, controls
NAMES = ["σ²", "W₁", "b₀", "ｒｅａｄ", "ℓ", "l", "lambda", "def", "np", "out", "read", "assign",
         "draw", "my weight", "a\tb", "\x1b[31mred\x1b[0m", "x\x00y", "日本", "1st", "",
         "__init__", "dx", "t0", "c0", "x0", "ref", "ｌ", "𝑥", "x₀", "ﬁ", "A"]  # fmt: skip
PARAMS = ["x0", "l", "x", "θ", "dx", "t0", "c0", "np", "read", "out", "ｘ", "a0"]
# (a numpy array argument is not among them: eager runs numpy's own functions on it where
# tv.jit makes it a tensor input, a documented difference of result type, not staleness)
ALIAS_FORMS = ["ref", "ref[...]", "ref[::-1]", "copy.copy(ref)", "copy.deepcopy(ref)",
               "tv.tensor(ref)", "ref.reshape(ref.shape)"]  # fmt: skip
WORLD_PROFILE = dict(
    programs=0, max_stmts=3, special=0.25, variables=0.25, max_size=12,
    dtypes={"float64": 0.75, "float32": 0.2, "float16": 0.05},
)  # fmt: skip


@dataclass(frozen=True)
class Plan:
    """One scenario's choices (the program is drawn separately, from the same seed)."""

    seed: int
    klass: str
    route: str = "direct"
    top: str = "values"
    variant: str = ""
    values: tuple = ()  # class-specific: numbers, argument forms, names
    ref_kind: str = "tensor"
    param: str = "x0"


@dataclass
class World:
    """A plan written out: ``setup`` defines ``F`` (and the world), each step calls it."""

    plan: Plan
    prog: Program
    setup: str
    steps: list = field(default_factory=list)


# --- drawing --------------------------------------------------------------------------------
_GEN: dict = {}


def program(seed: int) -> Program:
    """The seed's program, from the differential fuzzer's generator (float leaves only)."""
    if "gen" not in _GEN:
        from fuzz_run import Profile

        _GEN["gen"] = Generator(fuzz_ops.OPS, Profile("world", **WORLD_PROFILE))
    prog = _GEN["gen"].program(seed)
    if not prog.leaves or prog.leaves[0].value.dtype.kind != "f":
        prog = Program(seed, [Leaf("x0", np.linspace(-1, 1, 3))])
        prog.values = {"x0": prog.leaves[0].value}
    return prog


def draw_plan(seed: int, klass: str | None = None) -> Plan:
    """The seed's plan (``klass``: draw only that class)."""
    rng = np.random.default_rng([seed, 33])
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    drawn = pick(CLASSES)  # drawn always: a seed's plan for a class is the same either way
    klass = klass or drawn
    route, top = pick(ROUTES), pick(TOPS)
    ref_kind = "variable" if rng.random() < 0.4 else "tensor"
    plan = Plan(seed, klass, route, top, ref_kind=ref_kind)
    if klass == "rebind":
        variant = pick(["scale", "scale", "ref", "leaf"])
        group = list(pick(EQUAL_GROUPS[:6]))
        rng.shuffle(group)
        return replace(plan, variant=variant, values=tuple(group) + (pick([2.0, -1.5, 0.5]),))
    if klass == "alias":
        fresh = "BV" if ref_kind == "variable" and rng.random() < 0.6 else "B"
        first = "ref" if rng.random() < 0.5 else pick(ALIAS_FORMS)
        forms = [first, fresh, pick(ALIAS_FORMS), "A"]
        return replace(plan, route=pick(["direct", "helper2", "nested_jit", "partial"]),
                       values=tuple(forms))  # fmt: skip
    if klass == "copy":
        variant = pick(["copy_arg", "deepcopy_arg", "copy_var", "deepcopy_var"])
        return replace(plan, variant=variant, route="direct",
                       ref_kind="variable" if variant.endswith("var") else ref_kind)  # fmt: skip
    if klass == "trainable":
        variant = pick(["minimize", "variable_grads", "fit"])
        return replace(plan, variant=variant, route="direct",
                       ref_kind="variable")  # fmt: skip
    if klass == "override":
        variant = pick(["gradient_override", "register_gradient", "register_kernel"])
        return replace(plan, variant=variant, top=pick(["grad", "value_and_grad"]))
    if klass == "backend":
        return replace(plan, variant=pick(["set_backend", "with_backend"]), route="direct")
    if klass == "static":
        group = list(pick(EQUAL_GROUPS))
        rng.shuffle(group)
        variant = pick(["positional", "static_argnums"])
        return replace(plan, values=tuple(group) + tuple(group[:1]), variant=variant)
    if klass == "unicode":
        names = tuple(pick(NAMES) for _ in range(4))
        return replace(plan, values=names, param=pick(PARAMS))
    if klass == "cache":
        return replace(plan, values=tuple(0.5 + k for k in range(4)), top="grad")
    if klass == "hessian":
        return replace(plan, top="hessian", route=pick(["direct", "helper1", "nested_jit"]))
    raise ValueError(klass)


# --- writing ----------------------------------------------------------------------------------
HEADER = """import copy
import functools

import numpy as np

import tapeviz as tv

# JIT is set by whoever runs this world: False runs eager tapeviz, True compiles with tv.jit
jit = tv.jit if JIT else (lambda fn, **kw: fn)
CLEANUP = []  # run at the end (also after an error): puts back what a step registered
"""


def num(x) -> str:
    """A Python literal of number or tuple ``x`` that keeps its type, sign and NaN sign."""
    if isinstance(x, tuple):
        return "(" + "".join(num(v) + ", " for v in x).rstrip(" ") + ")"
    if isinstance(x, float) and x != x:
        return "-float('nan')" if np.signbit(x) else "float('nan')"
    if isinstance(x, float) and x in (INF, -INF):
        return "float('inf')" if x > 0 else "-float('inf')"
    return repr(x)


def _tensor(value: np.ndarray, kind: str, name: str | None) -> str:
    make = "tv.variable" if kind == "variable" else "tv.tensor"
    named = f", name={name!r}" if name is not None else ""
    return f"{make}({array_literal(value)}{named})"


def _other(value: np.ndarray, rng) -> np.ndarray:
    """Other values of ``value``'s shape and dtype (a different call's argument)."""
    return np.asarray(rng.uniform(-1.5, 1.5, value.shape).astype(value.dtype))


def world(prog: Program, plan: Plan) -> World:
    """Write ``plan`` over ``prog`` as source (see the module docstring)."""
    if plan.klass == "hessian" and prog.leaves[0].value.size > 4:
        prog = Program(prog.seed, [Leaf("x0", np.array([0.5, -1.25]))])
        prog.values = {"x0": prog.leaves[0].value}
    rng = np.random.default_rng([plan.seed, 34])
    w = World(plan, prog, "")
    w.setup = HEADER + "\n" + _leaves(prog, plan, rng) + "\n\n" + _functions(prog, plan)
    w.steps = _steps(prog, plan, rng)
    return w


def _names(plan: Plan) -> list:
    if plan.klass == "unicode":
        return list(plan.values)
    return [None] * 4


def _leaves(prog: Program, plan: Plan, rng) -> str:
    a = prog.leaves[0].value
    names = _names(plan)
    trainable = plan.klass == "trainable"
    a_kind, a_name = ("variable", names[1] or "A") if trainable else ("tensor", names[1])
    ref_name = names[0] or ("ref" if plan.ref_kind == "variable" else None)
    lines = [f"A = {_tensor(a, a_kind, a_name)}",
             f"B = {_tensor(_other(a, rng), 'tensor', names[2])}",
             f"BV = {_tensor(_other(a, rng), 'variable', 'BV')}",
             f"ref = {_tensor(_other(a, rng), plan.ref_kind, ref_name)}"]  # fmt: skip
    for k, leaf in enumerate(prog.leaves[1:]):
        kind = "variable" if trainable else leaf.kind
        name = leaf.name if kind == "variable" else None
        if plan.klass == "unicode" and k == 0:
            name = names[3]
        lines.append(f"{leaf.name} = {_tensor(leaf.value, kind, name)}")
    lines.append(f"scale = {num(_scale0(plan))}")
    return "\n".join(lines)


def _functions(prog: Program, plan: Plan) -> str:
    parts = [tv_source(prog).replace("def f(", "def prog(", 1)]
    if plan.route == "custom_grad":
        parts.append("@tv.custom_grad\ndef scaled(y, save):\n"
                     "    return {'value': y * scale, 'grad_func': lambda dy, saved: dy * scale}")  # fmt: skip
    if plan.klass == "override":
        parts.append(OVERRIDE_SETUP)
    body = _body(prog, plan)
    if plan.route == "closure":
        inner = "\n".join("    " + line if line else line for line in body.splitlines())
        parts.append(f"def make():\n    s = {num(_scale0(plan))}\n\n{inner}\n\n"
                     "    def rebind(v):\n        nonlocal s\n        s = v\n\n"
                     "    return body, rebind\n\n\nbody, rebind = make()")  # fmt: skip
    else:
        parts.append(body)
    parts.append(_route(plan))
    parts.append(_top(plan))
    return "\n\n\n".join(parts) + "\n"


def _scale0(plan: Plan):
    return plan.values[0] if plan.klass == "rebind" and plan.variant == "scale" else 2.0


def _body(prog: Program, plan: Plan) -> str:
    p = plan.param if plan.klass == "unicode" else "x0"
    static = plan.klass in ("static", "cache")
    params = "" if plan.klass == "trainable" else p + (", s" if static else "")
    args = ["A" if plan.klass == "trainable" else p] + [leaf.name for leaf in prog.leaves[1:]]
    lines = [f"def body({params}):"]
    r = "ref"
    if plan.variant in ("copy_arg", "deepcopy_arg"):
        how = "copy" if plan.variant == "copy_arg" else "deepcopy"
        lines.append(f"    {p} = copy.{how}({p})")
    if plan.variant in ("copy_var", "deepcopy_var"):
        how = "copy" if plan.variant == "copy_var" else "deepcopy"
        lines.append(f"    r = copy.{how}(ref)")
        r = "r"
    lines.append(f"    outs = prog({', '.join(args)})")
    terms = [f"tv.sum(outs[{k}])" for k in prog.float_outputs] + [f"tv.sum({args[0]} * {r})"]
    if plan.klass == "hessian":
        terms.append(f"tv.sum({args[0]} ** 2)")
    raw = " + ".join(terms)
    if plan.route == "custom_grad":
        lines.append(f"    loss = scaled({raw})")
    else:
        lines.append(f"    loss = ({raw}) * {'s' if plan.route == 'closure' else 'scale'}")
    if static:
        lines.append("    sv = tv.tensor(s)")
        lines.append("    loss = tv.sum(loss * sv)")
    outs = "[loss, *outs" + (", sv]" if static else "]")
    lines.append(f"    return {outs if plan.top == 'values' else 'loss'}")
    return "\n".join(lines)


def _route(plan: Plan) -> str:
    r = plan.route
    if r in ("direct", "closure"):
        return "target = body"
    if r.startswith("helper"):
        d = int(r[len("helper") :])
        fns = [f"def h{k}(*a):\n    return {'body' if k == d else f'h{k + 1}'}(*a)"
               for k in range(1, d + 1)]  # fmt: skip
        return "\n\n\n".join(fns) + "\n\n\ntarget = h1"
    if r == "nested_jit":
        return "inner = jit(body)\n\n\ndef target(*a):\n    return inner(*a)"
    if r == "partial":
        return "def call_with(fn, *a):\n    return fn(*a)\n\n\n" \
               "target = functools.partial(call_with, body)"  # fmt: skip
    if r == "callable":
        return "class Model:\n    def __call__(self, *a):\n        return body(*a)\n\n\n" \
               "target = Model()"  # fmt: skip
    if r == "custom_grad":
        return "target = body"
    raise ValueError(r)


def _top(plan: Plan) -> str:
    if plan.klass == "trainable":
        if plan.variant == "fit":
            return FIT_SETUP.replace("SEED", str(plan.seed % 1000))
        if plan.variant == "minimize":
            return "opt = tv.optim.SGD(0.01)"
        return "F = jit(lambda: tv.variable_grads(target))"
    wrap = {"values": "", "grad": "tv.grad", "value_and_grad": "tv.value_and_grad",
            "hessian": "tv.hessian"}[plan.top]  # fmt: skip
    argnums = ", static_argnums=1" if plan.variant == "static_argnums" else ""
    if not wrap:
        return f"F = jit(target{argnums})"
    if plan.klass in ("static", "cache"):  # the static number reaches target by a closure
        return (f"def top(x, s):\n    return {wrap}(lambda y: target(y, s))(x)\n\n\n"
                f"F = jit(top{argnums})")  # fmt: skip
    return f"F = jit({wrap}(target))"


FIT_SETUP = """class Freeze(tv.nn.Callback):
    def on_batch_end(self, batch, logs=None):  # a user's callback: freeze after one batch
        if batch == 0:
            self.model.parameters()[0].trainable = False


model = tv.nn.Sequential([tv.nn.Dense(2, seed=SEED), tv.nn.Dense(1, seed=SEED + 1)])
opt = tv.optim.SGD(0.05)
X = np.linspace(-1, 1, 24).reshape(8, 3)
Y = np.linspace(0, 1, 8).reshape(8, 1)"""
FIT_STEP = """model.fit(X, Y, "mse", opt, epochs=2, batch_size=4, verbose=0, shuffle=False, jit=JIT,
          callbacks=[Freeze()])
out = model.parameters()"""

OVERRIDE_SETUP = """MUL_GRAD = tv.get_gradient("Mul")
MUL_KERNEL = tv.get_kernel("Mul", "numpy")


def doubled(dy, saved, attrs):
    parts = MUL_GRAD.grad_fn(dy, saved, attrs)
    return {k: (lambda g=g: g() * 2.0) for k, g in parts.items()}


def mul_twice(inputs, attrs):
    y = MUL_KERNEL.fn(inputs, attrs)
    return y + y


def restore_mul():
    G = MUL_GRAD
    tv.register_gradient("Mul", G.grad_fn, G.inputs_to_save, G.outputs_to_save,
                         save_all_inputs=G.save_all_inputs, needed_by=dict(G.needed_by),
                         optional_inputs=G.optional_inputs, formula=dict(G.formula),
                         _builtin=G.builtin)
    tv.register_kernel("Mul", "numpy", MUL_KERNEL.fn, delegates_to=MUL_KERNEL.delegates_to)"""


def _steps(prog: Program, plan: Plan, rng) -> list:
    call = "out = F(A)"
    k = plan.klass
    if k == "rebind":
        return [call, _rebind(prog, plan, 1, rng), call, _rebind(prog, plan, 2, rng), call]
    if k == "alias":
        return [f"out = F({form})" for form in plan.values]
    if k == "copy":
        if plan.variant.endswith("arg"):
            return [call, "out = F(B)", call]
        new = array_literal(_other(prog.leaves[0].value, rng))
        return [call, f"ref.assign({new})", call]
    if k == "trainable" and plan.variant == "fit":
        return [FIT_STEP, "model.parameters()[0].trainable = True", FIT_STEP]
    if k == "trainable":
        run = ("opt.minimize(target, jit=JIT)\nout = [A, ref]" if plan.variant == "minimize"
               else "out = F()")  # fmt: skip
        return [run, run, "ref.trainable = False", run, run, "ref.trainable = True", run]
    if k == "override":
        return [call] + OVERRIDE_STEPS[plan.variant] + [call]
    if k == "backend":
        if plan.variant == "set_backend":
            return [call, 'tv.set_backend("numba")', call, 'tv.set_backend("numpy")', call]
        return [call, 'with tv.backend("numba"):\n    out = F(A)', call]
    if k in ("static", "cache"):
        return [f"out = F(A, {num(v)})" for v in plan.values]
    if k == "unicode":
        return [call, f"ref.name = {plan.values[2]!r}", "out = F(B)", call]
    if k == "hessian":
        return [call, "out = F(B)"]
    raise ValueError(k)


OVERRIDE_STEPS = {
    "gradient_override": ['with tv.gradient_override("Mul", doubled):\n    out = F(A)'],
    "register_gradient": [
        'CLEANUP.append(restore_mul)\ntv.register_gradient("Mul", doubled, ("a", "b"))',
        "out = F(A)",
        "restore_mul()",
    ],  # fmt: skip
    "register_kernel": [
        'CLEANUP.append(restore_mul)\ntv.register_kernel("Mul", "numpy", mul_twice)',
        "out = F(A)",
        "restore_mul()",
    ],  # fmt: skip
}


def _rebind(prog: Program, plan: Plan, k: int, rng) -> str:
    if plan.variant == "scale":
        v = num(plan.values[k])
        return f"rebind({v})" if plan.route == "closure" else f"scale = {v}"
    if plan.variant == "leaf" and len(prog.leaves) > 1:
        leaf = prog.leaves[1 + int(rng.integers(len(prog.leaves) - 1))]
        return f"{leaf.name} = {_tensor(_other(leaf.value, rng), leaf.kind, None)}"
    return f"ref = {_tensor(_other(prog.leaves[0].value, rng), plan.ref_kind, None)}"
