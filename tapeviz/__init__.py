"""tapeviz: automatic differentiation you can see.

``import tapeviz as tv`` gives the whole engine (``core``'s public API) and the widgets that
draw its tape.
"""

from __future__ import annotations

from core import *  # noqa: F403 - tapeviz re-exports the engine
from core import __all__ as _core_all

from .graph import GraphView, GraphWidget, show_graph
from .widgets import BackpropStepper, GradCheckWidget, MemoryInspector, TrainingPlot

__version__ = "0.1.0"
__all__ = list(_core_all)
__all__ += ["GraphView", "GraphWidget", "show_graph"]
__all__ += ["BackpropStepper", "GradCheckWidget", "MemoryInspector", "TrainingPlot"]
