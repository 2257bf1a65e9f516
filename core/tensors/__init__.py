"""The value layer, the bottom of the engine: ``Tensor`` and its kinds (``Variable``,
``Constant``), the arrays they hold, their operators, which are alive, and the context
state every layer above reads (the recording slot, the tracer slot). It imports nothing
else of core's; what its operators and numpy protocols call is plugged in by
``core/__init__.py`` (``operators.plug`` and ``tensor.plug_numpy``)."""
