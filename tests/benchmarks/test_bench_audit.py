"""The audit benchmark measures a branch the product would accept: the generated branch (records
by `git fast-import`, commits signed as `AuditStore` signs) passes `git fsck --strict`, `git
verify-commit` and `verify_branch` with every signature checked; and its witness checkpoint
narrows the signature check to the commits after it, as `audit verify` does by default."""

from __future__ import annotations

from pathlib import Path

from benchmarks.bench_audit import _checkpoint_before, check_generator, generate
from reconciler.audit_signing import SigningKey
from reconciler.audit_store import AuditStore
from reconciler.audit_verify import verify_branch
from reconciler.audit_witness import DirectoryWitness


def test_the_generated_branch_is_one_git_and_verify_accept() -> None:
    check_generator(seed=7, records=400)  # raises SystemExit(1) on any refusal


def test_the_checkpoint_leaves_only_the_last_commits_to_check(tmp_path: Path) -> None:
    key = SigningKey.generate()
    made = generate(tmp_path / "repo", 300, seed=3, key=key)
    store = AuditStore(tmp_path / "repo")
    witness = DirectoryWitness(tmp_path / "witness")
    head = store.git("rev-parse", f"{made['tip']}~4").stdout.decode().strip()
    vouched = _checkpoint_before(store, witness, key, head)
    assert 0 < vouched < 300
    result = verify_branch(store, witnesses=[witness])
    assert result.ok, result.broken
    assert (result.records, result.signed) == (300, 4)
    assert verify_branch(store, allowed={key.blob}).signed == made["commits"]
