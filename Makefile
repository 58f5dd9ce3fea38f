# Two commands for a fresh machine with Python 3.11+:  make demo  and  make test.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test test-fast lint bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "tracelake needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

## Run the demo plans through graph-tool-call's real PlanRunner into the embedded SQLite store.
demo: $(STAMP)
	$(BIN)/tracelake db upgrade
	$(BIN)/tracelake demo
	$(BIN)/tracelake project
	$(BIN)/tracelake runs list --limit 10
	@echo
	@echo "Projections are built (views v_runs, v_learning_records, ... are filled). Next:"
	@echo "  $(BIN)/tracelake explain RUN_ID      # a run from the list above: timeline and likely cause"
	@echo "  $(BIN)/tracelake quarantine list     # what was set aside, and why"
	@echo "  $(BIN)/tracelake promote --dry-run   # suggestions the runs support"

## The whole test suite (SQLite always; PostgreSQL from TRACELAKE_TEST_DATABASE_URL when
## reachable), with branch coverage of tracelake/ and pipelines/: prints the modules not fully
## covered and fails under the floor in pyproject.toml ([tool.coverage.report] fail_under).
test: $(STAMP)
	$(BIN)/python -m pytest --cov --cov-report=term-missing:skip-covered

## The edit loop: everything but the tests marked slow (no coverage floor: it is a subset).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check tracelake pipelines migrations tests bench
	$(BIN)/ruff format --check tracelake pipelines migrations tests bench
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/bench_append.py
	$(BIN)/python bench/bench_promote.py

clean:
	rm -rf $(VENV) tracelake.db tracelake.db-* tracelake.db.pseudonym.key
