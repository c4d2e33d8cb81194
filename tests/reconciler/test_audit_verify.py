"""The tamper test of `hypergov audit verify`: four records are written as the reconciler writes
them (checkpoint included), then the audit branch is tampered with as a person could: a commit
that edits, deletes, inserts or reorders records, and a history rewritten from scratch (all
prevs recomputed, so the chain alone holds) that drops the last record or changes one. Each must
exit 1 naming the record and why; the untouched branch exits 0. Also `audit log`'s filters."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import main
from reconciler.audit import AuditLog
from reconciler.audit_chain import START, chained, file_bytes, payload_of, record_path
from tests.audit_trail import record_files

BRANCH = "hypergov/audit"
Files = dict[str, bytes]


@pytest.fixture
def gov(tmp_path: Path) -> Path:
    root = tmp_path / "gov"
    repo = git.Repo.init(root, initial_branch="main")
    (root / "config").mkdir()
    (root / "config" / "org.yaml").write_text("name: acme\n")
    repo.index.add(["config/org.yaml"])
    actor = git.Actor("admin", "admin@example.com")
    repo.index.commit("tree", author=actor, committer=actor)
    log = AuditLog.open(root, state_dir=tmp_path / "state", branch=BRANCH)
    log.write([{"type": "intent", "intent": "i1", "stacks": [{"stack": "project-speech"}]}], subject="intent")
    log.write([{"type": "outcome", "intent": "i1", "stack": "project-speech", "outcome": "applied"}], subject="o")
    log.write([{"type": "intent", "intent": "i2", "stacks": [{"stack": "cluster-gpu-west"}]}], subject="intent")
    log.write([{"type": "outcome", "intent": "i2", "stack": "cluster-gpu-west", "outcome": "failed"}], subject="o")
    return root


def _env(gov: Path) -> dict[str, str]:
    return {"HYPERGOV_SETTINGS": str(gov.parent / "none.yaml"), "HYPERGOV_STATE_DIR": str(gov.parent / "state"),
            "HYPERGOV_CONFIG_DIR": str(gov / "config")}


def _verify(gov: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["audit", "verify", *args], env=_env(gov))


def _git(repo: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True,
                          env={**os.environ, **(env or {})}).stdout.decode().strip()


def _files(repo: Path) -> Files:
    return record_files(repo, BRANCH)


def mallory_commit(repo: Path, files: Files, *, parent: str | None) -> str:
    """A commit holding exactly `files`, made with git as a person with push rights could."""
    with tempfile.TemporaryDirectory() as tmp:
        index = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_AUTHOR_NAME": "mallory",
                 "GIT_AUTHOR_EMAIL": "mallory@example.com", "GIT_COMMITTER_NAME": "mallory",
                 "GIT_COMMITTER_EMAIL": "mallory@example.com"}
        _git(repo, "read-tree", "--empty", env=index)
        for path, data in files.items():
            blob = _git(repo, "hash-object", "-w", "--stdin", stdin=data)
            _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=index)
        tree = _git(repo, "write-tree", env=index)
        return _git(repo, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", "tamper", env=index)


def _tamper(repo: Path, change: Callable[[Files], Files]) -> None:
    tip = _git(repo, "rev-parse", BRANCH)
    _git(repo, "update-ref", f"refs/heads/{BRANCH}", mallory_commit(repo, change(_files(repo)), parent=tip))


def _rewrite(repo: Path, change: Callable[[list[dict[str, object]]], list[dict[str, object]]]) -> None:
    """A new history from scratch with every prev recomputed: the chain alone holds."""
    payloads = change([payload_of(json.loads(data)) for _, data in sorted(_files(repo).items())])
    records = chained(payloads, START)
    forced = mallory_commit(repo, {record_path(r): file_bytes(r) for r in records}, parent=None)
    _git(repo, "update-ref", f"refs/heads/{BRANCH}", forced)


IN = "records/0000/00/"  # the directory of records 1-99


def _edit(files: Files) -> Files:
    path = f"{IN}00000002-outcome-project-speech.json"
    return {**files, path: files[path].replace(b'"applied"', b'"failed"')}


def _insert(files: Files) -> Files:
    forged = {**json.loads(files[f"{IN}00000002-outcome-project-speech.json"]), "stack": "project-nlp"}
    return {**files, record_path(forged): file_bytes(forged)}


def _reorder(files: Files) -> Files:
    a, b = f"{IN}00000002-outcome-project-speech.json", f"{IN}00000003-intent-pass.json"
    return {**files, a: files[b], b: files[a]}


TAMPERED = [
    pytest.param(lambda r: _tamper(r, _edit), f"{IN}00000002-outcome-project-speech.json (record 2): edited by commit",
                 id="edited"),
    pytest.param(lambda r: _tamper(r, lambda f: {k: v for k, v in f.items() if "00000002" not in k}),
                 f"{IN}00000002-outcome-project-speech.json (record 2): deleted by commit", id="deleted"),
    pytest.param(lambda r: _tamper(r, _insert), f"{IN}00000002-outcome-project-nlp.json (record 2): inserted "
                 "before record 4", id="inserted"),
    pytest.param(lambda r: _tamper(r, _reorder), f"{IN}00000002-outcome-project-speech.json (record 2): edited "
                 "by commit", id="reordered"),
    pytest.param(lambda r: _rewrite(r, lambda p: p[:3]), "checkpoint (seq 4) (record 4): the branch ends at record 3, "
                 "but record 4 was written", id="rewritten-tail-dropped"),
    pytest.param(lambda r: _rewrite(r, lambda p: [p[0], {**p[1], "outcome": "failed"}, *p[2:]]),
                 "checkpoint (seq 4) (record 4): record 4 is not the one written", id="rewritten-edited"),
    pytest.param(lambda r: _git(r, "update-ref", f"refs/heads/{BRANCH}", mallory_commit(r, {
        k: v for k, v in _files(r).items() if "00000002" not in k}, parent=None)),
                 f"{IN}00000003-intent-pass.json (record 3): record 2 is missing", id="rewritten-middle-dropped"),
]


def test_an_untouched_branch_is_intact(gov: Path) -> None:
    result = _verify(gov)
    assert result.exit_code == 0, result.output
    assert "intact: 4 record(s) on hypergov/audit" in result.output
    assert "matches the checkpoint (record 4)" in result.output
    data = json.loads(_verify(gov, "--json").stdout)
    assert (data["intact"], data["records"], data["last_seq"], data["broken"]) == (True, 4, 4, None)


@pytest.mark.parametrize(("tamper", "named"), TAMPERED)
def test_each_kind_of_tampering_is_detected_and_named(gov: Path, tamper: Callable[[Path], None], named: str) -> None:
    tamper(gov)
    result = _verify(gov)
    assert result.exit_code == 1, result.output
    assert f"BROKEN: {named}" in result.output, result.output
    assert "Traceback" not in result.output
    data = json.loads(_verify(gov, "--json").stdout)
    assert data["intact"] is False and data["broken"]["why"]


def test_a_remote_by_url_is_checked_against_what_was_pushed(gov: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git.Repo.init(remote, bare=True)
    _git(gov, "remote", "add", "origin", str(remote))
    log = AuditLog.open(gov, state_dir=tmp_path / "state", branch=BRANCH)
    assert log.push().error is None
    log.write([{"type": "rejected", "outcome": "rejected"}], subject="not pushed yet")
    by_url = _verify(gov, "--repo", f"file://{remote}")
    assert by_url.exit_code == 0 and "intact: 4 record(s)" in by_url.output, by_url.output
    assert "matches the checkpoint (record 4)" in by_url.output  # the pushed one; record 5 is local only
    assert _verify(gov).exit_code == 0  # the local branch: record 5 is the checkpoint
    missing = _verify(gov, "--repo", f"file://{tmp_path / 'nowhere.git'}")
    assert missing.exit_code == 1 and "could not read hypergov/audit" in missing.output


def test_audit_log_per_project_cluster_and_date(gov: Path) -> None:
    runner = CliRunner()
    speech = runner.invoke(main, ["audit", "log", "--project", "speech", "--json"], env=_env(gov))
    assert speech.exit_code == 0, speech.output
    assert [(r["seq"], r["type"]) for r in json.loads(speech.stdout)] == [(1, "intent"), (2, "outcome")]
    west = runner.invoke(main, ["audit", "log", "--cluster", "gpu-west"], env=_env(gov))
    assert [line.split()[0] for line in west.stdout.splitlines()] == ["3", "4"]
    assert "outcome" in west.stdout and "failed" in west.stdout
    future = runner.invoke(main, ["audit", "log", "--since", "2999-01-01", "--json"], env=_env(gov))
    assert future.exit_code == 0 and json.loads(future.stdout) == []
    bad = runner.invoke(main, ["audit", "log", "--since", "yesterday"], env=_env(gov))
    assert bad.exit_code == 1 and "Traceback" not in bad.output


def test_a_trail_of_the_flat_layout_continues_sharded_and_stays_intact(tmp_path: Path) -> None:
    """A trail written before the sharded layout (records flat in `records/`, as that version's
    writer made them) is read and continued where it is: the next record goes to its shard,
    `audit verify` finds the whole trail intact, and a flat record added after a sharded one is
    named."""
    root = tmp_path / "gov"
    git.Repo.init(root, initial_branch="main")
    (root / "config").mkdir()
    old = chained([{"type": "intent", "intent": "i1", "stacks": [{"stack": "org"}]},
                   {"type": "outcome", "intent": "i1", "stack": "org", "outcome": "applied"}], START)
    flat = {f"records/{r['seq']:08d}-{r['type']}-{r.get('stack') or 'pass'}.json": file_bytes(r) for r in old}
    _git(root, "update-ref", f"refs/heads/{BRANCH}", mallory_commit(root, flat, parent=None))
    log = AuditLog.open(root, state_dir=tmp_path / "state", branch=BRANCH)
    log.write([{"type": "intent", "intent": "i2", "stacks": [{"stack": "org"}]}], subject="intent")
    assert list(record_files(root)) == ["records/00000001-intent-pass.json", "records/00000002-outcome-org.json",
                                        "records/0000/00/00000003-intent-pass.json"]
    result = _verify(root)
    assert result.exit_code == 0, result.output
    assert "intact: 3 record(s)" in result.output
    late = chained([{"type": "outcome", "intent": "i2", "stack": "org", "outcome": "applied"}],
                   log.store.link_at(log.store.tip()))[0]
    tip = _git(root, "rev-parse", BRANCH)
    _git(root, "update-ref", f"refs/heads/{BRANCH}", mallory_commit(
        root, {**record_files(root), "records/00000004-outcome-org.json": file_bytes(late)}, parent=tip))
    result = _verify(root)
    assert result.exit_code == 1, result.output
    assert "records/00000004-outcome-org.json (record 4): a record in the legacy flat layout after records in the " \
           "sharded one" in result.output
