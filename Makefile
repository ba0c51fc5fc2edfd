# Set-up, run, test and bench kg. Everything a fresh machine needs is installed from here.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STORE  ?= kg-store
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: serve build test bench bench-related lint browser clean docs

# One command: install, build the graph from seeds/, serve the API and views.
serve: build
	$(BIN)/kg serve --store-dir $(STORE) --host $(HOST) --port $(PORT)

build: $(VENV)/.installed
	$(BIN)/kg build seeds/ --store-dir $(STORE)

# One command: install (with test extras and a headless browser), then run every test.
test: $(VENV)/.installed-test browser
	$(BIN)/ruff check kg api viz tests bench scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n auto

bench: $(VENV)/.installed-test
	$(BIN)/python bench/run.py

# Related-paper quality beside TF-IDF and MiniLM (bench/related.py; the extras bring scikit-learn, torch and MiniLM).
bench-related: $(VENV)/.installed-test
	$(BIN)/python -m pip install -q -e '.[bench,teacher]'
	$(BIN)/python bench/related.py

# The example outputs of README.md and docs/*.md (build, stats, API calls, Cypher, trends, landscape) from a fresh
# build of seeds/, the recorded quality and scale tables (docs/results/), and docs/overview.png;
# tests/core/test_readme.py checks them.
# `make docs EVAL=1` also re-runs kg eval (minutes) and records it.
docs: $(VENV)/.installed-test browser
	$(BIN)/python scripts/make_docs.py $(if $(EVAL),--eval)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check kg api viz tests bench scripts
	$(BIN)/mypy

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(VENV)/.installed $@

# Debian's Chromium for the end-to-end view tests (root, as in CI).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

clean:
	rm -rf $(STORE) tests/artifacts .pytest_cache
