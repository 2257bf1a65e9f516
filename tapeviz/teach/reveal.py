"""The engine's gradients beside the student's, shown only where the student has answered.

``reveal(tape, a=a_grad, …)`` is the "engine does the same" picture of a lesson: a table of
your answer and the engine's for each named value, and the lesson graph. Where your answer
is missing or wrong the engine's number stays "?" (the pattern of the mismatch is named
instead), so "Run All" shows no answer before you give it; ``show=True`` is the explicit
"show me".
"""

from __future__ import annotations

import numpy as np

from ..graph.lesson import caller_names, lesson_graph, tensor_names
from ..present.palette import FAIL, PASS
from ..present.text import html_text
from .patterns import describe

__all__ = ["Reveal", "reveal"]


class Reveal:
    """The table and the lesson graph of ``reveal``.

    Attributes:
        rows: ``[(name, your answer, the engine's gradient or None when hidden, verdict)]``.
        graph: the ``LessonGraph``, with the unanswered gradients shown as "?".
        hidden: the names whose engine gradient is not shown.
    """

    def __init__(self, tape, names: dict, yours: dict, show: bool):
        full = lesson_graph(tape, names)
        by_name = {t["name"]: (tid, t["grad"]) for tid, t in full.data["tensors"].items()}
        unknown = sorted(set(yours) - set(by_name))
        if unknown:
            raise ValueError(f"reveal: no tensor named {', '.join(unknown)} on the tape "
                             f"(names: {', '.join(sorted(by_name))})")  # fmt: skip
        self.rows, hidden_ids, self.hidden = [], set(), []
        for name, got in yours.items():
            tid, want = by_name[name]
            problem = describe(got, want)
            shown = show or problem is None
            if not shown:
                hidden_ids.add(tid)
                self.hidden.append(name)
            self.rows.append((name, got, want if shown else None, problem or "agrees"))
        self.graph = lesson_graph(tape, names, hidden=hidden_ids)

    def _table(self) -> str:
        cells = []
        for name, got, want, verdict in self.rows:
            colour = PASS if verdict == "agrees" else FAIL
            mine = "…" if got is ... or got is None else _num(got)
            engine = "?" if want is None else _num(want)
            cells.append(
                f"<tr><td><b>∂/∂{html_text(name)}</b></td><td>{html_text(mine)}</td>"
                f"<td>{html_text(engine)}</td>"
                f"<td style='color:{colour}'>{html_text(verdict)}</td></tr>"
            )
        head = "<tr><th>gradient</th><th>yours</th><th>engine</th><th></th></tr>"
        note = ""
        if self.hidden:
            note = (f"<div><i>The engine's {', '.join(self.hidden)} stay hidden until yours "
                    "agree; <code>show=True</code> shows them.</i></div>")  # fmt: skip
        return f"<table>{head}{''.join(cells)}</table>{note}"

    def _repr_html_(self) -> str:
        return self._table() + self.graph.to_svg()

    def __repr__(self) -> str:
        return "\n".join(
            f"d/d{n}: yours {'…' if g is ... else g}, engine {'?' if w is None else _num(w)}: {v}"
            for n, g, w, v in self.rows
        )


def _num(a) -> str:
    a = np.asarray(a, dtype=np.float64)
    return f"{a.item():.4g}" if a.size == 1 else np.array2string(a, precision=4)


def reveal(tape, *, show: bool = False, **yours) -> Reveal:
    """The engine's gradients beside yours, each shown only once yours agrees.

    Args:
        tape: a ``tv.Tape`` whose ``gradient`` was taken.
        show: show every gradient of the engine, answered or not ("show me").
        **yours: your answers by the variable names of the tensors, e.g. ``a=a_grad``.

    Returns:
        A ``Reveal``: displays as the table and the lesson graph.

    Raises:
        ValueError: a name is not a tensor on the tape (the message lists the names).

    Example:
        >>> import tapeviz as tv
        >>> a, b = tv.tensor(2.0, dtype="float64"), tv.tensor(-3.0, dtype="float64")
        >>> with tv.Tape() as tape:
        ...     tape.watch([a, b])
        ...     e = a * b
        >>> _ = tape.gradient(e, [a, b])
        >>> reveal(tape, a=-3.0, b=...).hidden
        ['b']
    """
    return Reveal(tape, tensor_names(tape, caller_names(2)), yours, show)
