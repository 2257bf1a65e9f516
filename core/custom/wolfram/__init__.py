"""Wolfram's ``CompiledLayer`` as ``tv.CompiledLayer`` on numba: ``compiled_layer.py``
compiles the layer and records its node; ``vjp.py`` is its gradient (``"auto"`` or the
user's)."""
