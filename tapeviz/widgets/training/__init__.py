"""The live training plot: ``widget.py`` (TrainingPlot, a callback of ``fit``) and
``axes.py`` (its axes)."""
