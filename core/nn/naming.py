"""Module names: the snake-case default (``Dense`` -> ``dense``) made unique per process
(``dense``, ``dense_1``, ...); the tape uses them as name scopes."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

__all__ = ["snake_case", "unique_name"]

_NAME_COUNTS: defaultdict = defaultdict(itertools.count)


def snake_case(name: str) -> str:
    """``"MaxPool2D"`` -> ``"max_pool2d"``: an underscore before each inner capitalised word."""
    return re.sub(r"(?<=[a-z])(?=[A-Z][a-z])", "_", name).lower()


def unique_name(base: str) -> str:
    """``base`` the first time, then ``base_1``, ``base_2``, ... on later calls."""
    n = next(_NAME_COUNTS[base])
    return base if n == 0 else f"{base}_{n}"
