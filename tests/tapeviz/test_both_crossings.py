"""The static "both" picture without crossings between the backward ops' edges (issue 23).

The picture is laid out (system dot when present, else Graphviz in WebAssembly) and every
drawn edge between two backward nodes (gradient ops, gradient tensors) is read back from the
SVG as a polyline; two such edges that share no end and intersect are a crossing. Before,
the backward edges ran against the forward ranks unconstrained and each row kept the order
its ops ran in (01's tape: 2 crossings, the README's: 1); now an edge to a row above ranks
as the forward edge between the rows does, a gradient op follows the one of its row it
reads, and the sum of a reused tensor's shares sits between them.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import tapeviz as tv
from tapeviz.graph import extract

_EDGE = re.compile(r'<g id="edge\d+" class="edge[^"]*">\s*<title>(.*?)</title>(.*?)</g>', re.S)
_PATH = re.compile(r'<path[^>]*\sd="([^"]+)"')


def _polyline(d: str) -> list[tuple[float, float]]:
    """A path of M and C commands (as dot writes edges), cubic pieces sampled 16 times."""
    nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", d)]
    pts = list(zip(nums[0::2], nums[1::2]))
    out, p0 = [pts[0]], pts[0]
    for k in range(1, len(pts) - 2, 3):
        p1, p2, p3 = pts[k], pts[k + 1], pts[k + 2]
        for i in range(1, 17):
            t = i / 16
            a, b, c, e = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t**3
            out.append(tuple(a * p0[j] + b * p1[j] + c * p2[j] + e * p3[j] for j in (0, 1)))
        p0 = p3
    return out


def _cross(p, q, r, s) -> bool:
    def orient(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2, d3, d4 = orient(r, s, p), orient(r, s, q), orient(p, q, r), orient(p, q, s)
    return d1 * d2 < 0 and d3 * d4 < 0


def backward_crossings(tape, engine: str = "auto") -> int:
    """Crossings between the drawn edges of backward nodes in ``show_graph(tape,
    backward="both")``."""
    data = extract(tape)
    backward = {op["id"] for op in data.backward_ops} | {g["id"] for g in data.grad_tensors}
    svg = tv.show_graph(tape, backward="both", engine=engine).to_svg()
    edges = []
    for title, body in _EDGE.findall(svg):
        a, b = html.unescape(title).split("->")
        m = _PATH.search(body)
        if a in backward and b in backward and m:
            edges.append(({a, b}, _polyline(m.group(1))))
    n = 0
    for i, (ends_a, pa) in enumerate(edges):
        for ends_b, pb in edges[i + 1 :]:
            if ends_a & ends_b:
                continue
            segs = [(pb[k], pb[k + 1]) for k in range(len(pb) - 1)]
            if any(_cross(pa[k], pa[k + 1], r, s) for k in range(len(pa) - 1) for r, s in segs):
                n += 1
    return n


def _tour():  # notebook 01's tape: a reused tensor (h * h) and a matmul's two gradients
    x = tv.tensor([0.5, -1.0, 2.0], name="x")
    w = tv.variable(np.array([[0.5, -0.3], [0.1, 0.8], [-0.6, 0.2]], np.float32), name="w")
    with tv.Tape(persistent=True) as tape:
        h = tv.tanh(x[None, :] @ w)
        loss = tv.sum(h * h)
    tape.gradient(loss, [x, w])
    return tape


def _mlp(layers: int):  # a hand-written MLP: h = tanh(h @ W + b) in a loop, a squared loss
    rng = np.random.default_rng(0)
    ws = [tv.variable(rng.standard_normal((3, 3)) * 0.5, name=f"W{i}") for i in range(layers)]
    bs = [tv.variable(np.zeros(3), name=f"b{i}") for i in range(layers)]
    x = tv.tensor(rng.standard_normal((2, 3)), name="x")
    with tv.Tape(persistent=True) as tape:
        h = x
        for W, b in zip(ws, bs):
            h = tv.tanh(h @ W + b)
        loss = tv.mean(h * h)
    tape.gradient(loss, ws + bs)
    return tape


@pytest.mark.parametrize("engine", ["auto", "wasm"])
@pytest.mark.parametrize("case", ["tour", "readme", "mlp2", "mlp3"])
def test_the_static_both_picture_has_no_crossings_between_backward_edges(case, engine):
    cases = {"tour": _tour, "readme": _readme, "mlp2": lambda: _mlp(2), "mlp3": lambda: _mlp(3)}
    tape = cases[case]()
    assert backward_crossings(tape, engine) == 0


def test_the_counter_sees_a_crossing():
    a = _polyline("M0,0C0,0 10,10 10,10")
    b = _polyline("M0,8C0,8 10,1 10,1")
    assert any(_cross(a[k], a[k + 1], b[j], b[j + 1]) for k in range(16) for j in range(16))
    assert not _cross((0, 0), (1, 0), (0, 1), (1, 1))


def _readme():  # the README's ten lines: x @ w, tanh, ** 2 (a Pow's gradient: 4 ops), sum
    x = tv.tensor([0.5, -1.0, 2.0], name="x")
    w = tv.variable([[0.5, -0.3], [0.1, 0.8], [-0.6, 0.2]], name="w")
    with tv.Tape(persistent=True) as tape:
        loss = tv.sum(tv.tanh(x @ w) ** 2)
    tape.gradient(loss, [x, w])
    return tape
