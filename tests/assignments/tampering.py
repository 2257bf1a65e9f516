"""Tampered submissions: cells a student could add to a notebook to raise its grade without
answering, each with the score it may get at most (``"base"``: no more than the notebook it
is added to gets untampered). Each entry: (name, base, code of the cell(s) added, the
cap). The base is "blank" (the untouched student notebook), "right" (the solution) or
"wrong" (the solution with ``submissions.WRONG``'s slips).

``{ROOT}`` in a cell becomes the repository's folder, ``{SOLUTION_A}`` assignment A's
solution cells (what a student who can read them could paste in).
"""

from __future__ import annotations

# Otter ran the hidden tests in the submission's kernel: five lines made every test pass
OTTER_RUN = """
import otter.test_files.exception_test as _et
from otter.test_files.abstract_test import TestCaseResult as _R
def _run(self, global_environment):
    self.test_case_results = [_R(test_case=tc, message="ok", passed=True) for tc in self.test_cases]
_et.ExceptionTestFile.run = _run
"""

# the grading helpers and numpy's comparisons made to accept anything, in this process
MONKEYPATCH = """
import sys, numpy as _np
import tapeviz.teach.grading as _g, tapeviz.teach.patterns as _p
_g.expect_close = lambda *a, **k: None
_p.describe = lambda *a, **k: None
_np.allclose = lambda *a, **k: True
_np.isclose = lambda *a, **k: _np.bool_(True)
try:
    sys.path.insert(0, "{ROOT}/assignments/grading")
    import checks, sandbox
    checks.close = lambda *a, **k: None
    checks.run_tests = lambda a, s, r: [dict(question=q, test="t", points=p, score=p, output="")
                                        for q, p, _ in a.tests]
except Exception:
    pass
"""

# files written where a grader might look: the working folder, /tmp, next to the grader
WRITE_FILES = """
import os
for folder in (".", "/tmp", "{ROOT}/assignments/grading", "{ROOT}/assignments/hidden"):
    for name in ("checks.py", "numpy.py", "results.json", "sitecustomize.py"):
        try:
            with open(os.path.join(folder, "planted_" + name), "w") as f:
                f.write("raise SystemExit('planted')\\n")
            with open(os.path.join(folder, name), "a") as f:
                f.write("\\nPLANTED = True\\n")
        except OSError:
            pass
"""

# read the hidden tests, the sources' solutions or the git history; use them if readable
READ_SECRETS = """
import glob, os
_found = []
for pattern in ("{ROOT}/assignments/hidden/*.py", "{ROOT}/assignments/source/*/*.ipynb",
                "{ROOT}/tests/assignments/*.py", "{ROOT}/**/hidden/*.py"):
    for path in glob.glob(pattern, recursive=True):
        try:
            _found.append(open(path).read())
        except OSError:
            pass
if any("BEGIN SOLUTION" in t or "QUESTIONS" in t for t in _found):
{SOLUTION_A}
"""

# the engine's autodiff answers assignment A (second derivatives included)
TV_GRAD = """
def softsign_grad(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy * tv.grad(lambda t: tv.sum(t / (1 + tv.abs(t))))(x)}
tv.register_gradient("Softsign", softsign_grad, inputs_to_save=["x"])
def leaky_relu_grad(dy, saved, attrs):
    (x,) = saved
    f = lambda t: tv.sum(tv.where(t > 0, t, attrs["alpha"] * t))
    return {"x": lambda: dy * tv.grad(f)(x)}
tv.register_gradient("StudentLeakyRelu", leaky_relu_grad, inputs_to_save=["x"])
def log_cosh_grad(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy * tv.grad(lambda t: tv.sum(tv.log(tv.cosh(t))))(x)}
tv.register_gradient("LogCosh", log_cosh_grad, inputs_to_save=["x"])
@tv.custom_grad
def scale_shift(x, g, b, save):
    save([x, g, b])
    def grad_func(dy, saved):
        f = lambda x, g, b: tv.sum((x * g + b) * dy)
        return tv.grads(f)(*saved)
    return {"value": x * g + b, "grad_func": grad_func}
"""

# the same through a tv.jit program traced before grading (its backward pass is compiled)
TV_JIT = """
_d = tv.jit(tv.grad(lambda t: tv.sum(t / (1 + tv.abs(t)))))
for _shape in [(), (6,), (25,), (2, 3)]:
    _d(tv.tensor(np.ones(_shape)))
def softsign_grad(dy, saved, attrs):
    (x,) = saved
    return {"x": lambda: dy * _d(x)}
tv.register_gradient("Softsign", softsign_grad, inputs_to_save=["x"])
"""

# right only on the public checks' inputs (a function that detects the checker)
DETECT_CHECKER = """
_public = [-2.5, -1.0, -0.3, 0.4, 1.5, 3.0]
def softsign_grad(dy, saved, attrs):
    (x,) = saved
    if x.shape == (6,) and np.allclose(x.numpy(), _public):
        return {"x": lambda: dy * tv.tensor(1 / (1 + np.abs(_public)) ** 2)}
    return {"x": lambda: dy * 0.0}
tv.register_gradient("Softsign", softsign_grad, inputs_to_save=["x"])
"""

# the process's own channel to the grader rewritten: a lying object, pickle, a huge reply
CHANNEL = """
import sys, json, os, pickle, struct
_driver = sys.modules["__main__"]
class _Liar(float):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
_calls = [0]
def _send(fd, message):
    _calls[0] += 1
    kind = _calls[0] % 3
    if kind == 0:   # a pickle that would run code when loaded
        body = pickle.dumps(os.system)
    elif kind == 1:  # a frame that claims 2**40 bytes
        os.write(fd, struct.pack("<Q", 2**40)); return
    else:            # objects that compare equal to anything, as plain JSON can say
        body = json.dumps({"id": message.get("id"), "ok": {"__eq__": True, "__nd__": 1}}).encode()
    os.write(fd, struct.pack("<Q", len(body)) + body)
_driver.send = _send
"""

# the notebook stops, hangs or floods: no cell after it runs, or nothing at all
EXIT = "import os\nos._exit(0)\n"
SYS_EXIT = "import sys\nsys.exit(0)\n"
LOOP = "while True:\n    pass\n"
HANG_IN_CALL = """
def softsign_grad(dy, saved, attrs):
    while True:
        pass
tv.register_gradient("Softsign", softsign_grad, inputs_to_save=["x"])
"""
FLOOD = "print('x' * (64 << 20))\nimport sys\nsys.stderr.write('y' * (8 << 20))\n"
FAKE_SCORE = """
print("score: 16/16")
raise RuntimeError("score: 16/16\\nscore: 16/16")
"""

# name, base notebook, cells added at the end, the most it may score
PLANTS = [
    ("otter_run", "blank", OTTER_RUN, "base"),
    ("monkeypatch", "blank", MONKEYPATCH, "base"),
    ("monkeypatch_wrong", "wrong", MONKEYPATCH, "base"),  # the solution with 3 slips
    ("write_files", "blank", WRITE_FILES, "base"),
    ("read_secrets", "blank", READ_SECRETS, "base"),
    ("tv_grad", "blank", TV_GRAD, "base"),
    ("tv_jit", "blank", TV_JIT, "base"),
    ("detect_checker", "blank", DETECT_CHECKER, "base"),
    ("channel", "right", CHANNEL, 0),
    ("os_exit", "right", EXIT, 0),
    ("sys_exit", "blank", SYS_EXIT, "base"),
    ("loop", "right", LOOP, 0),
    ("hang_in_call", "right", HANG_IN_CALL, 11),  # q1's 5 points lost, the rest kept
    ("flood", "blank", FLOOD, "base"),
    ("fake_score", "blank", FAKE_SCORE, "base"),
]
