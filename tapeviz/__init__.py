"""tapeviz: automatic differentiation you can see.

``import tapeviz as tv`` gives the whole engine (``tapeviz.core``'s public API) and the
widgets that draw its tape. The base install (numpy only) imports and computes gradients;
the visual layer is imported on first use, and a feature whose optional dependencies are
missing raises an ImportError that names the extra to install (``pip install "tapeviz[viz]"``).
"""

from __future__ import annotations

import builtins as _builtins
import importlib as _importlib
import importlib.util as _importlib_util
import pathlib as _pathlib
import sys as _sys


def _load_source_tree_core() -> None:
    """Bind ``tapeviz.core`` to the repository's top-level ``core/`` when running from a checkout.

    Installed (a wheel), the engine is ``tapeviz/core``. In the repository it is the sibling
    folder ``core/``; an editable install maps it there, and this does the same for a plain
    checkout on ``sys.path`` (``PYTHONPATH=.``), so the engine always comes from the same
    tree as this file: never a second copy with its own registries.
    """
    here = _pathlib.Path(__file__).resolve().parent
    source = here.parent / "core"
    if (here / "core").is_dir() or not (source / "__init__.py").is_file():
        return
    if "tapeviz.core" in _sys.modules:
        return
    spec = _importlib_util.spec_from_file_location(
        "tapeviz.core", source / "__init__.py", submodule_search_locations=[str(source)]
    )
    module = _importlib_util.module_from_spec(spec)
    _sys.modules["tapeviz.core"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del _sys.modules["tapeviz.core"]
        raise
    globals()["core"] = module  # as the import system binds a submodule on its parent


_load_source_tree_core()

from tapeviz.core import *  # noqa: F403 - tapeviz re-exports the engine
from tapeviz.core import __all__ as _core_all
from tapeviz.present import register_renderers as _register_renderers

_register_renderers()  # core's reports show as HTML in Jupyter (core holds no HTML itself)

__version__ = "0.1.0"

# the visual layer, imported on first use: name -> module
_VISUAL = {
    "GraphView": "tapeviz.graph",
    "show_graph": "tapeviz.graph",
    "GraphWidget": "tapeviz.graph.widget.widget",
    "BackpropStepper": "tapeviz.widgets.stepper.widget",
    "GradCheckWidget": "tapeviz.widgets.gradcheck.widget",
    "MemoryInspector": "tapeviz.widgets.memory.widget",
    "TrainingPlot": "tapeviz.widgets.training.widget",
    "show_code": "tapeviz.widgets.code_view",
}
# what the "viz" extra brings that the widgets import (looked up without importing them);
# show_graph and GraphView need none of it to build DOT text
_VIZ_MODULES = ("anywidget", "ipywidgets", "matplotlib")
_NEEDS_VIZ = {
    "GraphWidget",
    "BackpropStepper",
    "GradCheckWidget",
    "MemoryInspector",
    "TrainingPlot",
    "show_code",
}


class MissingExtraError(ImportError):
    """A tapeviz feature needs an optional extra that is not installed."""


def _has_viz() -> bool:
    try:
        return _builtins.all(_importlib_util.find_spec(m) is not None for m in _VIZ_MODULES)
    except (ImportError, ValueError):  # a finder that refuses it, or a broken install
        return False


def __getattr__(name: str):
    if name not in _VISUAL:
        raise AttributeError(f"module 'tapeviz' has no attribute {name!r}")
    try:
        module = _importlib.import_module(_VISUAL[name])
    except ModuleNotFoundError as e:
        if (e.name or "tapeviz").split(".")[0] == "tapeviz":
            raise
        raise MissingExtraError(
            f"tv.{name} needs tapeviz's optional 'viz' dependencies ({e.name!r} is not "
            f'installed): pip install "tapeviz[viz]"'
        ) from e
    value = getattr(module, name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_VISUAL))


__all__ = list(_core_all) + ["MissingExtraError"]
__all__ += [n for n in _VISUAL if n not in _NEEDS_VIZ or _has_viz()]
