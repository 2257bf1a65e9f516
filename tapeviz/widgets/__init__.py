"""Jupyter widgets over the tape: memory, gradient checks, backprop steps, training.

Each widget is an ipywidgets 8 composition whose state lives in Python (tests drive it by
setting slider values and clicking buttons), draws its plots with matplotlib into PNG bytes,
and has a static ``_repr_mimebundle_`` so a saved notebook still shows a picture.
"""

from __future__ import annotations

from .gradcheck.widget import GradCheckWidget
from .memory.widget import MemoryInspector
from .stepper.widget import BackpropStepper
from .training.widget import TrainingPlot

__all__ = ["BackpropStepper", "GradCheckWidget", "MemoryInspector", "TrainingPlot"]
