"""The Git host asks the same people change_control asks: for every path probed (each file of the
example tree, paths of a project the tree does not have yet, paths no rule matches), the owners of
the last matching CODEOWNERS line (read as the hosts document it: tests/core/codeowners_trees.py)
are the Git-host handles of the people `hypergov.change_control` requires. Rule sets with
overlapping globs, braces, `**`, a glob without `<project>` in a rule naming project roles, and a
rule with two globs that resolve differently check that last-match order is preserved."""

from __future__ import annotations

import pytest

from hypergov.change_control import required_approvals
from hypergov.codeowners import codeowners
from hypergov.model.tree import GovernanceTree
from tests.core.codeowners_trees import owners_of, with_rules
from tests.example_tree import example_files, example_tree

# Each principal of config/ and the handle the same file gives its persona (None: `[]`, no
# Git-host account), read from config/org.yaml and config/projects/*.yaml by hand.
HANDLE_OF = {
    "arn:aws:iam::111122223333:role/PlatformAdministrator": "@acme/ml-platform",
    "identitycenter:group/ml-platform-admins": "@acme/ml-platform",
    "arn:aws:iam::111122223333:role/nlp-lead": "@acme/nlp-leads",
    "identitycenter:user/ravi": "@acme/nlp-leads",
    "identitycenter:group/nlp-engineers": "@acme/nlp-engineers",
    "arn:aws:iam::111122223333:role/recsys-lead": "@acme/recsys-leads",
    "arn:aws:iam::111122223333:user/bob": "@acme/recsys-engineers",
    "arn:aws:iam::111122223333:user/chen": "@acme/recsys-engineers",
    "arn:aws:iam::444455556666:role/research-lead": "@acme/research-leads",
    "identitycenter:group/research-scientists": "@acme/research-scientists",
    "identitycenter:group/research-interns": "@acme/research-interns",
    "arn:aws:iam::111122223333:role/speech-lead": "@acme/speech-leads",
    "identitycenter:group/speech-engineers": "@acme/speech-engineers",
    "identitycenter:group/support": None,
    "arn:aws:iam::111122223333:role/vision-lead": "@acme/vision-leads",
    "identitycenter:group/vision-engineers": "@acme/vision-engineers",
    "arn:aws:iam::111122223333:user/alice": "alice@example.com",
    "identitycenter:group/finance-analysts": None,
}
MORE_PATHS = ("projects/audio.yaml", "workloads/audio/train.yaml", "README.md", "workloads/vision/deep/x.yaml",
              "clusters/new.yaml", "notes/a/b.txt", "x.yaml", "workloads/x.yaml", "projects/vision.yml")

OVERLAPPING = """\
  - paths: ["**"]
    owners: ['@acme/auditors']
  - paths: ["{clusters,projects}/*.yaml"]
    owners: [platform-admins, sre@example.com]
  - paths: ["projects/<project>.yaml", "projects/*.yaml"]
    owners: [project-leads]
  - paths: ["workloads/**/*.yaml"]
    owners: [project-members]
  - paths: ["workloads/<project>/**"]
    owners: [project-members, '@acme/auditors']
  - paths: ["org.yaml"]
    owners: ['@acme/security']
"""
# Two globs of one rule that read different projects out of one path: `workloads/xvision/b.yaml`
# is project `xvision` (not in the tree: the platform admins) by the first glob and `vision` (its
# leads) by the second; change_control takes the first glob that matches.
FIRST_GLOB_WINS = """\
  - paths: ["workloads/<project>/*.yaml", "workloads/x<project>/*.yaml"]
    owners: [project-leads]
  - paths: ["workloads/<project>/a.yaml"]
    owners: ['@acme/auditors']
"""


def _expected(path: str, tree: GovernanceTree) -> tuple[str, ...]:
    files = example_files()
    head = {**files, path: files.get(path, b"") + b"# changed\n"}
    (approval,) = required_approvals(files, head, tree)
    handles = [HANDLE_OF.get(owner, owner) for owner in approval.owners]
    return tuple(dict.fromkeys(h for h in handles if h is not None))


@pytest.mark.parametrize("tree_dir", [pytest.param("config", id="in-a-folder"), pytest.param("", id="at-the-root")])
@pytest.mark.parametrize("rules", [pytest.param(None, id="example"), pytest.param(OVERLAPPING, id="overlapping"),
                                   pytest.param(FIRST_GLOB_WINS, id="first-glob-of-a-rule-wins")])
def test_every_path_gets_the_handles_of_the_people_change_control_asks(rules: str | None, tree_dir: str) -> None:
    tree = example_tree() if rules is None else with_rules(rules)
    text = codeowners(tree, host="github", tree_dir=tree_dir, path=".github/CODEOWNERS").text()
    prefix = f"{tree_dir}/" if tree_dir else ""
    probed = [*sorted(example_files()), *MORE_PATHS, "workloads/xvision/a.yaml", "workloads/xvision/b.yaml",
              "workloads/xaudio/a.yaml"]
    for path in probed:
        assert owners_of(text, prefix + path) == _expected(path, tree), path
    assert owners_of(text, ".github/CODEOWNERS") == _expected("org.yaml", tree)  # the file: org.yaml's owners
