"""TensorFlow.js's ``customGrad`` as ``tv.custom_grad``: ``custom_grad.py`` runs ``f`` and
records its node; ``vjp.py`` runs when a gradient flows through that node."""
