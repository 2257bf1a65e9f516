"""The MemoryInspector: ``widget.py`` (the widget), ``data.py`` (what a tape keeps, each
storage counted once), ``panel.py`` (a node's details), ``plots.py`` and ``view.py``."""
