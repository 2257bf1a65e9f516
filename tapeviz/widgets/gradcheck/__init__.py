"""The GradCheckWidget: ``widget.py`` (the widget), ``data.py`` (the checks it shows),
``ahead.py`` (checks worked out ahead while the kernel idles), ``plots.py``, ``html.py``,
``payload.py`` and ``view.py`` (what the browser gets)."""
