# Every target installs what it needs first: a fresh machine needs only python3, git and make.
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
DEMO    := fixtures/stores/demo

.PHONY: vault test lint fmt bench bench-large crash clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# git keeps no mtimes and a session note carries its file's mtime, so the demo store is
# rebuilt first (same bytes, recorded times) to give the same vault on every clone.
vault: $(STAMP)
	$(BIN)/python fixtures/stores/build_demo.py --quiet
	$(BIN)/vaultsync sync --state $(DEMO) --vault vault
	$(BIN)/vaultsync graph map --state $(DEMO)

test: $(STAMP)
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Synthetic stores of 2,800 and 10,000 notes, the git floor beside them, then the knowledge
# model and search on the 10,000-note vault; writes bench/results/<date>.md and .json.
bench: $(STAMP)
	$(BIN)/python bench/run.py --sizes 2800,10000

# 100,000 notes (caps raised), median of 5 like the others: takes about 15 minutes.
bench-large: $(STAMP)
	$(BIN)/python bench/run.py --sizes 100000 --runs 5 --no-extras --out bench/results/large

# The SIGKILL crash test with 500 kills instead of the 50+ of `make test`.
crash: $(STAMP)
	$(BIN)/pytest -q -m slow tests/test_crash.py

clean:
	rm -rf $(VENV) build dist *.egg-info vault bench/out .pytest_cache .mypy_cache .ruff_cache
