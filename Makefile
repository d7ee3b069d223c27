# privopt: the README's two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
PYTEST_ARGS ?=
# `make test` leaves out the tests marked slow (pyproject.toml); CI runs every test with
# `make test PYTEST_MARKS=` (an empty selection).
PYTEST_MARKS ?= -m "not slow"

.PHONY: demo test docs lint system-deps benchmarks notebooks lab clean help

help:
	@echo "make demo        create $(VENV), install privopt, run the main job (privopt demo)"
	@echo "make test        create/update $(VENV) with the test extras and run pytest (without the slow tests;"
	@echo "                 make test PYTEST_MARKS= runs every test, as CI does)"
	@echo "make docs        install mkdocs into $(VENV) (the docs extra) and build the reference site into site/"
	@echo "make lint        ruff, mypy (configured in pyproject.toml) and the layer check of docs/architecture.md"
	@echo "                 (tests/project/test_architecture.py), as CI runs them before the tests"
	@echo "make benchmarks  run the benchmark scripts (results in benchmarks/results/)"
	@echo "make notebooks   re-execute the teaching notebooks in place (refresh their outputs)"
	@echo "make lab         install JupyterLab into $(VENV) and open the notebooks in it"

# GLPK and CBC come from the operating system.  Install them where we can
# (root with apt-get), otherwise say how and carry on: their tests then skip
# with a visible reason.
system-deps:
	@if command -v glpsol >/dev/null 2>&1 && command -v cbc >/dev/null 2>&1; then \
	  echo "system solvers: glpsol and cbc found"; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing glpk-utils and coinor-cbc with apt-get"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq glpk-utils coinor-cbc >/dev/null) \
	    || echo "WARNING: apt-get could not install glpk-utils/coinor-cbc; their tests will skip"; \
	else \
	  echo "NOTE: GLPK/CBC not found and apt-get is not usable here."; \
	  echo "      Install them yourself (Debian: sudo apt-get install glpk-utils coinor-cbc;"; \
	  echo "      conda: conda install -c conda-forge glpk coin-or-cbc). Their tests will skip."; \
	fi

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q -e ".[experiment]"
	$(PY) -m privopt compile
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q -e ".[test,scip,gurobi]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	$(PY) -m privopt compile
	touch $@ $(VENV)/.demo-installed $(VENV)/.docs-installed

demo: system-deps $(VENV)/.demo-installed
	$(PY) -m privopt demo
	@echo "The privopt command is in $(VENV)/bin: '. $(VENV)/bin/activate' puts it on PATH (then 'privopt --help')."

test: system-deps $(VENV)/.test-installed
	$(PY) -m pytest $(PYTEST_MARKS) $(PYTEST_ARGS)

$(VENV)/.docs-installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install -q -e ".[docs]"
	touch $@

docs: $(VENV)/.docs-installed
	$(VENV)/bin/mkdocs build --strict
	@echo "The reference site is in site/ (open site/index.html; '$(VENV)/bin/mkdocs serve' serves it live)."

lint: $(VENV)/.test-installed
	$(VENV)/bin/ruff check privopt tests benchmarks
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -p no:cacheprovider tests/project/test_architecture.py

benchmarks: system-deps $(VENV)/.test-installed
	$(PY) benchmarks/run_all.py

notebooks: system-deps $(VENV)/.test-installed
	$(PY) notebooks/execute.py

$(VENV)/.lab-installed: pyproject.toml $(VENV)/.test-installed
	$(PIP) install -q -e ".[notebooks,scip,gurobi]"
	touch $@

lab: system-deps $(VENV)/.lab-installed
	$(VENV)/bin/jupyter lab notebooks/

clean:
	rm -rf $(VENV) .pytest_cache
