"""Drive JupyterLab in headless Chromium, as a user would: the reusable parts.

Fixtures (made available to tests/notebooks/ by conftest.py):

* ``lab_notebooks_dir`` — the folder JupyterLab serves: a temp copy of notebooks/. A test
  module overrides this fixture to serve notebooks it writes itself.
* ``lab_server`` — JupyterLab on 127.0.0.1, a free port, a token, temp config/runtime/
  settings/workspace dirs, the "python3" kernel = this interpreter; shut down at teardown.
  Its kernels draw with Graphviz in WebAssembly, as a pip-only install does.
* ``notebook7_server`` — the same for Jupyter Notebook 7.
* ``chromium`` — headless /usr/bin/chromium through Playwright (skips, with the reason, only
  when Chromium or the playwright package is missing).
* ``lab_page`` — a fresh page; the browser's console errors collect in ``page.console_errors``
  and its uncaught exceptions in ``page.page_errors``.

Helpers: :func:`open_notebook`, :func:`open_kernel`, :func:`accept_kernel_dialog`,
:func:`run_all_cells`, :func:`wait_idle`, :func:`run_new_cell`, :func:`assert_kernel_alive`,
:func:`widget_errors`, :func:`screenshot`, :func:`drag_slider`, :func:`image_srcs`.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from lab_process import LabServer, start_lab, stop_lab
from nbenv import ARTIFACTS_DIR, NOTEBOOKS_DIR

__all__ = [
    "LabServer",
    "NOTEBOOK7_OWN_ERRORS",
    "accept_kernel_dialog",
    "assert_kernel_alive",
    "idle_click_step_alive",
    "drag_slider",
    "image_srcs",
    "open_kernel",
    "open_notebook",
    "run_all_cells",
    "run_new_cell",
    "screenshot",
    "start_lab",
    "stop_lab",
    "traceback_cells",
    "unexecuted_cells",
    "wait_idle",
    "widget_errors",
]

CHROMIUM = os.environ.get("TAPEVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",  # containers often give /dev/shm only 64 MB
]
SCREENSHOTS = ARTIFACTS_DIR / "browser"


@pytest.fixture(scope="module")
def lab_notebooks_dir(tmp_path_factory) -> Path:
    """A temp copy of notebooks/, so that runs in the browser do not modify the repo."""
    root = tmp_path_factory.mktemp("lab-root") / "notebooks"
    shutil.copytree(NOTEBOOKS_DIR, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return root


def code_cells_notebook(tmp_path_factory, prefix: str, name: str, cells) -> Path:
    """A temp folder holding one notebook ``name`` of the code ``cells``: what a browser
    test that builds its own notebook serves (its module's ``lab_notebooks_dir``)."""
    root = tmp_path_factory.mktemp(prefix)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(nb, root / name)
    return root


def code_cell(page, i: int):
    """The ``i``-th code cell of the open notebook."""
    return page.locator(".jp-Notebook .jp-CodeCell").nth(i)


def shot(locator, name: str) -> Path:
    """A screenshot of ``locator`` as test-artifacts/browser/``name``.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    locator.screenshot(path=str(path))
    return path


@pytest.fixture(scope="module")
def lab_server(request, chromium, lab_notebooks_dir, tmp_path_factory):
    """JupyterLab serving ``lab_notebooks_dir``; its log ends up in test-artifacts/browser/.

    Needs ``chromium`` first, so that a missing browser skips before a server starts.
    """
    yield from _serve(request, lab_notebooks_dir, tmp_path_factory, "lab")


@pytest.fixture(scope="module")
def notebook7_server(request, chromium, lab_notebooks_dir, tmp_path_factory):
    """Jupyter Notebook 7 serving ``lab_notebooks_dir`` (as ``lab_server``)."""
    yield from _serve(request, lab_notebooks_dir, tmp_path_factory, "notebook")


def _serve(request, root, tmp_path_factory, app: str):
    server = start_lab(root, tmp_path_factory.mktemp(f"{app}-state"), app=app)
    try:
        yield server
    finally:
        stop_lab(server)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = f"jupyter{app}-{request.module.__name__}.log"
        shutil.copy(server.log, SCREENSHOTS / name)


def _playwright_or_skip():
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"browser test needs Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.skip(f"browser test needs the playwright package ({exc})")
    return sync_playwright


@pytest.fixture(scope="session")
def chromium():
    sync_playwright = _playwright_or_skip()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def lab_page(request, chromium):
    """A fresh browser page; a failing test leaves test-artifacts/browser/FAILED-<test>.png."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.console_errors, page.page_errors = [], []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda e: page.page_errors.append(str(e)))
    try:
        yield page
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            name = "".join(c if c.isalnum() or c in "-_." else "_" for c in request.node.name)
            screenshot(page, f"FAILED-{name}")
    finally:
        context.close()


# -- driving a notebook ------------------------------------------------------------------------

KERNEL_STATUS = 'span.jp-StatusBar-TextItem[title^="Change kernel for"]'
DIALOG = ".jp-Dialog"
RUN_MENU = '.lm-MenuBar-itemLabel:text-is("Run")'
RUN_ALL = '.lm-Menu-content .lm-Menu-itemLabel:text-is("Run All Cells")'
# true when the kernel is idle, no cell is queued or running, and nothing is being executed;
# JupyterLab says so in its status bar, Notebook 7 (no status bar) in its toolbar's indicator
IDLE_JS = """(statusSelector) => {
  const status = document.querySelector(statusSelector);
  const indicator = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = Array.from(document.querySelectorAll('.jp-Notebook .jp-InputPrompt'));
  const idle = status ? /\\|\\s*Idle$/.test(status.textContent.trim())
    : !!indicator && /Kernel status: Idle/.test(indicator.textContent);
  return idle && (!indicator || indicator.dataset.status === 'idle')
    && !prompts.some((p) => p.textContent.includes('*'));
}"""


def open_notebook(page, server: LabServer, name: str, timeout: float = 90.0) -> None:
    """Open ``name`` (relative to the served root) and wait until its kernel is up.

    Accepts the "Select Kernel" dialog if JupyterLab shows it.
    """
    page.goto(server.notebook_url(name))
    page.locator(".jp-NotebookPanel .jp-Notebook").first.wait_for(timeout=timeout * 1000)
    accept_kernel_dialog(page, timeout)


def accept_kernel_dialog(page, timeout: float = 90.0, settle: float = 2.0) -> bool:
    """Wait for the notebook's kernel to be idle, accepting "Select Kernel" if it is shown.

    JupyterLab shows that dialog on some loads and not on others (it races the kernelspec
    fetch), so this waits until the kernel has been idle with no dialog for ``settle``
    seconds. Returns True if a dialog was accepted.
    """
    accepted, quiet_since = False, None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dialog = page.locator(DIALOG)
        if dialog.count() and dialog.first.is_visible():
            text = dialog.first.inner_text()
            assert "Kernel" in text, f"unexpected JupyterLab dialog: {text!r}"
            dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
            accepted, quiet_since = True, None
        elif page.evaluate(IDLE_JS, KERNEL_STATUS):
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= settle:
                return accepted
        else:
            quiet_since = None
        page.wait_for_timeout(200)
    raise TimeoutError(f"kernel not idle after {timeout:.0f} s: {_kernel_status(page)!r}")


def _kernel_status(page) -> str:
    for selector in (KERNEL_STATUS, ".jp-Notebook-ExecutionIndicator"):
        status = page.locator(selector)
        if status.count():
            return status.first.inner_text() or status.first.get_attribute("title") or ""
    return "no kernel status shown"


def run_all_cells(page, timeout: float = 300.0) -> float:
    """Run > Run All Cells from the menu bar, then :func:`wait_idle`; returns the seconds."""
    started = time.monotonic()
    page.locator(RUN_MENU).click()
    page.locator(RUN_ALL).click()
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.jp-Notebook .jp-InputPrompt'))"
        ".some((p) => /\\[[*0-9]+\\]/.test(p.textContent))",
        timeout=30_000,
    )
    wait_idle(page, timeout)
    return time.monotonic() - started


def wait_idle(page, timeout: float = 300.0, settle: float = 1.0) -> None:
    """Wait until the kernel is idle and no cell is queued or running, for ``settle`` s."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        if page.evaluate(IDLE_JS, KERNEL_STATUS):
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= settle:
                return
        else:
            quiet_since = None
        page.wait_for_timeout(100)
    screenshot(page, "timeout-wait-idle")
    raise TimeoutError(f"notebook still running after {timeout:.0f} s: {_kernel_status(page)!r}")


def unexecuted_cells(page) -> list[int]:
    """Indices (0-based, among code cells) of code cells without an execution count."""
    prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").all_inner_texts()
    return [i for i, text in enumerate(prompts) if not any(c.isdigit() for c in text)]


def open_kernel(page, server: LabServer, name: str) -> int:
    """:func:`open_notebook`, and the process id of its kernel (started, or kept by the
    server from an earlier visit)."""
    open_notebook(page, server, name)
    deadline = time.monotonic() + 30
    while (pid := server.kernel_pid(name)) is None and time.monotonic() < deadline:
        time.sleep(0.25)
    assert pid is not None, f"{name}: no kernel process for its session"
    return pid


def run_new_cell(page, code: str, timeout: float = 120.0) -> str:
    """Add a code cell at the end of the open notebook, run it as a user does (select the
    last cell, ``b``, type, Shift+Enter) and return its output text."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    count = cells.count()
    cells.last.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-Notebook .jp-Cell').length > n", arg=count
    )
    new = cells.nth(count)
    new.locator(".cm-content").click()
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")
    new.locator(".jp-OutputArea-output").first.wait_for(timeout=timeout * 1000)
    wait_idle(page, timeout)
    return new.locator(".jp-OutputArea").inner_text()


def assert_kernel_alive(page, server: LabServer, pid: int, restarts: int = 0) -> None:
    """The kernel ``pid`` still runs, the server restarted none since it had ``restarts``,
    and a new cell runs in that same process."""
    assert server.kernel_restarts() == restarts, (
        f"the kernel died and was restarted: {server.log_tail(1500)}"
    )
    assert pid in server.kernel_pids(), f"kernel process {pid} is gone"
    out = run_new_cell(page, "import os; print('kernel pid', os.getpid())")
    assert f"kernel pid {pid}" in out, f"a new cell ran elsewhere or not at all: {out!r}"


# the index of the first node whose centre lies inside the graph widget's viewport, or -1
NODE_IN_VIEW_JS = """(root) => {
  const view = root.querySelector('.tv-viewport').getBoundingClientRect();
  const nodes = Array.from(root.querySelectorAll('.tv-canvas svg g.node'));
  return nodes.findIndex((n) => {
    const r = n.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
    return x > view.left && x < view.right && y > view.top && y < view.bottom;
  });
}"""
# one small tape, built in a cell: the widgets' browser tests draw it (x, w named)
SMALL_TAPE_CELL = (
    "x = tv.tensor([0.5, -1.0, 2.0], name='x')\n"
    "w = tv.variable([[0.5, -0.3], [0.1, 0.8], [-0.6, 0.2]], name='w')\n"
    "with tv.Tape(persistent=True) as tape:\n"
    "    tape.watch(x)\n"
    "    h = tv.tanh(x @ w)\n"
    "    loss = tv.sum(h ** 2)\n"
    "grads = tape.gradient(loss, [x, w])"
)
IDLE_AFTER_RUN_S = 20  # a student reads for a while after Run All; the kernel works ahead


def idle_click_step_alive(
    page, server: LabServer, pid: int, restarts: int = 0, idle_s: float = IDLE_AFTER_RUN_S
) -> None:
    """What a student does after Run All: read for ``idle_s`` seconds, click a node of the
    first graph widget and step the first stepper (when the notebook shows them); then the
    kernel must still be the same, alive process (:func:`assert_kernel_alive`)."""
    page.wait_for_timeout(idle_s * 1000)
    graph = page.locator(".jp-OutputArea-output .tv-graph")
    if graph.count():
        graph.first.scroll_into_view_if_needed()
        nodes = graph.first.locator(".tv-canvas svg g.node")
        shown = graph.first.evaluate(NODE_IN_VIEW_JS)
        assert shown >= 0, "the graph widget shows no node inside its viewport"
        nodes.nth(shown).click()
    step = page.locator(".jp-OutputArea-output .widget-button:has-text('next'):enabled")
    if step.count():
        step.first.scroll_into_view_if_needed()
        step.first.click()
    page.wait_for_timeout(2000)
    assert_kernel_alive(page, server, pid, restarts)


# -- looking at the result ---------------------------------------------------------------------

EMPTY_WIDGET = "empty widget area: its view failed to render (see the browser console)"
ERRORS_JS = """([EMPTY, extra, raising]) => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  if (!nb) return ['no notebook is open'];
  const found = [];
  const text = (el) => el.innerText.trim().slice(0, 600);
  const cells = Array.from(nb.querySelectorAll('.jp-Cell'));
  const meant = (el) => raising.includes(cells.indexOf(el.closest('.jp-Cell')));
  nb.querySelectorAll('.jupyter-widgets').forEach((el) => {
    if (el.textContent.trim().startsWith('Error displaying widget')) found.push(text(el));
  });
  nb.querySelectorAll('.jp-OutputArea-output[data-mime-type$="stderr"]').forEach((el) => {
    const error = /Traceback|\\b\\w*(Error|Exception)\\b/.test(el.textContent);
    if (error && !meant(el)) found.push(text(el));
  });
  nb.querySelectorAll('.jp-OutputArea-output [role="alert"]').forEach((el) => found.push(text(el)));
  nb.querySelectorAll('.jp-OutputArea-output > .lm-Widget').forEach((el) => {
    if (!el.childElementCount && !el.textContent.trim()) found.push(EMPTY);
  });
  extra.forEach((sel) => nb.querySelectorAll(sel).forEach((el) => {
    if (el.offsetParent !== null && el.innerText.trim()) found.push(text(el));
  }));
  return found;
}"""


TRACEBACK_CELLS_JS = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const cells = Array.from(nb.querySelectorAll('.jp-Cell'));
  return cells.map((c, i) => [...c.querySelectorAll(
    '.jp-OutputArea-output[data-mime-type$="stderr"]')].some((el) =>
    /Traceback|\\b\\w*(Error|Exception)\\b/.test(el.textContent)) ? i : -1).filter((i) => i >= 0);
}"""


def traceback_cells(page) -> list[int]:
    """Indices of the cells (all cells, in notebook order) that show an error output."""
    return page.evaluate(TRACEBACK_CELLS_JS)


# Notebook 7.6's own shortcut settings code throws this on load, with no notebook open and
# no tapeviz involved (it reads .schema of a settings plugin Notebook 7 does not have); a
# person sees nothing of it
NOTEBOOK7_OWN_ERRORS = ("Cannot read properties of undefined (reading 'schema')",)


def widget_errors(
    page, extra: tuple[str, ...] = (), ignore: tuple[str, ...] = (), raising: tuple[int, ...] = ()
) -> list[str]:
    """Every error a user would see in the open notebook's outputs.

    Collects "Error displaying widget" areas, error/traceback outputs and in-place error boxes
    (``role="alert"``, as tapeviz widgets draw them), widget areas left empty because their
    view threw (anywidget shows nothing then), and uncaught JavaScript errors of the page
    (``lab_page`` records them). Empty when all is well.

    Args:
        page: a page with a notebook open.
        extra: selectors of a widget's own error areas; each visible one with text counts.
        ignore: uncaught browser errors that are the front end's own, known and harmless
            (e.g. ``NOTEBOOK7_OWN_ERRORS``), left out by their exact message.
        raising: indices of cells (all cells, in notebook order) that show an error on
            purpose (tagged ``raises-exception``): their tracebacks are not counted.
    """
    args = [EMPTY_WIDGET, list(extra), list(raising)]
    found = page.evaluate(ERRORS_JS, args)
    if EMPTY_WIDGET in found:  # a view may still be rendering: look again
        page.wait_for_timeout(1500)
        found = page.evaluate(ERRORS_JS, args)
    uncaught = [e for e in getattr(page, "page_errors", []) if e not in ignore]
    return found + [f"uncaught in the browser: {e}" for e in uncaught]


def screenshot(page, name: str) -> Path:
    """Save a full-page screenshot as test-artifacts/browser/<name>.png and print its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def image_srcs(locator) -> list[str]:
    """The ``src`` of every <img> under ``locator`` (a widget Image's src is a blob: URL that
    changes whenever its value changes; an Output's plot is a data: URL)."""
    return locator.locator("img").evaluate_all("(imgs) => imgs.map((i) => i.src)")


def drag_slider(page, slider, fraction: float) -> None:
    """Drag an ipywidgets slider's handle by ``fraction`` of its track, as a mouse would.

    Args:
        page: the page.
        slider: a locator for the slider widget (e.g. ``.widget-slider``) or anything
            holding exactly one noUiSlider handle.
        fraction: -1..1, the share of the track width to move right (negative: left).
    """
    track = slider.locator(".noUi-base").first.bounding_box()
    handle = slider.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 11):
        page.mouse.move(x + track["width"] * fraction * step / 10, y)
    page.mouse.up()
