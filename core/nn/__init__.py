"""``tv.nn``: layers, ``Sequential``, training with ``fit``, callbacks and weights on disk.

Example:
    >>> import tapeviz as tv
    >>> model = tv.nn.Sequential([tv.nn.Dense(16, "relu"), tv.nn.Dense(2)])
    >>> model(tv.ones((4, 3))).shape
    (4, 2)
"""

from __future__ import annotations

from .activations import (
    ELU,
    GELU,
    Activation,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Softplus,
    Tanh,
)
from .callbacks import Callback, History
from .init import set_seed
from .layers import AvgPool2D, Conv2D, Dense, Dropout, Flatten, Lambda, MaxPool2D
from .metrics import accuracy
from .module import Module
from .sequential import Sequential
from .training import evaluate, fit, predict

__all__ = [
    "Activation",
    "AvgPool2D",
    "Callback",
    "Conv2D",
    "Dense",
    "Dropout",
    "ELU",
    "Flatten",
    "GELU",
    "History",
    "Lambda",
    "LeakyReLU",
    "LogSoftmax",
    "MaxPool2D",
    "Module",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Tanh",
    "accuracy",
    "evaluate",
    "fit",
    "predict",
    "set_seed",
]
