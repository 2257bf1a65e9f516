"""GraphWidget: ``widget.py`` (the widget: the view in the browser, a click's details) and
``ahead.py`` (the pictures it draws ahead while the kernel idles, and their cache)."""
