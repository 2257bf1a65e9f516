"""The examples in tapeviz.core's docstrings run (they are what ``help(tv.Tape)`` shows) and
use ``import tapeviz as tv``, as the README does."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re

import pytest

import tapeviz as tv
import tapeviz.core as core

MODULES = [m.name for m in pkgutil.walk_packages(core.__path__, "tapeviz.core.")]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, report=True, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} docstring examples failed (above)"


def test_examples_use_tv_as_the_readme_does():
    old = []
    for name in MODULES:
        for test in doctest.DocTestFinder().find(importlib.import_module(name)):
            for example in test.examples:
                if re.search(r"tapeviz\.core as core|(?<![\w.])core\.", example.source):
                    old.append(f"{test.name}: {example.source.strip()}")
    assert old == []
    assert (
        "import tapeviz as tv" in tv.Tape.__doc__
        and "import tapeviz as tv" in tv.check_grads.__doc__
    )


def test_tape_enter_and_exit_have_their_own_docs():
    assert "Start recording" in tv.Tape.__enter__.__doc__
    assert "Stop recording" in tv.Tape.__exit__.__doc__
