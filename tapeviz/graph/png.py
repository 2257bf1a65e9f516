"""PNG from SVG without the system Graphviz: the WebAssembly Graphviz writes SVG only, so
``GraphView.save("g.png")`` rasterizes that SVG with resvg (``resvg-py``, in the viz extra)."""

from __future__ import annotations

from ..present.palette import WHITE

# resvg measures a "pt"-sized SVG (Graphviz's) only at an explicit dpi; 96 is a browser's 1x
_CSS_DPI = 96.0


def svg_to_png(svg: str, scale: float = 2.0, background: str = WHITE) -> bytes:
    """Rasterize SVG text to PNG bytes with resvg.

    Args:
        svg: an SVG document (text).
        scale: pixels per CSS pixel (2: sharp on high-density screens and in READMEs).
        background: the canvas colour (PNG is otherwise transparent).

    Returns:
        The PNG file's bytes.

    Raises:
        ImportError: naming the extra when ``resvg-py`` is not installed.
    """
    try:
        import resvg_py
    except ImportError as e:
        from tapeviz import MissingExtraError

        raise MissingExtraError(
            "PNG without the system Graphviz needs resvg-py, in tapeviz's 'viz' extra: "
            'pip install "tapeviz[viz]" (or install Graphviz, or save as .svg)'
        ) from e
    if not scale > 0:
        raise ValueError(f"svg_to_png: scale must be > 0, got {scale!r}")
    png = resvg_py.svg_to_bytes(svg_string=svg, background=background, dpi=_CSS_DPI * scale)
    return bytes(png)
