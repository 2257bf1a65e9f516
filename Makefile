# Two commands from a fresh clone: `make lab` (JupyterLab on notebooks/) and `make test`.
# `make lab` builds .venv with what the notebooks need (pip install -e ".[lab,slides]");
# `make test` adds the rest (pip install -e ".[test]": torch, playwright, otter-grader, ...).
# Each runs again when pyproject.toml changes.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
LAB_STAMP := $(VENV)/.installed-lab
STAMP := $(VENV)/.installed
# extra pytest arguments, e.g. make test PYTEST_ARGS='-m "not browser"'
PYTEST_ARGS ?=
# pytest-xdist workers: the two cores of the development machine and of CI (JOBS=0: one
# process, where a SEED then repeats the exact order)
JOBS ?= 2
# the order's seed (pytest-random-order): a new one each run, printed at the top of pytest's
# output; SEED=... repeats it
SEED := $(shell od -An -N2 -tu2 /dev/urandom | tr -d ' ')
# the venv's "python3" kernelspec comes before any user-level one (~/.local/share/jupyter)
JUPYTER_ENV := JUPYTER_PATH="$(CURDIR)/$(VENV)/share/jupyter"

.PHONY: lab test test-random fuzz lint bench pictures venv lab-venv clean assignments grade

$(LAB_STAMP): pyproject.toml binder/overrides.json
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[lab,slides]"
	$(MATHJAX_FIX)
	$(LAB_OVERRIDES)
	touch $(LAB_STAMP)

$(STAMP): pyproject.toml $(LAB_STAMP)
	$(BIN)/pip install --quiet -e ".[test]"
	$(MATHJAX_FIX)
	touch $(STAMP)

# a newcomer's first view is the notebook, not JupyterLab's "get notified about official
# Jupyter news?" toast: JupyterLab reads <prefix>/share/jupyter/lab/settings/overrides.json
# (binder/postBuild and scripts/hub do the same)
LAB_OVERRIDES = install -D -m 644 binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json

# jupyterlab-rise (the "course" extra) pulls in jupyterlab-mathjax3, whose old MathJax
# extension would replace JupyterLab's own and drop the assistive MathML screen readers
# read; JupyterLab's own typesets RISE's slides too (binder/postBuild does the same)
MATHJAX_FIX = $(BIN)/jupyter labextension disable --level=sys_prefix @jupyterlab/mathjax3-extension >/dev/null

venv: $(STAMP)
lab-venv: $(LAB_STAMP)

# as root (containers, CI machines) JupyterLab needs --allow-root
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(LAB_STAMP)
	$(JUPYTER_ENV) $(BIN)/jupyter lab $(ROOT_FLAG) notebooks/

# Every test once, on $(JOBS) workers, in a random order: one global shuffle (so no test may
# depend on which tests ran before it), except that each module with a costly module-scoped
# setup (a browser module's JupyterLab, the assignments' otter builds) stays whole, in order,
# on one worker, and these run first (tests/conftest.py).
# pytest always collects tests (tests/core, and tests/notebooks has a test even with no
# notebooks), so its exit 5 ("no tests collected") only comes from a PYTEST_ARGS filter.
PYTEST_RUN = $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup \
  --random-order-bucket=global --random-order-seed=$(SEED)
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST_RUN) $(PYTEST_ARGS) || { rc=$$?; \
	  [ $$rc -ne 5 ] || echo "make test: no tests collected; check PYTEST_ARGS" >&2; \
	  echo "make test: order seed $(SEED) (make test SEED=$(SEED) JOBS=0 repeats the order)" >&2; \
	  exit $$rc; }

# the unit tests alone (tests/core, tests/tapeviz), the same way: a quick order check
test-random: $(STAMP)
	$(PYTEST_RUN) tests/core tests/tapeviz -m "not browser" $(PYTEST_ARGS)

# the differential fuzzer's long profile (tests/fuzz; its fast profile runs in `make test`)
fuzz: $(STAMP)
	FUZZ_PROFILE=long $(BIN)/python -m pytest tests/fuzz $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python bench/run_all.py

# the README's pictures, from the pip-only path (Graphviz in WebAssembly, resvg, matplotlib)
pictures: $(STAMP)
	$(BIN)/python docs/make_pictures.py

clean:
	rm -rf $(VENV) build *.egg-info test-artifacts .numba_cache

# Assignments: `make assignments` builds the student notebooks from assignments/source/
# (otter assign) into assignments/student/; `make grade NB=path/to/submission.ipynb` grades
# one submission against assignments/hidden/, the notebook in a process of its own
# (assignments/grading/; last line: score: X/Y).
assignments: $(STAMP)
	$(BIN)/python assignments/grade.py --build-only --students assignments/student

GRADE_ARGS ?=
grade: $(STAMP)
	@test -n "$(NB)" || { echo "usage: make grade NB=path/to/notebook.ipynb" >&2; exit 2; }
	@$(BIN)/python assignments/grade.py "$(NB)" $(GRADE_ARGS)
