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

# numba's on-disk cache of the backend's kernels (``@njit(cache=True)``) in one folder of the
# checkout (gitignored; ``make clean`` removes it), shared by pytest's workers (``-n``) and by
# the scripts tests run; set before anything imports numba. A second run loads every kernel
# instead of compiling it.
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))


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


# Tests that share an expensive module-scoped fixture run together, in their module's order,
# on one pytest-xdist worker: each browser module (its JupyterLab server, about 10 s to start)
# and each module of ONE_WORKER_FILES (otter assign builds of every assignment, about a
# minute: its module-scoped ``dist``).
BROWSER_FILES = "tests/notebooks/test_browser"
ONE_WORKER_FILES = {"tests/assignments/test_assignments.py", "tests/assignments/test_slips.py"}


def together(nodeid: str) -> str | None:
    """The group a test runs in, whole, on one worker (None: any worker, in any order)."""
    path = nodeid.split("::")[0]
    return path if path.startswith(BROWSER_FILES) or path in ONE_WORKER_FILES else None


def pytest_itemcollected(item):
    """``make test`` runs the tests on two pytest-xdist workers (``--dist loadgroup``) in a
    random order (pytest-random-order, one global bucket). A group (``together``) would start
    its setup again whenever a shuffled test of another module ran in between, so its tests
    keep their module's order, as one block among the shuffled rest;
    ``pytest_xdist_make_scheduler`` sends each group to one worker."""
    if bool(item.get_closest_marker("browser")) != item.nodeid.startswith(BROWSER_FILES):
        raise pytest.UsageError(f"{item.nodeid}: the browser tests live in {BROWSER_FILES}*.py")
    if together(item.nodeid):
        item.add_marker(pytest.mark.random_order(disabled=True))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """After the shuffle: the groups first (each still whole, in the shuffled order of the
    groups), the long runs they are, so that no worker is left with one at the end while
    the other idles (browser_graph alone is minutes under load)."""
    items[:] = [i for i in items if together(i.nodeid)] + [
        i for i in items if not together(i.nodeid)
    ]


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the groups of ``together``: every other test is a unit of
    its own. (xdist's own loadgroup, from ``xdist_group`` marks, rewrites ``item._nodeid``,
    which pytest 9 no longer reads: its groups fall apart, as measured here.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Together(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return together(nodeid) or nodeid

    return Together(config, log)
