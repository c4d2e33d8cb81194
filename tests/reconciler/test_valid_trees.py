"""A merge request's base known to pass every rule (`reconciler.valid_trees`): checked once per
tree and code version, with a real Git repository holding the example tree. The rules are counted
where they run (`hypergov.validate.run_rules`); what the skipped check would have said is shown by
the tree that fails: never remembered, refused every time."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

import hypergov.validate
import reconciler.valid_trees
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem
from reconciler.merge_request_plan import BaseTreeInvalidError, validated_base_and_head
from reconciler.valid_trees import known_valid
from tests.example_tree import example_files

NLP = "projects/nlp.yaml"


def _write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / "config" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "config" / rel).write_bytes(data)


def _commit(repo: git.Repo, message: str) -> None:
    repo.git.add("-A")
    repo.index.commit(message)


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    root = tmp_path / "gov"
    repo = git.Repo.init(root, initial_branch="main")
    _write(root, example_files())
    _commit(repo, "the example tree")
    return repo


@pytest.fixture
def rules_run(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many trees the rules ran on."""
    runs: list[int] = []
    real = hypergov.validate.run_rules

    def counted(tree: GovernanceTree) -> list[Problem]:
        runs.append(1)
        return real(tree)

    monkeypatch.setattr(hypergov.validate, "run_rules", counted)
    return runs


def _edit_weight(root: Path, weight: int) -> None:
    path = root / "config" / NLP
    path.write_text(path.read_text().replace("fair_share_weight: 40", f"fair_share_weight: {weight}"))


def test_a_base_that_passed_is_loaded_without_its_rules(repo: git.Repo, tmp_path: Path, rules_run: list[int]) -> None:
    root, valid = Path(repo.working_dir), tmp_path / "state" / "valid-trees"
    _edit_weight(root, 41)
    first = validated_base_and_head(root / "config", "main", valid_trees=valid)
    assert len(rules_run) == 2  # head and base
    again = validated_base_and_head(root / "config", "main", valid_trees=valid)
    assert len(rules_run) == 3  # the head only
    assert again[2].ok and again[2].tree.projects.keys() == first[2].tree.projects.keys()
    assert again[2].tree.projects["nlp"].model.fair_share_weight == 40  # the base, loaded all the same
    _commit(repo, "the merge request merged")  # the head checked above is now the base
    _edit_weight(root, 42)
    validated_base_and_head(root / "config", "main", valid_trees=valid)
    assert len(rules_run) == 4


def test_a_base_that_fails_is_refused_every_time_and_never_remembered(repo: git.Repo, tmp_path: Path,
                                                                      rules_run: list[int]) -> None:
    root, valid = Path(repo.working_dir), tmp_path / "state" / "valid-trees"
    _edit_weight(root, 1000)  # FairShareWeight is 0-100 (SageMaker API Reference, ComputeQuotaTarget)
    _commit(repo, "an invalid tree pushed to main")
    base_files = {rel: (root / "config" / rel).read_bytes() for rel in example_files()}
    (root / "config" / NLP).write_bytes(example_files()[NLP])  # the merge request fixes it
    for _ in range(2):
        with pytest.raises(BaseTreeInvalidError):
            validated_base_and_head(root / "config", "main", valid_trees=valid)
    assert len(rules_run) == 4
    assert not known_valid(valid, base_files)


def test_other_code_checks_again(repo: git.Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 rules_run: list[int]) -> None:
    root, valid = Path(repo.working_dir), tmp_path / "state" / "valid-trees"
    files = {rel: (root / "config" / rel).read_bytes() for rel in example_files()}  # main's
    _edit_weight(root, 41)
    validated_base_and_head(root / "config", "main", valid_trees=valid)
    assert known_valid(valid, files)
    monkeypatch.setattr(reconciler.valid_trees, "code_digest", lambda: "another version of the rules")
    assert not known_valid(valid, files)
    validated_base_and_head(root / "config", "main", valid_trees=valid)
    assert len(rules_run) == 4  # both trees checked again by the other code
