# Two commands for users: `make test` and `make demo`. Both bootstrap .venv from the pinned
# requirements.lock on a fresh machine first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The product's packages, top layer first (ARCHITECTURE.md has the picture).
PACKAGES := cli reconciler embedded_aws engines capacity stacks components hypergov

.PHONY: test demo lint typecheck bench lock schema golden clean

$(STAMP): requirements.lock pyproject.toml
	@command -v terraform >/dev/null || { echo "error: terraform is not on PATH (needed by the terraform engine and its tests)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e ".[embedded]"
	@touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=30
	$(BIN)/ruff check $(PACKAGES) tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy $(PACKAGES)

demo: $(STAMP)
	$(BIN)/python -m cli.demo

lint: $(STAMP)
	$(BIN)/ruff check $(PACKAGES) tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy $(PACKAGES)

bench: $(STAMP)
	$(BIN)/python -m benchmarks

schema: $(STAMP)
	$(BIN)/hypergov schema --out schema

# Rewrite tests/stacks/golden/project-vision.json and tests/core/golden/merge_request/*.md from config/
# (review the diff before committing).
golden: $(STAMP)
	$(BIN)/python -m stacks.golden
	$(BIN)/python -m tests.core.regen_governance_golden

# Re-resolve the pins after editing requirements.in.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -r requirements.in
	.lock-venv/bin/pip freeze | grep -v -E '^(-e|hypergov)' > requirements.lock
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
