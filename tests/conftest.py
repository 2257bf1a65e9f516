import os
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pytest_runtest_setup(item):
    """``@pytest.mark.system_dot``: needs the system Graphviz ``dot``, an optional engine.

    Without it the test skips with the reason (tapeviz draws with Graphviz in WebAssembly
    then); CI (``CI=true``, whose .ci/run installs graphviz) runs them, so a CI machine
    without ``dot`` fails rather than skips.
    """
    if item.get_closest_marker("system_dot") and shutil.which("dot") is None:
        if os.environ.get("CI") != "true":
            pytest.skip("the system Graphviz 'dot' is not on PATH (optional: apt install graphviz)")
