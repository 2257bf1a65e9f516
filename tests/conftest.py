import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def run_script(tmp_path):
    """Run ``code`` as a script in a fresh interpreter; returns (path, CompletedProcess).

    The script sees this checkout first on its path, and ``env`` adds variables.
    """

    def run(code: str, env: dict | None = None, timeout: float = 300):
        path = tmp_path / "script.py"
        path.write_text(textwrap.dedent(code))
        paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
        full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        full_env.update(env or {})
        out = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=full_env,
            timeout=timeout,
        )
        return path, out

    return run


def pytest_runtest_setup(item):
    """``@pytest.mark.system_dot``: needs the system Graphviz ``dot``, an optional engine.

    Without it the test skips with the reason (tapeviz draws with Graphviz in WebAssembly
    then); CI (``CI=true``, whose .ci/run installs graphviz) runs them, so a CI machine
    without ``dot`` fails rather than skips.
    """
    if item.get_closest_marker("system_dot") and shutil.which("dot") is None:
        if os.environ.get("CI") != "true":
            pytest.skip("the system Graphviz 'dot' is not on PATH (optional: apt install graphviz)")
