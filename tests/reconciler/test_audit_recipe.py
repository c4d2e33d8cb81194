"""The README's hand recipe for one link of the audit chain, run exactly as printed there (the
two `git show` lines are read out of README.md) with bash, git, head and sha256sum: the hash of
record 1's file without its final newline is record 2's `prev`. An auditor needs nothing of
hypergov to check a link; and if the README's recipe or the chain's definition drift apart,
this fails."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import git

from reconciler.audit import AuditLog

README = Path(__file__).resolve().parents[2] / "README.md"


def _recipe() -> list[str]:
    block = re.search(r"```sh\n(git show hypergov/audit:records/0000/00/00000001.*?)```", README.read_text(), re.DOTALL)
    assert block is not None, "README.md lost the hand recipe for a chain link"
    return [line.split("   #")[0].strip() for line in block.group(1).splitlines() if line.startswith("git show")]


def test_the_readme_recipe_reproduces_a_chain_link(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path, initial_branch="main")
    (tmp_path / "org.yaml").write_text("name: acme\n")
    repo.index.add(["org.yaml"])
    repo.index.commit("tree")
    log = AuditLog.open(tmp_path, state_dir=tmp_path / ".state", branch="hypergov/audit")
    log.write([{"type": "intent", "intent": "i1", "stacks": [{"stack": "project-speech"}]}], subject="intent")
    log.write([{"type": "outcome", "intent": "i1", "stack": "project-speech", "outcome": "applied",
                "note": "non-ASCII stays UTF-8: \u00e9\u00e8"}], subject="outcome")
    hashed, prev = _recipe()
    digest = subprocess.run(["bash", "-c", hashed], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    named = subprocess.run(["bash", "-c", prev], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert re.fullmatch(r"[0-9a-f]{64}  -\n", digest), digest
    assert named.strip() == f'"prev":"{digest.split()[0]}"'
    # and a record whose file was changed by one byte no longer matches the next record's prev
    changed = subprocess.run(["bash", "-c", hashed.replace("head -c -1", "head -c -2")], cwd=tmp_path,
                             capture_output=True, text=True, check=True).stdout
    assert changed.split()[0] != digest.split()[0]
