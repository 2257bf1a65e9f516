"""Assignment B's hidden tests: the notebook's ``Value`` (each node keeps its edges, pairs
``(input, local derivative)``) builds, in the submission's process, the nodes and graphs the
grader describes on fresh random numbers; the data, local derivatives and gradients come back
as numbers and are compared here with derivatives, path sums and tapeviz's engine computed
here. Question 3's graphs are built from raw edges the grader computed, so a slip in an op
(questions 1 and 2) does not cost question 3. The engine's reverse mode is refused there."""

from __future__ import annotations

import math

import numpy as np
from checks import Failed, array, close, test

import tapeviz as tv

QUESTIONS = {"q1": 4, "q2": 3, "q3": 5, "q4": 3}

PROBES = r'''
import tapeviz as tv

RULE = "assignment B: your Value computes its own gradients, not with tapeviz's engine"


def _locals(out, inputs):
    """The local derivative of ``out`` per input (edges to the same input added)."""
    total = [0.0] * len(inputs)
    for child, d in out.edges:
        for k, v in enumerate(inputs):
            if child is v:
                total[k] += float(d)
    return total


def op(ns, name, x, y=None):
    """The data of ``name`` applied to Value(x) (and Value(y)), and its local derivatives."""
    Value = ns["Value"]
    with tv.refuse_reverse_mode(RULE):
        a = Value(float(x))
        b = Value(float(y)) if y is not None else None
        if name in ("*", "/"):
            out, inputs = (a * b if name == "*" else a / b), [a, b]
        elif name == "square":  # a * a: one input along two edges
            out, inputs = a * a, [a]
        elif name == "rdiv":  # x / b with a plain number x: the given __rtruediv__
            out, inputs = float(x) / b, [b]
        else:
            out, inputs = getattr(a, name)(), [a]
        return {"data": float(out.data), "locals": _locals(out, inputs)}


def build(ns, data, edges):
    """Nodes Value(data[k], edges=[(nodes[child], local), ...]) in the given order."""
    Value = ns["Value"]
    nodes = []
    for value, links in zip(data, edges):
        nodes.append(Value(float(value), [(nodes[int(c)], float(d)) for c, d in links]))
    return nodes


def backward(ns, data, edges):
    """Every node's gradient after the last node's backward()."""
    with tv.refuse_reverse_mode(RULE):
        nodes = build(ns, data, edges)
        nodes[-1].backward()
        return [float(v.grad) for v in nodes]


def zero_grad(ns, data, edges, fill):
    """Data and gradients of every node after every gradient is set to ``fill`` and the last
    node's zero_grad() ran."""
    with tv.refuse_reverse_mode(RULE):
        nodes = build(ns, data, edges)
        for v in nodes:
            v.grad = float(fill)
        nodes[-1].zero_grad()
        return {"data": [float(v.data) for v in nodes], "grads": [float(v.grad) for v in nodes]}
'''


def _op(sub, name, x, y=None):
    got = sub.call("op", name=name, x=x, y=y)
    if not isinstance(got, dict) or not {"data", "locals"} <= set(got):
        raise Failed(f"{name}: no data and local derivatives came back")
    return got


def _check_op(sub, name, x, y, data, locals_, what, rtol=1e-7):
    got = _op(sub, name, x, y)
    close(got["data"], data, f"{what}: the data", rtol=1e-9)
    close(got["locals"], locals_, f"{what}: the local derivatives", rtol=rtol, atol=1e-12)


@test("q1", 2)
def mul_edges(sub, rng):
    for x, y in [*rng.uniform(-4, 4, (3, 2)), (0.0, float(rng.uniform(1, 5)))]:
        x, y = float(x), float(y)
        _check_op(sub, "*", x, y, x * y, [y, x], f"a * b at ({x:.3g}, {y:.3g})")
    x = float(rng.uniform(-3, 3))
    _check_op(sub, "square", x, None, x * x, [2 * x], f"a * a at {x:.3g}")


@test("q1", 2)
def div_edges(sub, rng):
    pairs = [*rng.uniform(0.2, 4, (3, 2)) * rng.choice([-1, 1], (3, 2)), (1e-3, 40.0)]
    for x, y in pairs:
        x, y = float(x), float(y)
        what = f"the local derivatives of a / b at ({x:.3g}, {y:.3g})"
        _check_op(sub, "/", x, y, x / y, [1 / y, -x / y**2], what)
    c, y = float(rng.uniform(1, 3)), float(rng.uniform(0.5, 3))
    _check_op(sub, "rdiv", c, y, c / y, [-c / y**2], f"{c:.3g} / b at {y:.3g}")


def _sig(x):
    return 1 / (1 + math.exp(-x))


UNARY = {
    "log": (math.log, lambda x: 1 / x),
    "sigmoid": (_sig, lambda x: _sig(x) * (1 - _sig(x))),
    "sin": (math.sin, math.cos),
}


def _unary(sub, points):
    for x in points:
        for name, (f, d) in UNARY.items():
            if name == "log" and x <= 0:
                continue
            what = f"the local derivative of {name} at {x:.3g}"
            _check_op(sub, name, x, None, f(x), [d(x)], what)


@test("q2", 2)
def unary_edges(sub, rng):
    _unary(sub, [float(x) for x in rng.uniform(-3, 3, 3)] + [float(rng.uniform(0.1, 3))])


@test("q2", 1)
def unary_edges_far_out(sub, rng):
    _unary(sub, [float(rng.uniform(20, 30)), float(-rng.uniform(20, 30)), 1e-3])


def reference(edges) -> np.ndarray:
    """d last / d node for every node: the chain rule in reverse creation order, here."""
    grads = np.zeros(len(edges))
    grads[-1] = 1.0
    for k in range(len(edges) - 1, -1, -1):
        for c, d in edges[k]:
            grads[c] += d * grads[k]
    return grads


def dag(rng, leaves, n, fan):
    """Random nodes, each on 1..fan earlier ones (repeats allowed) with random locals."""
    edges = [[] for _ in range(leaves)]
    for _ in range(n):
        k = len(edges)
        edges.append([[int(rng.integers(0, k)), float(rng.uniform(-2, 2))]
                      for _ in range(int(rng.integers(1, fan + 1)))])  # fmt: skip
    return edges


def chain(rng, n):
    return [[], *[[[k, float(rng.uniform(0.9, 1.1))]] for k in range(n)]]


def fan_in(rng, n):
    mids = [[[0, float(rng.uniform(-1, 1))]] for _ in range(n)]
    return [[], *mids, [[k, float(rng.uniform(-1, 1))] for k in range(1, n + 1)]]


def near_and_far(rng, n):
    """A leaf reaches the output directly and through an n-deep chain."""
    edges = [[], [[0, 1.5]], *[[[k, float(rng.uniform(0.5, 1.5))]] for k in range(1, n + 1)]]
    return [*edges, [[n + 1, 0.7], [1, -1.3]]]


def _backward(sub, rng, name, edges, want=None):
    data = [float(v) for v in rng.normal(size=len(edges))]
    got = sub.call("backward", data=data, edges=edges)
    want = reference(edges) if want is None else want
    got = array(got, f"{name}: the gradients", (len(edges),))
    last = got[-1]
    if not np.isclose(last, 1.0):
        raise Failed(f"{name}: the output's own gradient is {last:.3g}, not 1 (d out / d out)")
    if not np.allclose(got, want, rtol=1e-9, atol=1e-12):
        if np.allclose(got, _one_share(edges), rtol=1e-9, atol=1e-12):
            raise Failed(f"{name}: an input used twice keeps one share of the two: a "
                         "gradient is overwritten where shares add up")  # fmt: skip
    close(got, want, f"{name}: the gradients", rtol=1e-9, atol=1e-12)


def _one_share(edges):
    """What '=' in place of '+=' gives when nodes run in reverse creation order (reported
    only as a hint; None if not computable)."""
    grads = np.zeros(len(edges))
    grads[-1] = 1.0
    for k in range(len(edges) - 1, -1, -1):
        for c, d in edges[k]:
            grads[c] = d * grads[k]
    return grads


@test("q3", 2)
def backward_on_random_graphs(sub, rng):
    for name, edges in (("a random graph", dag(rng, 3, 12, 3)), ("another", dag(rng, 2, 20, 2)),
                        ("near and far", near_and_far(rng, 5))):  # fmt: skip
        _backward(sub, rng, name, edges)


@test("q3", 1)
def backward_deep_and_wide(sub, rng):
    _backward(sub, rng, "a 40-deep chain", chain(rng, 40))
    _backward(sub, rng, "a fan-in of 25", fan_in(rng, 25))


def expression(kind, x, y):
    """(data, edges) of an expression of x, y by this module's own ops, and the engine's
    d out / d (x, y)."""
    data, edges = [x, y], [[], []]

    def node(value, links):
        data.append(float(value))
        edges.append([[int(c), float(d)] for c, d in links])
        return len(data) - 1

    def mul(a, b):
        return node(data[a] * data[b], [(a, data[b]), (b, data[a])])

    def add(a, b):
        return node(data[a] + data[b], [(a, 1.0), (b, 1.0)])

    def sig(a):
        s = _sig(data[a])
        return node(s, [(a, s * (1 - s))])

    def const(c):
        return node(c, [])

    tx, ty = tv.tensor(np.float64(x)), tv.tensor(np.float64(y))
    with tv.Tape() as tape:
        tape.watch([tx, ty])
        if kind == "diamond":
            c = mul(0, 1)
            e = mul(add(c, 1), c)
            add(mul(add(e, sig(1)), const(2.0)), 0)
            tc = tx * ty
            out = ((tc + ty) * tc + tv.sigmoid(ty)) * 2.0 + tx
        elif kind == "chain":
            a, ta = 0, tx
            for _ in range(30):
                a = add(mul(a, const(0.9)), mul(1, const(0.1)))
                ta = ta * 0.9 + ty * 0.1
            sig(a)
            out = tv.sigmoid(ta)
        else:  # near and far: x * y used directly and through two sigmoids
            c = mul(0, 1)
            add(sig(sig(c)), c)
            tc = tx * ty
            out = tv.sigmoid(tv.sigmoid(tc)) + tc
    gx, gy = tape.gradient(out, [tx, ty])
    return data, edges, (gx.item(), gy.item())


@test("q3", 2)
def backward_against_the_engine(sub, rng):
    for kind in ("diamond", "chain", "near and far"):
        x, y = (float(v) for v in rng.uniform(-1.5, 1.5, 2))
        data, edges, (gx, gy) = expression(kind, x, y)
        got = sub.call("backward", data=data, edges=edges)
        got = array(got, f"{kind}: the gradients", (len(edges),))
        close(got[:2], [gx, gy], f"{kind} at ({x:.3g}, {y:.3g}) against the engine", rtol=1e-7)


def _zero(sub, rng, edges):
    data = [float(v) for v in rng.normal(size=len(edges))]
    fill = float(rng.uniform(1, 9))
    got = sub.call("zero_grad", data=data, edges=edges, fill=fill)
    if not isinstance(got, dict) or not {"grads", "data"} <= set(got):
        raise Failed("zero_grad: no answer")
    return (
        data,
        array(got["data"], "the data", (len(edges),)),
        array(got["grads"], "the gradients", (len(edges),)),
    )


@test("q4", 2)
def zero_grad_clears_every_node(sub, rng):
    deep = [[]]
    for k in range(50):  # every node on the one before and on the leaf
        deep.append([[k, 1.01], [0, 1.0]])
    for edges in (deep, dag(rng, 3, 15, 3)):
        reach = {len(edges) - 1}
        for k in range(len(edges) - 1, -1, -1):
            if k in reach:
                reach |= {c for c, _ in edges[k]}
        _, _, grads = _zero(sub, rng, edges)
        left = int(np.count_nonzero(grads[sorted(reach)]))
        if left:
            raise Failed(f"zero_grad left a gradient on {left} of {len(reach)} nodes")


@test("q4", 1)
def zero_grad_keeps_data(sub, rng):
    edges = dag(rng, 2, 10, 2)
    edges.append([[k, 1.0] for k in range(len(edges))])  # every node reaches the output
    data, got, grads = _zero(sub, rng, edges)
    close(got, data, "the data after zero_grad (only gradients are reset)")
    if np.count_nonzero(grads):
        raise Failed("zero_grad left gradients behind")
