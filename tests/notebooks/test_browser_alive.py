"""The kernel stays alive (issue 28): widgets in JupyterLab and Notebook 7, idle, clicked,
re-run.

JupyterLab 4.6 and Notebook 7 send widget messages to a kernel subshell, a thread beside the
one running cells; with every widget drawing ahead while the kernel idles, two pictures were
laid out at once by the one WebAssembly Graphviz in the kernel and the kernel aborted, 15 s
after Run All. These tests do what a student does: Run All, read for 20 s, click a node,
step the stepper, then run a new cell in the same kernel process. The soak test re-runs a
notebook ten times in one kernel and asks for flat memory (the widgets a re-run replaces
free their pictures).
"""

from __future__ import annotations

import numpy as np
import psutil
import pytest
from lab_harness import (
    NOTEBOOK7_OWN_ERRORS,
    SMALL_TAPE_CELL,
    code_cells_notebook,
    idle_click_step_alive,
    open_kernel,
    run_all_cells,
    screenshot,
    unexecuted_cells,
    widget_errors,
)
from nbenv import NOTEBOOKS_DIR

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1500)]

# graph, memory inspector, gradient check, stepper and lesson graph on one tape
MIX_CELLS = [
    "import numpy as np\nimport tapeviz as tv\n"
    "from tapeviz.widgets.lesson_widget import LessonGraphWidget",
    SMALL_TAPE_CELL,
    "tv.GraphWidget(tape, backward='both')",
    "tv.MemoryInspector(tape)",
    "tv.GradCheckWidget(lambda x: tv.tanh(x) * x, np.array([0.5, -1.0, 2.0]))",
    "tv.BackpropStepper(tape)",
    "LessonGraphWidget(tape)",
]
SOAK_RUNS = 10
# memory may settle over the first runs (imports, caches filling); after that, each run of
# the notebook may add at most this much to the kernel's resident memory (the slope of a
# line through runs 4-10). What stays is the widgets themselves: ipywidgets keeps every
# widget until it is closed (about 0.9 MB of Python objects per run of the mix notebook,
# measured with tracemalloc; 1.3-2 MB of RSS); before replaced widgets dropped their
# drawn-ahead pictures, a run added about 8 MB.
SETTLE_RUNS = 3
GROWTH_PER_RUN = 3 * 2**20


@pytest.fixture(scope="module")
def lab_notebooks_dir(tmp_path_factory):
    root = code_cells_notebook(tmp_path_factory, "alive", "mix.ipynb", MIX_CELLS)
    for name in ("01_tour.ipynb", "02_backprop_by_hand.ipynb"):
        (root / name).write_bytes((NOTEBOOKS_DIR / name).read_bytes())
    return root


def _run_and_read(page, server, name: str, front: str) -> None:
    restarts = server.kernel_restarts()
    pid = open_kernel(page, server, name)
    run_all_cells(page)
    assert unexecuted_cells(page) == [], f"{name} in {front}: Run All stopped early"
    idle_click_step_alive(page, server, pid, restarts)
    screenshot(page, f"alive-{front}-{name.removesuffix('.ipynb')}")
    ignore = NOTEBOOK7_OWN_ERRORS if server.app == "notebook" else ()
    assert widget_errors(page, (".tv-graph .tv-error",), ignore) == []


@pytest.mark.parametrize("name", ["mix.ipynb", "02_backprop_by_hand.ipynb"])
def test_kernel_alive_in_jupyterlab(name, lab_server, lab_page):
    _run_and_read(lab_page, lab_server, name, "lab")


@pytest.mark.parametrize("name", ["mix.ipynb", "02_backprop_by_hand.ipynb"])
def test_kernel_alive_in_notebook7(name, notebook7_server, lab_page):
    _run_and_read(lab_page, notebook7_server, name, "nb7")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mix.ipynb", "01_tour.ipynb"])
def test_soak_rerun_keeps_kernel_and_memory(name, lab_server, lab_page):
    """Run All ten times in one kernel, as a student does after a mistake: the kernel lives
    and its memory stays flat."""
    page, restarts = lab_page, lab_server.kernel_restarts()
    pid = open_kernel(page, lab_server, name)
    rss = []
    for _ in range(SOAK_RUNS):
        run_all_cells(page)
        page.wait_for_timeout(3000)  # the views settle and their work ahead ends
        assert pid in lab_server.kernel_pids(), f"{name}: the kernel died on re-run {len(rss)}"
        rss.append(psutil.Process(pid).memory_info().rss)
    idle_click_step_alive(page, lab_server, pid, restarts, idle_s=5)
    mb = [round(r / 2**20, 1) for r in rss]
    print(f"{name}: kernel RSS after each run (MB): {mb}")
    runs = np.arange(SETTLE_RUNS, SOAK_RUNS)
    slope = np.polyfit(runs, np.array(rss[SETTLE_RUNS:]), 1)[0]  # bytes per run, least squares
    assert slope <= GROWTH_PER_RUN, (
        f"{name}: the kernel grows {slope / 2**20:.1f} MB per re-run (RSS in MB: {mb})"
    )
