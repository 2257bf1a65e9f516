"""Shared pieces of the widgets: PNG figures, error boxes, value summaries, static reprs.

Plots are drawn with matplotlib's Agg canvas straight into PNG bytes (no pyplot state, no
front-end extension); a widget shows them in an ``ipywidgets.Image`` whose value is swapped
on change, which does not flicker.
"""

from __future__ import annotations

import base64
import io

import numpy as np

from ..present.palette import FAIL, OKABE_ITO, TINT, WHITE
from ..present.text import html_text


def new_figure(width: float, height: float, dpi: int = 90, layout: str | None = "constrained"):
    """A matplotlib Figure on an Agg canvas (no pyplot, safe in any backend).

    ``layout=None`` skips constrained layout (much faster; set margins yourself) for
    figures redrawn while a slider is dragged.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def figure_png(fig) -> bytes:
    """Render ``fig`` to PNG bytes: one Agg draw, then a fast PIL encode.

    (``print_png`` would draw the figure a second time and compress harder; this is about
    twice as fast, which matters while a slider is dragged.)
    """
    from PIL import Image

    fig.canvas.draw()
    buf = io.BytesIO()
    Image.fromarray(np.asarray(fig.canvas.buffer_rgba())).save(buf, format="png", compress_level=1)
    return buf.getvalue()


def png_img_tag(png: bytes, alt: str = "plot") -> str:
    data = base64.b64encode(png).decode("ascii")
    return f"<img alt='{html_text(alt)}' src='data:image/png;base64,{data}'/>"


def error_html(title: str, message) -> str:
    """A readable error box shown in place of a widget area."""
    if isinstance(message, BaseException):
        message = f"{type(message).__name__}: {message}"
    return (
        f"<div role='alert' style='border:2px solid {FAIL};border-left-width:8px;"
        f"background:{TINT['pale_vermillion']};padding:8px 12px;margin:4px 0;"
        "font-family:sans-serif'>"
        f"<b>&#9888; {html_text(title)}</b><pre style='white-space:pre-wrap;margin:4px 0 0'>"
        f"{html_text(str(message))}</pre></div>"
    )


def fmt_shape(shape) -> str:
    """Python's spelling, as the graph writes it: ``(3,)``, ``(2, 3)``, ``()``; ``?`` unknown."""
    return "?" if shape is None else str(tuple(int(s) for s in shape))


def array_stats(a: np.ndarray) -> dict:
    """min, max, mean, std and counts of NaN/Inf/zeros of a numeric array."""
    a = np.asarray(a)
    out = {"shape": a.shape, "dtype": str(a.dtype), "size": int(a.size)}
    if a.size == 0 or a.dtype.kind not in "fiub":
        return out
    f = a.astype(np.float64)
    finite = f[np.isfinite(f)]
    out.update(
        nan=int(np.isnan(f).sum()),
        inf=int(np.isinf(f).sum()),
        zeros=int((f == 0).sum()),
    )
    if finite.size:
        out.update(
            min=float(finite.min()),
            max=float(finite.max()),
            mean=float(finite.mean()),
            std=float(finite.std()),
        )
    return out


def preview(a: np.ndarray, max_items: int = 24) -> str:
    """A short text preview of an array's values."""
    return np.array2string(
        np.asarray(a), precision=4, suppress_small=True, threshold=max_items, edgeitems=3
    )


def stats_html(a: np.ndarray) -> str:
    """Statistics and a value preview as an HTML table."""
    s = array_stats(a)
    keys = ("shape", "dtype", "min", "max", "mean", "std", "zeros", "nan", "inf")
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:8px'>{k}</th><td>{_fmt(s[k])}</td></tr>"
        for k in keys
        if k in s
    )
    return (
        f"<table style='font-size:12px'>{cells}</table>"
        f"<pre style='font-size:11px;margin:4px 0'>{html_text(preview(a))}</pre>"
    )


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.5g}"
    if isinstance(v, tuple):
        return fmt_shape(v)
    return html_text(str(v))


def histogram_png(a: np.ndarray, title: str = "", bins: int = 30) -> bytes:
    """A small histogram of the finite values of ``a``."""
    fig = new_figure(3.2, 1.8)
    ax = fig.add_subplot()
    f = np.asarray(a, dtype=np.float64).reshape(-1)
    f = f[np.isfinite(f)]
    if f.size:
        ax.hist(f, bins=min(bins, max(1, f.size)), color=OKABE_ITO["blue"], edgecolor=WHITE)
    else:
        ax.text(0.5, 0.5, "no finite values", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.set_ylabel("count", fontsize=8)
    return figure_png(fig)


def static_bundle(widget, html_text: str, plain: str) -> dict:
    """The widget view plus a static text/html picture for saved notebooks."""
    bundle = {"text/plain": plain, "text/html": html_text}
    view = getattr(widget, "model_id", None)
    if view:
        bundle["application/vnd.jupyter.widget-view+json"] = {
            "version_major": 2,
            "version_minor": 0,
            "model_id": view,
        }
    return bundle
