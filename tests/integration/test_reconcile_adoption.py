"""Adoption by a reconciler that lost its disk: a real `hypergov reconcile` process, the real
terraform, the embedded endpoint and a bare remote. After a first pass the whole state directory
is deleted (terraform's state, the inventories, the applied-commit record, the audit checkpoint);
the next pass must converge by importing every object it would otherwise create (Terraform
`import` blocks; without them, each create fails with EntityAlreadyExists), record the imports in
the audit trail, and leave nothing to do for the pass after it.

(Its own module, apart from the crash tests it shares helpers with, so that pytest-xdist's
per-file scheduling can run the two on different workers.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from embedded_aws import EmbeddedAwsProcess
from tests.integration.common import reconciler_env as _env
from tests.integration.common import remote_and_clone as _remote_and_clone
from tests.integration.common import run_hypergov as _hypergov
from tests.integration.conftest import audit_records

pytestmark = pytest.mark.integration


def test_the_state_directory_lost_a_new_reconciler_adopts_what_is_live_and_converges(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    """The reconciler's disk is lost after a first pass (terraform's state, the inventories, the
    record of the applied commit): the next reconciler plans every stack again, finds each object
    it would create live already, imports it (terraform `import` blocks) instead of failing with
    "already exists", records that in the audit trail, and the pass after it has nothing to do."""
    remote, clone, _ = _remote_and_clone(tmp_path)
    first = _hypergov(_env(own_endpoint, tmp_path), tmp_path, "reconcile")
    assert first.returncode == 0, first.stdout + first.stderr
    before = audit_records(clone)
    created = {a for r in before if r["type"] == "outcome" for a in r["applied"]}
    assert created and all(a.startswith(("create ", "update ")) for a in created), created

    shutil.rmtree(tmp_path / "state")
    again = _hypergov(_env(own_endpoint, tmp_path), tmp_path, "reconcile")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already exists" not in again.stdout + again.stderr
    records = audit_records(clone)
    adopted = {a for r in records[len(before):] if r["type"] == "outcome" for a in r["applied"]}
    terraform_created = {a.split(" ", 1)[1] for a in created if a.startswith("create aws_")}
    imported = {a.split(" ", 1)[1] for a in adopted if a.startswith("import ")}
    assert imported == terraform_created, (sorted(terraform_created - imported), sorted(imported - terraform_created))
    assert not any(a.startswith("create aws_") for a in adopted), adopted

    steady = _hypergov(_env(own_endpoint, tmp_path), tmp_path, "reconcile")
    assert steady.returncode == 0 and "up to date" in steady.stdout, steady.stdout + steady.stderr
    verified = _hypergov(_env(own_endpoint, tmp_path), tmp_path, "audit", "verify", "--repo", str(remote))
    assert verified.returncode == 0, verified.stdout + verified.stderr
