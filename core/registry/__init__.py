"""What a primitive is (``Primitive``) and the registries the TensorFlow.js design names:
backends, kernels (``kernels.py``: kernel name -> ``Primitive``) and gradients, with the
kernel names, batching rules and the checks of what a gradient returns. Below the engine;
the rows that fill it are ``core/primitives``."""
