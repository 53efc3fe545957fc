# Every target installs what it needs first: a fresh machine needs only python3, git and make.
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
DEMO    := fixtures/stores/demo
VIEW    := .typecheck/vaultsync

# The suite starts vaultsync in a real process hundreds of times: Python keeps the package's
# compiled bytecode (and pytest its rewritten tests) between them, even where the shell asks
# it not to (make test took 190 s with PYTHONDONTWRITEBYTECODE=1, 167 s without).
unexport PYTHONDONTWRITEBYTECODE

# The suite runs on 2 workers that take each other's tests when one runs out (worksteal):
# a few long tests no longer finish alone at the end (make test 167 -> 154 s).
PYTEST  := $(BIN)/pytest -q -n 2 --dist worksteal

.PHONY: vault test check docs js-parsers lint typecheck typecheck-view fmt bench bench-large crash clean

# The build's own chatter goes to a log, shown only when the install fails: a new user
# running `make vault` sees the vault, not setuptools.
$(STAMP): pyproject.toml
	@echo "installing vaultsync and its tools into $(VENV) (log: $(VENV)/install.log)"
	@python3 -m venv $(VENV)
	@{ $(BIN)/python -m pip install --quiet --upgrade pip \
	  && $(BIN)/python -m pip install --quiet -e '.[dev]'; } > $(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log; exit 1; }
	@touch $(STAMP)

# No rendered byte depends on a file's mtime, so the committed demo store gives the same
# vault on every clone as it is (README, "Same vault on every clone").
vault: $(STAMP)
	$(BIN)/vaultsync sync --state $(DEMO) --vault vault
	$(BIN)/vaultsync graph map --state $(DEMO)

# The suite without the tests that drive outside programs (marked `external`); `make check`
# runs those too.
test: $(STAMP)
	@echo "make test: tests marked 'external' (outside programs) are skipped; make check runs them"
	$(PYTEST) -m 'not slow and not external'

# The date and link grammars the front matter is tested against (tests/render/test_typed_properties.py,
# marked external): luxon from npm and Dataview's published package (npm pack; a full install
# of it does not work), under .venv/js.  Without npm the test is skipped, saying so.
JS      := $(VENV)/js

js-parsers: $(JS)/.installed
$(JS)/.installed: $(STAMP)
	-mkdir -p $(JS)/node_modules && cd $(JS) && npm install --no-save --silent luxon@3.7.2 \
	  && npm pack --silent obsidian-dataview@0.5.68 \
	  && mkdir -p node_modules/obsidian-dataview \
	  && tar -xzf obsidian-dataview-0.5.68.tgz -C node_modules/obsidian-dataview \
	    --strip-components=1 && touch .installed

# The documentation site (docs/, mkdocs.yml) into .site/; --strict: a broken link fails it.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --quiet

# What CI runs: lint, types, the docs, then the whole suite.
check: lint typecheck docs $(JS)/.installed
	$(PYTEST) -m 'not slow'

# ruff, the formatter, radon's cyclomatic complexity (at most 15 per function) and the
# import layers of the pipeline (import-linter, contract in pyproject.toml).
lint: $(STAMP) typecheck-view
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python .ci/complexity.py --max 15 pipeline renderers tests bench fixtures
	PYTHONPATH=.typecheck $(BIN)/lint-imports --no-cache

# mypy maps module names to folders, so it reads the package through a view of symlinks
# (`vaultsync/` → pipeline/, with renderers/ and templates/ inside), as the install maps them.
typecheck-view:
	@rm -rf .typecheck && mkdir -p $(VIEW)
	@for entry in pipeline/*; do ln -s ../../$$entry $(VIEW)/; done
	@ln -s ../../renderers $(VIEW)/renderers && ln -s ../../templates $(VIEW)/templates

typecheck: $(STAMP) typecheck-view
	$(BIN)/mypy
	$(BIN)/mypy tests bench

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Synthetic stores of 2,800 and 10,000 notes, the git floor beside them, then the knowledge
# model and search on the 10,000-note vault; writes bench/results/<date>.md and .json.
# Then search quality (text / semantic / hybrid: recall@5, MRR on bench/search_queries.json)
# and the semantic index's cost at 10,000 notes: bench/results/search-quality-<date>-static.*
# Then `sync --each` over 2,000 small sender state directories, 1 shard vs 2 (bench/results/each-*).
bench: $(STAMP)
	$(BIN)/python bench/run.py --sizes 2800,10000
	$(BIN)/python bench/search_quality.py --cost 10000
	$(BIN)/python bench/each.py --senders 2000

# 100,000 notes (caps raised), median of RUNS (5, like the others): about 15 minutes on the
# 2026-12-02 machine, over an hour on a 4× slower one (`make bench-large RUNS=3`).
RUNS ?= 5
bench-large: $(STAMP)
	$(BIN)/python bench/run.py --sizes 100000 --runs $(RUNS) --no-extras --out bench/results/large
	$(BIN)/python bench/search_quality.py --no-quality --scale 100000 --out bench/results/large

# The long versions: 500 SIGKILLs instead of the 20 of `make test`, 2 × 500 racing links.
crash: $(STAMP)
	$(BIN)/pytest -q -m slow tests/vault/test_crash.py tests/drawn/test_linkstore.py

clean:
	rm -rf $(VENV) build dist *.egg-info vault bench/out .pytest_cache .mypy_cache .ruff_cache .typecheck .site
