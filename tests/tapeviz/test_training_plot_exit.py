"""A script that uses TrainingPlot exits cleanly: at exit no plot thread is left drawing (a
daemon thread inside matplotlib's C++ code while the interpreter shuts down aborts the
process with ``terminate called without an active exception``)."""

from __future__ import annotations

_SCRIPT = """
import atexit
import sys
import threading


def no_thread_left():  # registered before tapeviz's own hook, so it runs after it
    alive = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread())
    if alive:
        print(f"threads alive at exit: {alive}", file=sys.stderr)


atexit.register(no_thread_left)

import tapeviz as tv  # noqa: E402

drawing = threading.Event()


class Plot(tv.TrainingPlot):
    def _figure(self):
        if threading.current_thread() is not threading.main_thread():
            drawing.set()
        return super()._figure()


def still(t=0.0):
    return t


# a trailing redraw that is drawing when the script ends
busy = Plot(min_interval=0.01, clock=still)
busy.update(1, loss=1.0)
busy.update(2, loss=0.5)
assert drawing.wait(60)
# a trailing redraw still waiting for its time
waiting = Plot(min_interval=600.0, clock=still)
waiting.update(1, loss=1.0)
waiting.update(2, loss=0.5)
# training in a background thread, drawing after every step
x, y = tv.data.two_moons(256, seed=0)
model = tv.nn.Sequential([tv.nn.Dense(8, "tanh"), tv.nn.Dense(2)])
training = tv.TrainingPlot(min_interval=0.0)
thread = training.fit_in_thread(model, x, y, "softmax_cross_entropy", "sgd", epochs=10**6)
while training.draw_count < 2:
    thread.join(0.01)
print(waiting.draw_count, training.stop_requested)
"""


def test_a_script_with_training_plots_exits_cleanly(run_script):
    _, out = run_script(_SCRIPT)
    assert out.stderr == "" and out.returncode == 0
    assert out.stdout.split() == ["1", "False"]  # a redraw pending; training running
