"""Assignment B's hidden tests: the notebook's ``Value`` builds expressions the grader
describes (programs of + * tanh exp **), on fresh random inputs, in the submission's
process; its data, gradients and the order its ``_backward`` ran come back as numbers and
are compared here with tapeviz's engine. The engine's reverse mode is refused there: a
``Value`` may not ask it for the gradients."""

from __future__ import annotations

import numpy as np
from checks import Failed, close, test

import tapeviz as tv

QUESTIONS = {"q1": 4, "q2": 3, "q3": 5, "q4": 3}

PROBES = r'''
import tapeviz as tv

RULE = "assignment B: your Value computes its own gradients, not with tapeviz's engine"


def build(ns, program, inputs):
    """The program's nodes on the notebook's Value: inputs first, then one node per step."""
    Value = ns["Value"]
    nodes = [Value(float(v)) for v in inputs]
    for op, i, j in program:
        a = nodes[i]
        if op == "+":
            nodes.append(a + nodes[j])
        elif op == "*":
            nodes.append(a * nodes[j])
        elif op == "**":
            nodes.append(a**j)
        else:  # tanh, exp
            nodes.append(getattr(a, op)())
    return nodes


def one_step(ns, program, inputs, out_grad):
    """The inputs' gradients after one call of the output's _backward."""
    with tv.refuse_reverse_mode(RULE):
        nodes = build(ns, program, inputs)
        nodes[-1].grad = out_grad
        nodes[-1]._backward()
        return [float(v.grad) for v in nodes[: len(inputs)]]


def backward(ns, program, inputs):
    """Every node's data and gradient after out.backward(), and the order in which the
    program's nodes ran their _backward (node indices)."""
    with tv.refuse_reverse_mode(RULE):
        nodes = build(ns, program, inputs)
        ran = []
        for i, v in enumerate(nodes):
            inner = v._backward
            v._backward = lambda i=i, inner=inner: (ran.append(i), inner())
        nodes[-1].backward()
        return {"data": [float(v.data) for v in nodes], "grads": [float(v.grad) for v in nodes],
                "order": ran}


def zero_grad(ns, program, inputs, fill):
    """Data and gradients of the program's nodes after filling every gradient reachable
    through _prev with ``fill`` and calling out.zero_grad()."""
    with tv.refuse_reverse_mode(RULE):
        nodes = build(ns, program, inputs)
        stack, seen = [nodes[-1]], set()
        while stack:
            v = stack.pop()
            if id(v) not in seen:
                seen.add(id(v))
                v.grad = fill
                stack.extend(v._prev)
        before = [float(v.data) for v in nodes]
        nodes[-1].zero_grad()
        return {"before": before, "data": [float(v.data) for v in nodes],
                "grads": [float(v.grad) for v in nodes]}
'''


def diamond():
    """a, b, 2: b reaches the output along three paths (inputs 0-2, nodes 3-8)."""
    return 3, [("*", 0, 1), ("+", 3, 1), ("*", 4, 3), ("tanh", 1, 0), ("+", 5, 6),
               ("*", 7, 2), ("+", 8, 0)]  # fmt: skip


def chain(n=30):
    """a, b, 0.9, 0.1: x = 0.9 x + 0.1 b, n times, then exp."""
    program, x = [], 0
    for _ in range(n):
        k = 4 + len(program)
        program += [("*", x, 2), ("*", 1, 3), ("+", k, k + 1)]
        x = k + 2
    return 4, [*program, ("exp", x, 0)]


def quotient():
    """a, b, -1, 1: (a - b) / (a a + 1) + tanh(b ** 2)."""
    return 4, [("*", 1, 2), ("+", 0, 4), ("*", 0, 0), ("+", 6, 3), ("**", 7, -1),
               ("*", 5, 8), ("**", 1, 2), ("tanh", 10, 0), ("+", 9, 11)]  # fmt: skip


CONSTANTS = {diamond: [2.0], chain: [0.9, 0.1], quotient: [-1.0, 1.0]}


def engine(program, inputs):
    """Data and gradients of every node by tapeviz's engine (float64)."""
    ts = [tv.tensor(np.float64(v)) for v in inputs]
    with tv.Tape() as tape:
        tape.watch(ts)
        nodes = list(ts)
        for op, i, j in program:
            a = nodes[i]
            if op in ("+", "*"):
                nodes.append(a + nodes[j] if op == "+" else a * nodes[j])
            else:
                nodes.append(a**j if op == "**" else getattr(tv, op)(a))
    grads = tape.gradient(nodes[-1], nodes, unconnected_gradients="zero")
    return [n.item() for n in nodes], [g.item() for g in grads]


def _one(sub, program, inputs, out_grad, what):
    got = sub.call("one_step", program=program, inputs=inputs, out_grad=out_grad)
    _, want = engine(program, inputs)
    close(got, np.array(want[: len(inputs)]) * out_grad, what, rtol=1e-6)


@test("q1", 2)
def add_mul_one_step(sub, rng):
    for _ in range(3):
        x, y, g = rng.uniform(-3, 3, 3)
        for op in ("*", "+"):
            _one(sub, [(op, 0, 1)], [x, y], g, f"a {op} b at ({x:.3g}, {y:.3g}), out.grad {g:.3g}")


@test("q1", 2)
def used_twice_one_step(sub, rng):
    x, g = rng.uniform(-3, 3, 2)
    for op in ("+", "*"):
        got = sub.call("one_step", program=[(op, 0, 0)], inputs=[x], out_grad=g)
        if op == "+" and np.shape(got) == (1,) and np.isclose(got[0], g):
            raise Failed("a + a: a gets one share, not two: '=' where '+=' belongs")
        want = 2 * g if op == "+" else 2 * x * g
        close(got, [want], f"a {op} a at {x:.3g}, out.grad {g:.3g}", rtol=1e-6)


@test("q2", 2)
def unary_one_step(sub, rng):
    for x in rng.uniform(-2, 2, 3):
        g = float(rng.uniform(-2, 2))
        for op, k in (("tanh", 0), ("exp", 0), ("**", 2), ("**", 3)):
            _one(sub, [(op, 0, k)], [x], g, f"{op}{k if op == '**' else ''} at {x:.3g}")


@test("q2", 1)
def power_other_exponents(sub, rng):
    x = float(rng.uniform(0.5, 3))
    for k in (-1, 0.5, -1.5):
        _one(sub, [("**", 0, k)], [x], float(rng.uniform(-2, 2)), f"a ** {k} at {x:.3g}")


def _order_problem(program, n_in, order) -> str | None:
    """What is wrong with the order in which backward ran the nodes' _backward, if anything."""
    users = {}
    for k, (op, i, j) in enumerate(program, start=n_in):
        for child in {i, j} if op in "+*" else {i}:
            users.setdefault(child, set()).add(k)
    if not isinstance(order, list) or len(set(order)) != len(order):
        return "backward called a node's _backward more than once"
    position = {k: i for i, k in enumerate(order)}
    if set(position) != set(range(n_in + len(program))):
        return "backward did not call the _backward of every node"
    for node, parents in users.items():
        if any(position[p] > position[node] for p in parents):
            return ("a node's _backward ran before a node that uses it: call them in reverse "
                    "topological order (children after all parents)")  # fmt: skip
    return None


def _backward(sub, graph, inputs, *, values=True):
    """Run the notebook's backward on ``graph``; compare the inputs' gradients with the
    engine's (``values``), naming a wrong order first; returns the order problem, if any."""
    n_in, program = graph()
    inputs = [*inputs, *CONSTANTS[graph]]
    got = sub.call("backward", program=program, inputs=inputs)
    if not isinstance(got, dict) or not {"grads", "order"} <= set(got):
        raise Failed(f"{graph.__name__}: backward gave no gradients")
    problem = _order_problem(program, n_in, got["order"])
    if values:
        _, want = engine(program, inputs)
        what = f"{graph.__name__} at ({inputs[0]:.3g}, {inputs[1]:.3g})"
        grads = np.asarray(got["grads"][:2], float) if len(got["grads"]) >= 2 else None
        if problem and (grads is None or not np.allclose(grads, want[:2], rtol=1e-6)):
            raise Failed(f"{what}: the gradients are off, and {problem}")
        close(got["grads"][:2], want[:2], what, rtol=1e-6)
    return problem


@test("q3", 2)
def backward_against_the_engine(sub, rng):
    for graph in (diamond, quotient):
        _backward(sub, graph, rng.uniform(-1.5, 1.5, 2))


@test("q3", 1)
def backward_deep_chain(sub, rng):
    _backward(sub, chain, rng.uniform(-1, 1, 2))


@test("q3", 2)
def backward_in_topological_order(sub, rng):
    problem = _backward(sub, diamond, rng.uniform(-1.5, 1.5, 2), values=False)
    if problem:
        raise Failed(problem)


def _zero(sub, graph, inputs, fill):
    n_in, program = graph()
    got = sub.call("zero_grad", program=program, inputs=[*inputs, *CONSTANTS[graph]], fill=fill)
    if not isinstance(got, dict) or not {"grads", "data", "before"} <= set(got):
        raise Failed("zero_grad: no answer")
    return got


@test("q4", 2)
def zero_grad_clears_every_node(sub, rng):
    for graph in (diamond, chain):
        got = _zero(sub, graph, rng.uniform(-1, 1, 2), float(rng.uniform(1, 9)))
        left = int(np.count_nonzero(np.asarray(got["grads"], float)))
        if left:
            raise Failed(f"zero_grad left a gradient on {left} of {len(got['grads'])} nodes")


@test("q4", 1)
def zero_grad_keeps_data(sub, rng):
    got = _zero(sub, quotient, rng.uniform(0.5, 1.5, 2), -2.0)
    close(got["data"], got["before"], "the data after zero_grad (only gradients are reset)")
    if np.count_nonzero(np.asarray(got["grads"], float)):
        raise Failed("zero_grad left gradients behind")
