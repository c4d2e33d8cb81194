"""`hypergov audit verify` as an auditor runs it: on another machine, from a URL of the governance
repository, with nothing of the reconciler's disk; only the witness where the reconciler publishes
its signed checkpoints (the state bucket, on the embedded endpoint's S3: versioned, Object Lock in
compliance mode). Real git (a bare remote, pushes), real SSH signatures (checked by
`git verify-commit` in tests/reconciler/test_audit.py).

The reconciler side writes four records as passes do (write, push, checkpoint). Each kind of
tampering someone with push rights could do is then made on the remote and must exit 1 naming
what and where: a tail removed by one record, the branch rebuilt with a re-chained (valid) chain,
a forged record appended with a correct chain link, and a fork (two writers shown two histories).
Before issue 33 each of them verified "intact" from a clone. An attacker who can also write the
bucket cannot hide a truncation: Object Lock refuses to delete the checkpoint's version, and a
delete marker or an overwrite leaves the first version in the history that verify reads."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import git
import pytest
from botocore.exceptions import ClientError
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from engines.settings import Settings, load_settings
from reconciler.audit import AuditLog
from reconciler.audit_chain import START, chained, file_bytes, payload_of, record_path
from reconciler.audit_checkpoints import branch_dir
from reconciler.audit_signing import SigningKey
from reconciler.audit_store import AuditStore
from reconciler.audit_verify import verify_branch
from reconciler.audit_witness import witnesses_of
from tests.audit_trail import records_at
from tests.integration.conftest import CREDENTIALS, MANAGEMENT, REGION
from tests.reconciler.test_audit_verify import mallory_commit

pytestmark = pytest.mark.integration
BRANCH = "hypergov/audit"
PASSES = [
    [{"type": "intent", "intent": "i1", "stacks": [{"stack": "project-speech"}]}],
    [{"type": "outcome", "intent": "i1", "stack": "project-speech", "outcome": "applied"}],
    [{"type": "intent", "intent": "i2", "stacks": [{"stack": "project-vision"}]}],
    [{"type": "outcome", "intent": "i2", "stack": "project-vision", "outcome": "applied"}],
]


class Trail:
    """A governance repository, its bare remote, the witness bucket, and the reconciler's settings."""

    def __init__(self, endpoint: EmbeddedAwsProcess, root: Path, bucket: str) -> None:
        self.endpoint, self.root, self.bucket = endpoint, root, bucket
        self.remote = root / "remote.git"
        git.Repo.init(self.remote, bare=True)
        self.gov = root / "gov"
        repo = git.Repo.init(self.gov, initial_branch="main")
        (self.gov / "config").mkdir()
        (self.gov / "config" / "org.yaml").write_text("name: acme\n")
        repo.index.add(["config/org.yaml"])
        actor = git.Actor("admin", "admin@example.com")
        repo.index.commit("tree", author=actor, committer=actor)
        repo.create_remote("origin", str(self.remote))
        self.s3 = endpoint.client("s3", account=MANAGEMENT, region=REGION)
        self.s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True,  # versioning comes with it
                              CreateBucketConfiguration={"LocationConstraint": REGION})

    def settings(self, state: str) -> Settings:
        return load_settings(environ={"HYPERGOV_SETTINGS": "/nonexistent"}, overrides={
            "aws.endpoint_url": self.endpoint.endpoint_url, "state_dir": str(self.root / state),
            "state_backend": f"s3://{self.bucket}/prod"})

    def reconciler(self, state: str = "state-a", repo: Path | None = None) -> AuditLog:
        return AuditLog.from_settings(self.settings(state), repo or self.gov)

    def auditor_env(self) -> dict[str, str]:
        """Another machine: an empty state directory, no settings file; the state bucket known."""
        elsewhere = self.root / "auditor"
        (elsewhere / "config").mkdir(parents=True, exist_ok=True)
        return {**CREDENTIALS, "HYPERGOV_SETTINGS": str(elsewhere / "none.yaml"),
                "HYPERGOV_STATE_DIR": str(elsewhere / "state"), "HYPERGOV_CONFIG_DIR": str(elsewhere / "config"),
                "HYPERGOV_STATE_BACKEND": f"s3://{self.bucket}/prod",
                "HYPERGOV_AWS_ENDPOINT_URL": self.endpoint.endpoint_url, "AWS_REGION": REGION}

    def verify(self, *args: str) -> Result:
        return CliRunner().invoke(main, ["audit", "verify", "--repo", f"file://{self.remote}", *args],
                                  env=self.auditor_env())

    def git(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
        return subprocess.run(["git", "-C", str(self.remote), *args], input=stdin, capture_output=True, check=True,
                              env={**os.environ, **(env or {})}).stdout.decode().strip()

    def checkpoint_keys(self) -> list[str]:
        listed = self.s3.list_object_versions(Bucket=self.bucket, Prefix=f"prod/reconciler/{branch_dir(BRANCH)}/")
        return sorted({v["Key"] for v in listed.get("Versions", []) if not v["Key"].endswith("alive.json")})


@pytest.fixture
def trail(endpoint: EmbeddedAwsProcess, tmp_path: Path, request: pytest.FixtureRequest) -> Trail:
    bucket = f"audit-witness-{uuid.uuid4().hex[:12]}"
    made = Trail(endpoint, tmp_path, bucket)
    log = made.reconciler()
    for payloads in PASSES:
        log.write(payloads, subject="pass")
        pushed = log.push()
        assert pushed.error is None and pushed.checkpoint_error is None, pushed
    return made


def _records(trail: Trail) -> list[dict[str, object]]:
    return records_at(trail.remote, BRANCH)


def test_the_untouched_trail_is_intact_from_a_clone(trail: Trail) -> None:
    again = trail.reconciler().push()  # a pass that wrote nothing new: its record is vouched for already
    assert again.error is None and again.checkpoint_error is None and again.pushed == 0
    assert len(trail.checkpoint_keys()) == 4
    result = trail.verify()
    assert result.exit_code == 0, result.output
    assert "intact: 4 record(s) on hypergov/audit" in result.output
    assert f"witness s3://{trail.bucket}/prod/reconciler: 4 checkpoint(s) hold" in result.output
    assert "signatures: records 1-4 vouched for by signed checkpoints; 0 commit(s) after them checked" in result.output
    data = json.loads(trail.verify("--json").stdout)
    assert data["intact"] is True and data["checkpoint"] is None  # nothing of the reconciler's disk here
    assert data["witnesses"][0]["newest"]["seq"] == 4 and len(data["witnesses"][0]["signers"]) == 1


def test_a_tail_removed_by_one_record_is_found(trail: Trail) -> None:
    trail.git("update-ref", f"refs/heads/{BRANCH}", f"{BRANCH}^")  # reset back one commit, as a force push does
    result = trail.verify()
    assert result.exit_code == 1, result.output
    assert "record 4 is missing: writer" in result.output and "ends at record 3" in result.output
    assert f"{len(trail.checkpoint_keys())}" == "4"


def test_a_rebuilt_rechained_branch_is_found(trail: Trail) -> None:
    payloads = [payload_of(r) for r in _records(trail)]
    payloads[1] = {**payloads[1], "outcome": "failed"}  # history rewritten; every prev recomputed
    rebuilt = chained(payloads, START)
    trail.git("update-ref", f"refs/heads/{BRANCH}",
              mallory_commit(trail.remote, {record_path(r): file_bytes(r) for r in rebuilt}, parent=None))
    result = trail.verify()
    assert result.exit_code == 1, result.output
    assert "record 4 on the branch is not the one checkpointed by writer" in result.output
    assert "rebuilt or rewritten" in result.output


@pytest.mark.parametrize("signed_by", ["nobody", "mallory's own key"])
def test_a_forged_record_appended_with_a_correct_chain_link_is_found(trail: Trail, tmp_path: Path,
                                                                    signed_by: str) -> None:
    clone = tmp_path / "mallory"
    git.Repo.clone_from(str(trail.remote), clone, branch=BRANCH)
    forger = AuditStore(clone, branch=BRANCH, signer=SigningKey.generate() if signed_by != "nobody" else None)
    forged = forger.append([{"type": "outcome", "stack": "project-vision", "outcome": "applied"}], subject="forged")
    assert forged[0]["seq"] == 5 and forger.push().error is None  # the chain link is right: it is pushed
    result = trail.verify()
    assert result.exit_code == 1, result.output
    assert "records/0000/00/00000005-outcome-project-vision.json" in result.output
    said = "is not signed" if signed_by == "nobody" else "which is not an allowed signer"
    assert said in result.output


def test_a_fork_two_writers_shown_two_histories_is_found(trail: Trail, tmp_path: Path) -> None:
    payloads = [payload_of(r) for r in _records(trail)]
    payloads[3] = {**payloads[3], "outcome": "failed"}
    rebuilt = chained(payloads, START)
    other = tmp_path / "other.git"  # a second remote, shown to a second reconciler
    subprocess.run(["git", "clone", "--bare", "--quiet", str(trail.remote), str(other)], check=True)
    head = mallory_commit(trail.remote, {record_path(r): file_bytes(r) for r in rebuilt}, parent=None)
    subprocess.run(["git", "-C", str(trail.remote), "push", "--quiet", str(other), f"{head}:refs/heads/{BRANCH}",
                    "--force"], check=True)
    second = AuditLog.open(other, state_dir=tmp_path / "state-b", branch=BRANCH,
                           signer=SigningKey.generate(), witnesses=witnesses_of(trail.settings("state-b")))
    assert second.checkpoint("records") == []  # what writer B publishes after its push: record 4 as it sees it
    result = trail.verify()
    assert result.exit_code == 1, result.output
    assert "a fork: writer" in result.output and "checkpointed record 4 as" in result.output


def test_a_checkpoint_the_store_will_not_let_go_still_reports_the_truncation(trail: Trail) -> None:
    newest = trail.checkpoint_keys()[-1]
    assert newest.endswith(".json") and "/000000000004-" in newest
    versions = trail.s3.list_object_versions(Bucket=trail.bucket, Prefix=newest)["Versions"]
    with pytest.raises(ClientError) as refused:  # Object Lock (compliance): the version cannot be deleted
        trail.s3.delete_object(Bucket=trail.bucket, Key=newest, VersionId=versions[0]["VersionId"])
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    trail.git("update-ref", f"refs/heads/{BRANCH}", f"{BRANCH}^")
    trail.s3.put_object(Bucket=trail.bucket, Key=newest, Body=b'{"checkpoint": "nothing to see"}')  # overwrite
    overwritten = trail.verify()
    assert overwritten.exit_code == 1, overwritten.output
    assert "record 4 is missing" in overwritten.output and "overwritten in the witness" in overwritten.output
    trail.s3.delete_object(Bucket=trail.bucket, Key=newest)  # a delete marker hides it from a plain listing
    assert newest not in [o["Key"] for o in trail.s3.list_objects_v2(Bucket=trail.bucket).get("Contents", [])]
    deleted = trail.verify()
    assert deleted.exit_code == 1, deleted.output
    assert "record 4 is missing" in deleted.output and "deleted in the witness" in deleted.output


def test_a_reconciler_that_stopped_vouching_is_stale(trail: Trail) -> None:
    log = AuditLog.from_settings(trail.settings("state-a"), trail.gov, alive_interval_s=60)
    published = datetime.now(UTC)
    assert log.checkpoint("alive", when=published) == []
    store = AuditStore(trail.remote, branch=BRANCH)
    witnesses = witnesses_of(trail.settings("auditor"))
    fresh = verify_branch(store, witnesses=witnesses, now=published + timedelta(seconds=90))
    assert fresh.ok, fresh.broken
    stale = verify_branch(store, witnesses=witnesses, now=published + timedelta(minutes=4))
    assert stale.broken is not None and "stale" in stale.broken.why and "every 60 s" in stale.broken.why
