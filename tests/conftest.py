"""Settings for the whole test suite, and how its tests are marked and spread over workers.

Hypothesis' per-example deadline is a timing check; speed is measured in `benchmarks/`, never in
unit tests, and on a shared 2-core machine the first example of a test (which loads botocore's
models, say) can take longer than any deadline. So no test here has one.

Marks (`make test-fast` deselects both): `integration` (set by tests/integration/: the real
terraform and an endpoint process) and `endpoint` (set here: the test starts the embedded AWS
endpoint, through one of the fixtures that do, or its module imports the endpoint's package).

Spreading (`-n 2 --dist loadscope --no-loadscope-reorder`, see the Makefile, with the scheduler
made here): the tests of a module stay on one worker (a module-scoped fixture, such as an
endpoint process or an applied tree, is made once, and a module's tests may build on each other),
except in the modules of `SPREAD_MODULES` (independent heavy tests, each with its own endpoint:
both workers take them). Modules that hold minutes of real terraform are handed out first,
heaviest first, so that no worker starts one when the other is finishing. (pytest-xdist's own
`loadgroup` cannot be used: it renames node ids through an attribute pytest 9 no longer reads.)
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from hypothesis import settings

from hypergov.redaction import REDACTOR

settings.register_profile("hypergov", deadline=None)
settings.load_profile("hypergov")

SPREAD_MODULES = frozenset({  # each test has its own endpoint and directory
    "tests/integration/test_reconcile_crash.py", "tests/integration/test_state_in_s3.py",
    "tests/integration/test_reconcile_remote.py"})
ENDPOINT_FIXTURES = frozenset({"aws", "endpoint", "own_endpoint", "applied_example", "reconciled_into_s3"})
# Integration modules by the real work they hold (terraform passes, backoffs), heaviest first:
# only the order of hand-out depends on it. A module not listed follows the listed ones.
HEAVIEST_FIRST = (
    "test_reconcile_crash", "test_state_in_s3", "test_reconcile_faults", "test_live_drift",
    "test_reconcile_remote", "test_scan_plan_property", "test_reconcile", "test_replicas",
    "test_provider_differential", "test_provider_crash",
    "test_clusters_in_the_pass", "test_declared_clusters", "test_cli_engine", "test_reconcile_adoption",
    "test_observe_daemon", "test_destroy", "test_apply_faults", "test_merge_request_plan", "test_import_round_trip",
    "test_terraform_engine",
)


@pytest.fixture(autouse=True)
def _redactor_forgets() -> Iterator[None]:
    """The process's redactor (`hypergov.redaction`) learns every secret a test loads, for the life
    of the process; each test starts from what it knew before, so that one test's secret never masks
    another's output."""
    known = REDACTOR.snapshot()
    yield
    REDACTOR.restore(known)


def _imports_the_endpoint(module: ModuleType) -> bool:
    return any(getattr(value, "__module__", "") and str(getattr(value, "__module__", "")).startswith("embedded_aws")
               for value in vars(module).values())


def _hand_out_rank(item: pytest.Item) -> tuple[int, int]:
    name = item.module.__name__.rsplit(".", 1)[-1] if item.module is not None else ""
    if item.get_closest_marker("integration") is None:
        return (2, 0)
    return (0, HEAVIEST_FIRST.index(name)) if name in HEAVIEST_FIRST else (1, 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        if ENDPOINT_FIXTURES & set(getattr(item, "fixturenames", ())) or (
                module is not None and _imports_the_endpoint(module)):
            item.add_marker(pytest.mark.endpoint)
    items.sort(key=_hand_out_rank)  # stable: a module's tests keep their order


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scope scheduling, a module a scope but for `SPREAD_MODULES` (a test a scope)."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScopes(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return nodeid if module in SPREAD_MODULES else module

    return ModuleScopes(config, log)

