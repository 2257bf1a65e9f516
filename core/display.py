"""How core's reports reach a notebook: plain text always, richer formats by registration.

core returns plain data (dataclasses, dicts, numbers) and a text summary (``__str__``); it
holds no HTML and no colours. A front end registers an HTML renderer per report class
(tapeviz does when it is imported, from ``tapeviz/present/``); a report's ``_repr_html_``
asks the registry, and with no renderer registered returns None, which Jupyter reads as "no
HTML: show the text". So core imports and works with no front end at all, and never imports
one (the dependency points from tapeviz to core only).

Example:
    >>> from tapeviz.core.display import HtmlRepr, register_html
    >>> class Note(HtmlRepr):
    ...     def __str__(self):
    ...         return "a note"
    >>> Note()._repr_html_() is None  # nothing registered: Jupyter shows str()
    True
    >>> register_html(Note, lambda note: f"<i>{note}</i>")
    >>> Note()._repr_html_()
    '<i>a note</i>'
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

__all__ = [
    "HtmlRepr",
    "html_renderer",
    "register_html",
    "unregister_html",
    "register_view",
    "view",
    "in_notebook",
]

# class, or "module.QualName" for a class whose module must not be imported to register it
# (IPython's for_type / for_type_by_name), -> render(obj) -> str
_HTML: dict[object, Callable[[object], str]] = {}


def register_html(target, render: Callable[[object], str]) -> None:
    """Show instances of ``target`` (and its subclasses) as ``render(obj)`` in a notebook.

    Args:
        target: a class, or its dotted name ``"package.module.QualName"`` (so that registering
            does not import a module with optional dependencies).
        render: a function of the object that returns an HTML string.
    """
    if not (isinstance(target, (type, str)) and callable(render)):
        raise TypeError(
            "register_html: expected a class or a 'module.QualName' string and a callable, "
            f"got {target!r} and {render!r}"
        )
    _HTML[target] = render


def unregister_html(target) -> None:
    """Forget the renderer of ``target`` (a class or its dotted name); no error if none."""
    _HTML.pop(target, None)


def html_renderer(obj) -> Callable[[object], str] | None:
    """The renderer registered for ``type(obj)`` or its nearest base class, or None."""
    for cls in type(obj).__mro__:
        render = _HTML.get(cls) or _HTML.get(f"{cls.__module__}.{cls.__qualname__}")
        if render is not None:
            return render
    return None


# name -> "package.module.function" of a front end's view (``AuditReport.show_graph``'s
# "audit graph"), imported when first asked for, so that registering imports nothing
_VIEWS: dict[str, str] = {}


def register_view(name: str, target: str) -> None:
    """Name a front end's view of a core object: ``target`` is ``"package.module.function"``,
    imported only when the view is asked for (``view(name)``)."""
    if not (isinstance(name, str) and isinstance(target, str) and "." in target):
        raise TypeError(
            f"register_view: expected a name and a 'module.function' string, got {name!r}, "
            f"{target!r}"
        )
    _VIEWS[name] = target


def view(name: str, who: str):
    """The function registered as view ``name``, or an ``ImportError`` that says what
    ``who`` (the method asking) needs: tapeviz imported, with its ``viz`` extra."""
    target = _VIEWS.get(name)
    if target is None:
        raise ImportError(
            f'{who} needs tapeviz\'s widgets: import tapeviz (pip install "tapeviz[viz]")'
        )
    module, _, attr = target.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError as e:
        raise ImportError(
            f"{who} needs tapeviz's optional 'viz' dependencies ({e.name!r} is not installed): "
            'pip install "tapeviz[viz]"'
        ) from e


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's shell has a ``kernel``), False in a script or a
    terminal IPython; imports nothing."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    return getattr(shell, "kernel", None) is not None


class HtmlRepr:
    """Mixin: ``_repr_html_`` from the registered renderer, or None (text) when there is none."""

    def _repr_html_(self) -> str | None:
        render = html_renderer(self)
        return None if render is None else render(self)
