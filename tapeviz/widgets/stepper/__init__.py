"""The BackpropStepper: ``widget.py`` (the widget), ``data.py`` (the steps of a recorded
backward pass), ``ask.py`` (ask mode: the student answers each step), ``html.py`` and
``view.py`` (what the browser gets)."""
