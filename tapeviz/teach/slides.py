"""For a lecture: a large-font presentation mode, and one call that saves any widget's
current picture (SVG or PNG) for slides."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from IPython.display import HTML

__all__ = ["export", "presentation"]

_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def _bundle(obj) -> dict:
    bundle = obj._repr_mimebundle_() if hasattr(obj, "_repr_mimebundle_") else {}
    if isinstance(bundle, tuple):  # (data, metadata)
        bundle = bundle[0]
    return dict(bundle or {})


def export(obj, path) -> Path:
    """Save the picture ``obj`` shows now — a graph, a lesson graph or any tapeviz widget —
    as ``.svg`` or ``.png``.

    Args:
        obj: a ``GraphView``/``LessonGraph`` (drawn again at full quality) or a widget
            (its current static picture: the stepper's graph, a checker's plots, ...). A
            picture that exists only as SVG is rasterized for ``.png`` (resvg, in the viz
            extra): no system Graphviz is needed.
        path: where to write; the suffix picks the format.

    Returns:
        The path written.

    Raises:
        ValueError: the suffix is not .svg/.png, or ``obj`` shows no picture of that kind
            (the message says which kinds it has).

    Example:
        >>> import tapeviz as tv, tempfile, pathlib
        >>> view = tv.show_graph(lambda x: tv.sum(tv.tanh(x)), tv.tensor([0.5]))
        >>> export(view, pathlib.Path(tempfile.mkdtemp()) / "g.svg").suffix
        '.svg'
    """
    path = Path(path)
    kind = path.suffix.lower()
    if kind not in (".svg", ".png"):
        raise ValueError(f"export: expected a .svg or .png path, got {path}")
    if kind == ".svg" and hasattr(obj, "to_svg"):
        path.write_text(obj.to_svg(), encoding="utf-8")
        return path
    if kind == ".png" and hasattr(obj, "to_png"):  # graphs: drawn again at full quality
        path.write_bytes(obj.to_png())
        return path
    bundle = _bundle(obj)
    html_text = str(bundle.get("text/html", ""))
    svg = bundle.get("image/svg+xml") or next(iter(_SVG.findall(html_text)), None)
    png = bundle.get("image/png") or next(iter(_PNG.findall(html_text)), None)
    if kind == ".svg" and svg:
        path.write_text(svg, encoding="utf-8")
    elif kind == ".png" and png:
        path.write_bytes(png if isinstance(png, bytes) else base64.b64decode(png))
    elif kind == ".png" and svg:  # a widget's graph: rasterized (no system Graphviz needed)
        from tapeviz.graph.png import svg_to_png

        path.write_bytes(svg_to_png(svg))
    else:
        has = [k for k, v in ((".svg", svg), (".png", png)) if v] or ["no picture"]
        raise ValueError(
            f"export: {type(obj).__name__} shows no {kind[1:].upper()} picture now "
            f"(it has: {', '.join(has)})"
        )
    return path


def presentation(on: bool = True, scale: float = 1.6) -> HTML:
    """Large fonts for a lecture hall: display the result to scale up this notebook's
    outputs and widgets (JupyterLab, Notebook 7 and jupyterlab-rise slides);
    ``presentation(False)`` undoes it.

    Text is sized from the theme's base sizes times ``scale`` (never compounded through
    nested outputs); buttons and answer boxes grow to fit their words instead of cutting
    them ("ch…"); rows of controls wrap; pictures shrink to the output's width instead of
    being cut at its edge (a lesson graph's own ``font_size=`` sets its text size).

    Args:
        on: switch the mode on or off.
        scale: the factor on the widgets' and outputs' font sizes.

    Returns:
        An ``IPython.display.HTML`` holding the style sheet (empty when ``on`` is False).
    """
    if not on:
        return HTML("<style id='tapeviz-presentation'></style>")
    out = ".jp-OutputArea-output"
    widget = f"calc(var(--jp-widgets-font-size, 13px) * {scale:.2f})"
    content = f"calc(var(--jp-content-font-size1, 14px) * {scale:.2f})"
    css = "\n".join([
        f"{out} .widget-html-content, {out} .widget-htmlmath-content, {out} .widget-label, "
        f"{out} .widget-readout, {out} .widget-button, {out} .jupyter-button, "
        f"{out} .widget-text input, {out} .tv-stepper "
        f"{{font-size: {widget} !important; line-height: 1.35 !important;}}",
        f"{out} .jp-RenderedHTMLCommon, {out} .jp-RenderedText pre "
        f"{{font-size: {content} !important;}}",
        f"{out} .widget-button, {out} .jupyter-button {{width: auto !important; "
        "min-width: max-content !important; height: auto !important; "
        "padding: 0.2em 0.7em !important; overflow: visible !important;}",
        f"{out} .widget-text {{width: auto !important;}}",
        f"{out} .widget-text input {{width: 7em !important; height: auto !important;}}",
        f"{out} .widget-hbox {{flex-wrap: wrap; gap: 0.3em;}}",
        f"{out} .widget-label {{width: auto !important; min-width: max-content !important;}}",
        f"{out} svg {{max-width: 100% !important; height: auto !important;}}",
    ])  # fmt: skip
    return HTML(f"<style id='tapeviz-presentation'>{css}</style>")
