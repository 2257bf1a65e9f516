"""Fixtures for the notebook tests: JupyterLab + headless Chromium (see lab_harness.py)."""

import sys
from pathlib import Path

import pytest

# the helper modules beside this file import each other by name, in any pytest import mode
HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from lab_harness import (  # noqa: E402, F401
    chromium,
    lab_notebooks_dir,
    lab_page,
    lab_server,
    notebook7_server,
)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item (``lab_page`` screenshots failures)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
