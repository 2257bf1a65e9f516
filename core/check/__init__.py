"""Gradient checking and debugging: ``check_grads``, ``audit`` and ``detect_anomaly``.

``gradcheck`` (check_grads on a function, as a ``function_problem``), ``audit`` (every node
of a tape, each a ``node_problem``), ``runner`` (the comparisons both run), ``differences``
(directional derivatives and numerical Jacobians), ``confirm`` (a second look before a
failure is reported), ``batched_replay`` (finite differences on a batch), ``report``,
``comparison`` and ``eps_sweep`` (what they hand back), ``anomaly`` (the first NaN or Inf,
forward or backward).
"""
