"""One slip costs one question, and the public checks name it without the answer.

Each row of ``SLIPS`` plants one classic mistake in an assignment's solution: the grader's
hidden tests (``assignments/hidden/<name>.py``, run through ``checks.run_tests`` with the
probes in this process, ``in_process.hidden_scores``) must take points from that question
only, the public test a student runs before submitting must fail with a sentence naming the
mistake, and no public message may hold code or the engine's fix. Also: every solution full
marks and every untouched notebook none; a faithful copy of micrograd's engine fails every
question of B; D's network learns the spiral. (The same hidden tests through the sandboxed
grader, end to end: ``test_assignments.py``.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "assignments"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import grade  # noqa: E402
import in_process as ip  # noqa: E402
from micrograd_copy import AdaptedMicrogradValue, MicrogradValue  # noqa: E402

pytestmark = pytest.mark.slow

# words a public message must never hold: code, the engine's fix, the grader's formula
NO_ANSWER = ("sum_to", "expected dtype", "divide by", "tv.", "np.", "@", ".T ", "axis=", "/ k")

BN_MEAN = "    dx = dxhat * inv + dvar * 2.0 * (x - mu) / n + dmu / n"
BFS = (
    "    visit(self)\n    self.grad = 1.0\n    for v in reversed(order):\n"
    "        for child, local in v.edges:\n            child.grad += local * v.grad\n",
    "    self.grad = 1.0\n    queue, done = [self], set()\n    while queue:\n"
    "        v = queue.pop(0)\n        if id(v) not in done:\n            done.add(id(v))\n"
    "            for child, local in v.edges:\n                child.grad += local * v.grad\n"
    "                queue.append(child)\n",
)
ZERO_GRAD = (
    "    losses = []\n    for _ in range(steps):\n"
    "        for p, g in zip(params, average_gradient(params, X, y, k)):\n",
    "    losses, acc = [], [np.zeros(p.shape) for p in params]\n    for _ in range(steps):\n"
    "        for a, g in zip(acc, average_gradient(params, X, y, k)):\n"
    "            a += g\n        for p, g in zip(params, acc):\n",
)

# (assignment, text in the solution, the slip, the question it costs, the public sentence)
SLIPS = [
    (
        "a_op_gradients",
        "dy / tv.square(1 + tv.abs(x))",
        "1 / tv.square(1 + tv.abs(x))",
        "q1",
        "dy, the gradient arriving from above, is not multiplied in",
    ),
    (
        "a_op_gradients",
        "dy / tv.square(1 + tv.abs(x))",
        "dy / (1 + tv.abs(x))",
        "q1",
        "the square on (1 + |x|) is missing",
    ),
    (
        "a_op_gradients",
        'dy * tv.where(x > 0, 1.0, attrs["alpha"])',
        'tv.where(x > 0, 1.0, attrs["alpha"])',
        "q2",
        "is dy, the gradient arriving, multiplied in",
    ),
    (
        "a_op_gradients",
        "tv.sum(dy * x, axis=0)",
        "dy * x",
        "q3",
        "the gradient of g has shape (4, 3), but g has shape (3,)",
    ),
    ("a_op_gradients", "dy * tv.tanh(x)", "tv.tanh(x)", "q4", "is not multiplied in"),
    (
        "b_value",
        "(other, -q / other.data)",
        "(other, q / other.data)",
        "q1",
        "the local derivatives of a / b",
    ),
    ("b_value", "s * (1.0 - s)", "s * (1.0 + s)", "q2", "the local derivative of sigmoid"),
    (
        "b_value",
        "child.grad += local * v.grad",
        "child.grad = local * v.grad",
        "q3",
        "the input keeps one share of the two",
    ),
    (
        "b_value",
        "child.grad += local * v.grad",
        "child.grad += local",
        "q3",
        "the gradient that arrived at the node is not multiplied in",
    ),
    ("b_value", *BFS, "q3", "(topological order)?"),
    (
        "c_training_loop",
        "a += g.numpy() / k\n    return acc",
        "a += g.numpy()\n    return acc",
        "q1",
        "the gradients are summed over the micro-batches, not averaged",
    ),
    ("c_training_loop", *ZERO_GRAD, "q2", "gradients from earlier steps are still in the update"),
    (
        "d_layers",
        "x.T @ dout, dout.sum(axis=0)",
        "x.T @ dout, dout",
        "q1",
        "db: expected shape (5,), got (4, 5)",
    ),
    (
        "d_layers",
        "return dout * (x > 0)",
        "return 1.0 * (x > 0)",
        "q2",
        "dout, the gradient arriving from above, is not multiplied in",
    ),
    (
        "d_layers",
        "    dscores /= n\n",
        "",
        "q3",
        "the gradient of the sum over the examples, where the loss is their mean",
    ),
    (
        "d_layers",
        BN_MEAN,
        BN_MEAN.replace(" + dmu / n", ""),
        "q4",
        "the path through the mean is missing",
    ),
    ("d_layers", "(n * dout - dbeta", "(dout - dbeta", "q5", "dx: "),
    (
        "d_layers",
        "dx[:, i : i + kh, j : j + kw, :] += ",
        "dx[:, i : i + kh, j : j + kw, :] = ",
        "q6",
        "dx: ",
    ),
    (
        "d_layers",
        "affine_backward(relu_backward(da, cache2), cache1)",
        "affine_backward(da, cache1)",
        "q7",
        "W1: ",
    ),
]


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    for name in grade.NAMES:
        grade.build(name, out)
    return out


def _public(dist, name):
    return ip.public_tests(dist / name / "student" / f"{name}.ipynb")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", grade.NAMES)
def test_solution_full_untouched_none(name, dist):
    ns = ip.namespace(dist / name / "autograder" / f"{name}.ipynb")
    right, rows = ip.hidden_scores(name, ns, seed=5)
    assert all(got == full for got, full in right.values()), f"{name}: the solution: {rows}"
    public = ip.score(ip.run(_public(dist, name), ns))
    assert all(got == full for got, full in public.values()), f"{name}: public: {public}"
    blank, _ = ip.hidden_scores(name, ip.namespace(dist / name / "student" / f"{name}.ipynb"))
    assert all(got == 0 for got, _ in blank.values()), f"{name}: untouched: {blank}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name, old, new, question, sentence", SLIPS,
                         ids=[f"{s[0][0]}-{s[3]}-{i}" for i, s in enumerate(SLIPS)])  # fmt: skip
def test_one_slip_costs_one_question_and_is_named(name, old, new, question, sentence, dist):
    ns = ip.namespace(dist / name / "autograder" / f"{name}.ipynb", [(old, new)])
    for seed in (6, 7):
        scores, rows = ip.hidden_scores(name, ns, seed=seed)
        lost = {q for q, (got, full) in scores.items() if got < full}
        assert lost == {question}, f"{name}: the slip in {question} cost {sorted(lost)}: {rows}"
    seen = ip.run(_public(dist, name), ns)
    messages = [m for _, _, m in seen[question] if m]
    assert messages and any(sentence in m for m in messages), (
        f"{name} {question}: the public check does not say {sentence!r}: {messages}"
    )
    for m in (m for rows in seen.values() for _, _, m in rows):
        assert not any(word in m for word in NO_ANSWER), f"{name}: a public message: {m!r}"


ZEROS = {  # earlier answers that are zeros, and a later question built on them
    "c_training_loop": (
        "def average_gradient(params, X, y, k):\n"
        "    return [np.zeros(p.shape) for p in params]\n\n\n"
        "def train(params, X, y, steps, lr, k):\n"
        "    return [float(loss_fn(params, X, y).numpy()) for _ in range(steps)]\n",
        "q2",
    ),
    "d_layers": (
        "import numpy as np\n\n\n"
        "def affine_backward(dout, cache):\n"
        "    return tuple(np.zeros_like(a) for a in cache)\n\n\n"
        "def relu_backward(dout, cache):\n    return np.zeros_like(cache)\n\n\n"
        "def softmax_loss(scores, y):\n    return 0.0, np.zeros_like(scores)\n\n\n"
        "def two_layer_loss(params, X, y):\n"
        "    h = np.maximum(X @ params['W1'] + params['b1'], 0.0)\n"
        "    s = h @ params['W2'] + params['b2']\n"
        "    s = s - s.max(axis=1, keepdims=True)\n"
        "    logp = s - np.log(np.exp(s).sum(axis=1, keepdims=True))\n"
        "    loss = -logp[np.arange(len(y)), y].mean()  # the right loss, zero gradients\n"
        "    return loss, {k: np.zeros_like(v) for k, v in params.items()}\n",
        "q7",
    ),
}


@pytest.mark.parametrize("name", sorted(ZEROS))
def test_a_question_on_own_answers_refuses_zeros(name, dist):
    """C's train and D's network are accepted on the student's own earlier functions, but
    not when those answer zeros (a loop or a chain that cannot be wrong)."""
    ns = ip.namespace(dist / name / "student" / f"{name}.ipynb")
    code, question = ZEROS[name]
    exec(code, ns)
    scores, rows = ip.hidden_scores(name, ns, seed=9)
    assert scores[question][0] == 0, f"{name}: zeros got {scores[question]}: {rows}"


def test_d_refuses_the_engines_autodiff(dist):
    """D's answers are numpy: a relu_backward that asks tapeviz's engine for the gradient is
    refused inside the graded calls: q2, and q7, whose network calls it, get nothing."""
    name = "d_layers"
    ns = ip.namespace(dist / name / "autograder" / f"{name}.ipynb")
    exec(
        "import tapeviz as tv\n\n\n"
        "def relu_backward(dout, cache):\n"
        "    f = lambda t: tv.sum(tv.relu(t) * tv.tensor(dout))\n"
        "    return tv.grad(f)(tv.tensor(cache)).numpy()\n",
        ns,
    )
    scores, rows = ip.hidden_scores(name, ns, seed=10)
    lost = {q for q, (got, full) in scores.items() if got < full}
    assert lost == {"q2", "q7"} and scores["q2"][0] == scores["q7"][0] == 0, rows
    assert any("not allowed here" in r["output"] for r in rows if r["question"] == "q2"), rows


@pytest.mark.parametrize("value", [MicrogradValue, AdaptedMicrogradValue])
def test_a_copy_of_micrograds_engine_fails_b(value, dist):
    """B's every question fails for micrograd's engine (and for it with B's ops added)."""
    scores, rows = ip.hidden_scores("b_value", {"Value": value}, seed=8)
    assert all(got == 0 for got, _ in scores.values()), f"{value.__name__} scores {rows}"


def test_the_micrograd_copy_is_a_working_engine():
    """The copy is right on its own terms, so that the test above fails B for its structure,
    not for a bug: d/da, d/db of tanh(a * b + a) + exp(b) ** 2 against the formulas."""
    import math

    for cls in (MicrogradValue, AdaptedMicrogradValue):
        a, b = cls(0.7), cls(-0.4)
        ((a * b + a).tanh() + b.exp() ** 2).backward()
        t = math.tanh(0.7 * -0.4 + 0.7)
        assert math.isclose(a.grad, (1 - t**2) * (-0.4 + 1))
        assert math.isclose(b.grad, (1 - t**2) * 0.7 + 2 * math.exp(-0.8))


def test_d_network_learns_the_spiral(dist):
    """The solution's two-layer net on the spiral: the loss falls, accuracy far above 1/3."""
    ns = ip.namespace(dist / "d_layers" / "autograder" / "d_layers.ipynb")
    X, y = ns["spiral"](seed=3)
    params = ns["init"](seed=4)
    losses = ns["train"](params, X, y)
    assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
    assert ns["accuracy"](params, X, y) > 0.8
