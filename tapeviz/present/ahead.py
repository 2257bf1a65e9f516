"""Work ahead: what a widget computes while the kernel is idle, so the browser can answer a
control at once from what it already holds (issue "see it": every control in 50 ms).

One turn of the kernel's event loop does one step, so a message from a view is handled
between two steps; a widget being shown makes every other widget's work wait
(``make_room``), so its first picture does not share the CPU. Outside a kernel (a script,
a test) nothing runs ahead.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["running_loop", "make_room", "quiet_left", "run_ahead", "NEW_VIEW_QUIET_S"]

NEW_VIEW_QUIET_S = 1.0  # after a widget is made, the others' work ahead waits this long
_quiet_until = [0.0]  # time.monotonic() until which no widget works ahead


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

    def turn():
        if not current():
            return
        wait = quiet_left()
        if wait:
            loop.call_later(wait, turn)
        elif step():
            loop.call_later(0.002, turn)

    loop.call_later(delay, turn)
    return True
