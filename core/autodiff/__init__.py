"""Differentiation over what the engine recorded: the ``Tape``, the reverse pass, the
functional transforms (``grad``, ``jvp``, ``hessian``, ...) and the grader's refusal."""
