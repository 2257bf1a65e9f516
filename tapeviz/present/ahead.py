"""Work ahead: what a widget computes while the kernel is idle, so the browser can answer a
control at once from what it already holds (issue "see it": every control in 50 ms).

One turn of the kernel's event loop does one step, so a message from a view is handled
between two steps; a widget being shown makes every other widget's work wait
(``make_room``), so its first picture does not share the CPU. Outside a kernel (a script,
a test) nothing runs ahead.

Threads: JupyterLab 4.6 and Notebook 7 send widget messages to a kernel *subshell*, a thread
with its own event loop beside the thread that runs cells. So a widget's entry points (comm
messages, trait observers, buttons, each step of work ahead) are ``serialized``: one at a
time across all tapeviz widgets, whichever thread calls. A step of work ahead that fails
stops that widget's work ahead; it never reaches the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time

__all__ = [
    "forget_unseen",
    "running_loop",
    "make_room",
    "quiet_left",
    "run_ahead",
    "serialized",
    "NEW_VIEW_QUIET_S",
]

NEW_VIEW_QUIET_S = 1.0  # after a widget is made, the others' work ahead waits this long
FORGET_AFTER_S = 10.0  # a widget with no view this long drops what it drew ahead
_quiet_until = [0.0]  # time.monotonic() until which no widget works ahead
_WIDGETS = threading.RLock()  # held by every widget entry point (``serialized``)


def serialized(method):
    """Run ``method`` holding the widgets' lock: one entry point at a time, across threads."""

    @functools.wraps(method)
    def one_at_a_time(*args, **kwargs):
        with _WIDGETS:
            return method(*args, **kwargs)

    return one_at_a_time


def running_loop():
    """The kernel's event loop when called inside it (a cell, a comm message), else None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def make_room(seconds: float = NEW_VIEW_QUIET_S) -> None:
    """A new widget is about to be shown: every widget's work ahead waits ``seconds``."""
    _quiet_until[0] = max(_quiet_until[0], time.monotonic() + seconds)


def quiet_left() -> float:
    """Seconds until work ahead may go on (0 when it may now)."""
    return max(0.0, _quiet_until[0] - time.monotonic())


def run_ahead(current, step, delay: float = 0.01) -> bool:
    """Call ``step()`` once per turn of the kernel's event loop, starting after ``delay``
    seconds, while ``current()`` holds (a newer request stops an older one) and ``step()``
    returns True; wait while another widget makes room. False outside a kernel."""
    loop = running_loop()
    if loop is None:
        return False

    @serialized
    def turn():
        if not current():
            return
        wait = quiet_left()
        if wait:
            loop.call_later(wait, turn)
            return
        try:
            more = step()
        except Exception:  # work ahead is a convenience: a failure stops it, nothing more
            return
        if more:
            loop.call_later(0.002, turn)

    loop.call_later(delay, turn)
    return True


def forget_unseen(unseen, forget, delay: float = FORGET_AFTER_S) -> bool:
    """A widget's last view went away (its cell ran again, its output was cleared): after
    ``delay`` seconds, if ``unseen()`` still holds, call ``forget()`` to drop what can be
    computed again (pictures and checks drawn ahead, figures).

    The widget itself lives on: ipywidgets keeps every widget until it is closed, and
    ``display(w)`` may show it again (its new view asks for what it needs). Without this,
    each re-run of a notebook left megabytes of drawn-ahead pictures in the kernel.
    False outside a kernel.
    """
    loop = running_loop()
    if loop is None:
        return False

    @serialized
    def later():
        if unseen():
            try:
                forget()
            except Exception:  # freeing memory is a convenience too
                pass

    loop.call_later(delay, later)
    return True
