"""MATLAB's ``DifferentiableFunction`` as ``tv.DifferentiableFunction``:
``differentiable_function.py`` is the base class and what a call records; ``vjp.py`` runs
the user's ``backward`` when a gradient flows through its node."""
