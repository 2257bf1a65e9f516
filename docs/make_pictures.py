"""Regenerate the README's pictures from the default, pip-only path: ``python docs/make_pictures.py``.

- ``docs/graph.png``: ``tv.show_graph`` of the README's "Ten lines" example, forward and
  backward, drawn by Graphviz in WebAssembly (the engine a ``pip install "tapeviz[viz]"``
  without system Graphviz uses) and rasterized by resvg, as ``GraphView.save("g.png")`` does.
- ``docs/gradcheck.png``: the plots of ``tv.GradCheckWidget`` on a custom gradient with a
  planted bug (softsign's derivative without its square), as matplotlib draws them.

Needs the ``viz`` extra; a system Graphviz, if installed, is not used.
"""

from __future__ import annotations

import os
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's tapeviz, installed or not
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402

import tapeviz as tv  # noqa: E402


def graph_png() -> bytes:
    """The README's ten-line example (``x @ w``, tanh, square, sum), forward and backward."""
    x = tv.tensor([0.5, -1.0, 2.0], name="x")
    w = tv.variable([[0.5, -0.3], [0.1, 0.8], [-0.6, 0.2]], name="w")
    with tv.Tape(persistent=True) as tape:
        loss = tv.sum(tv.tanh(x @ w) ** 2)
    tape.gradient(loss, [x, w])
    return tv.show_graph(tape, backward="both", engine="wasm").to_png(scale=2)


@tv.custom_grad
def softsign(x, save):
    """softsign(x) = x / (1 + |x|), with a wrong gradient: dy / (1 + |x|), the square lost."""
    save([x])
    return {
        "value": x / (1 + tv.abs(x)),
        "grad_func": lambda dy, saved: dy / (1 + tv.abs(saved[0])),
    }


def gradcheck_png() -> bytes:
    """The gradient-check widget's plots on the wrong softsign gradient."""
    widget = tv.GradCheckWidget(softsign, np.linspace(-3.0, 3.0, 7))
    if widget.error is not None:
        raise RuntimeError(f"make_pictures: the gradient-check widget failed: {widget.error}")
    if widget.report.passed:
        raise RuntimeError("make_pictures: the planted wrong gradient passed the check")
    return widget.png()  # the matplotlib figure, drawn when asked for


def main(out: pathlib.Path = DOCS) -> list[pathlib.Path]:
    """Write graph.png and gradcheck.png into ``out`` (default: docs/); returns the paths."""
    written = []
    for name, make in [("graph.png", graph_png), ("gradcheck.png", gradcheck_png)]:
        png = make()
        if png[:8] != b"\x89PNG\r\n\x1a\n":
            raise RuntimeError(f"make_pictures: {name} is not a PNG")
        (out / name).write_bytes(png)
        written.append(out / name)
        print(f"wrote {out.name}/{name} ({len(png) // 1024} KiB)")
    return written


if __name__ == "__main__":
    main()
