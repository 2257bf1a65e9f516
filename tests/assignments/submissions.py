"""The submissions the suite grades for each assignment: the untouched student notebook, the
instructor's solution (Otter's autograder notebook) and a wrong one — the solution with the
mistakes students make, as text substitutions, each with what the feedback must name."""

from __future__ import annotations

# assignment -> [(text in the solution, the wrong text, a phrase the grader's report must hold)]
WRONG = {
    "a_op_gradients": [
        (
            "dy / tv.square(1 + tv.abs(x))",
            "dy / (1 + tv.abs(x))",
            "the square on (1 + |x|) is missing",
        ),
        (
            'tv.where(x > 0, 1.0, attrs["alpha"])',
            "tv.where(x > 0, 1.0, 0.0)",
            "right except where x < 0",
        ),
        ("dy * tv.tanh(x)", "dy * tv.tensor(np.tanh(x.numpy()))", "rather than tv ops"),
    ],
    "b_value": [
        ("child.grad += local * v.grad", "child.grad = local * v.grad", "keeps one share"),
        ("(other, -q / other.data)", "(other, q / other.data)", "the local derivatives of a / b"),
    ],
    "c_training_loop": [
        (  # the loop keeps one accumulator for all steps (PyTorch without zero_grad)
            "    losses = []\n    for _ in range(steps):\n"
            "        for p, g in zip(params, average_gradient(params, X, y, k)):\n",
            "    losses, acc = [], [np.zeros(p.shape) for p in params]\n    for _ in range(steps):\n"
            "        for a, g in zip(acc, average_gradient(params, X, y, k)):\n"
            "            a += g\n        for p, g in zip(params, acc):\n",
            "1 step is right, 4 steps are not",
        ),
    ],
    "d_layers": [
        ("return dout * (x > 0)", "return 1.0 * (x > 0)", "is not multiplied in"),
        (
            "    dx = dxhat * inv + dvar * 2.0 * (x - mu) / n + dmu / n",
            "    dx = dxhat * inv + dvar * 2.0 * (x - mu) / n",
            "the path through the mean is missing",
        ),
    ],
}
