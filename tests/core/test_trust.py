"""Trust stays inside the organization (IDN009): every principal field of the tree, in every
place it occurs, is checked against the org's accounts, its partition and the explicitly trusted
external accounts; Identity Center principals are the org's by construction."""

from __future__ import annotations

import pytest

from hypergov.problems import Problem
from hypergov.rules.trust import named_principals
from hypergov.validate import validate_files
from tests.example_tree import example_files

OUTSIDER = "arn:aws:iam::999988887777:role/outsider"
TRUSTED = 'trusted_external_accounts:\n  - id: "999988887777"\n    reason: the central identity account\n'


def _edit(files: dict[str, bytes], path: str, old: str, new: str) -> dict[str, bytes]:
    text = files[path].decode()
    assert text.count(old) == 1, (path, old)
    return {**files, path: text.replace(old, new).encode()}


def _idn009(files: dict[str, bytes]) -> list[Problem]:
    report = validate_files(files)
    others = [p for p in report.problems if p.rule != "IDN009"]
    assert not others, others
    return [p for p in report.problems if p.rule == "IDN009"]


# (file, the line naming a principal, how it reads with the outsider instead)
PLACES = [
    ("org.yaml", "  - arn:aws:iam::111122223333:role/PlatformAdministrator\n", f"  - {OUTSIDER}\n"),
    ("clusters/gpu-west.yaml", "owner: arn:aws:iam::111122223333:role/PlatformAdministrator",
     f"owner: {OUTSIDER}"),
    ("projects/vision.yaml", "    - arn:aws:iam::111122223333:role/vision-lead", f"    - {OUTSIDER}"),
    ("projects/vision.yaml", "    - arn:aws:iam::111122223333:user/alice",
     "    - arn:aws:iam::999988887777:user/alice"),
    ("projects/vision.yaml", "    - identitycenter:group/finance-analysts", f"    - {OUTSIDER}"),
]


@pytest.mark.parametrize(("path", "old", "new"), PLACES)
def test_an_outsider_is_refused_wherever_a_principal_is_named(path: str, old: str, new: str) -> None:
    files = _edit(example_files(), path, old, new)
    problems = _idn009(files)
    assert len(problems) == 1
    line = files[path].decode().split("\n").index(new.rstrip("\n")) + 1
    assert problems[0].pos.file == f"config/{path}" and problems[0].pos.line == line
    assert "999988887777" in problems[0].message and "trusted_external_accounts" in problems[0].hint


@pytest.mark.parametrize(("path", "old", "new"), PLACES)
def test_a_trusted_external_account_is_accepted_everywhere(path: str, old: str, new: str) -> None:
    files = _edit(example_files(), path, old, new)
    files = _edit(files, "org.yaml", "\n# The maximum any", f"\n{TRUSTED}\n# The maximum any")
    report = validate_files(files)
    assert report.ok and not report.problems, report.problems


def test_every_principal_field_is_visited() -> None:
    tree = validate_files(example_files()).tree
    seen = [(n.what, n.principal) for n in named_principals(tree)]
    assert ("platform admin", "identitycenter:group/ml-platform-admins") in seen
    assert ("owner of cluster 'trn-east'", "arn:aws:iam::444455556666:role/PlatformAdministrator") in seen
    assert ("Engineer of project 'vision'", "arn:aws:iam::111122223333:user/alice") in seen
    assert ("ProjectLead of project 'nlp'", "identitycenter:user/ravi") in seen
    members = sum(len(p.model.members.of(persona)) for p in tree.projects.values()
                  for persona in ("ProjectLead", "Engineer", "Viewer"))
    assert len(seen) == len(tree.org.model.platform_admins) + len(tree.clusters) + members  # type: ignore[union-attr]


@pytest.mark.parametrize("partition", ["aws-cn", "aws-us-gov"])
def test_another_partition_is_refused_even_for_a_trusted_account(partition: str) -> None:
    files = _edit(example_files(), "projects/vision.yaml", "    - arn:aws:iam::111122223333:user/alice",
                  f"    - arn:{partition}:iam::999988887777:user/alice")
    files = _edit(files, "org.yaml", "\n# The maximum any", f"\n{TRUSTED}\n# The maximum any")
    (problem,) = _idn009(files)
    assert f"partition '{partition}'" in problem.message


def test_an_org_in_another_partition_trusts_its_own() -> None:
    files = _edit(example_files(), "org.yaml", "partition: aws\n", "partition: aws-cn\n")
    problems = _idn009(files)
    # every IAM ARN of the example is in the aws partition; Identity Center principals are not ARNs
    iam = [n for n in named_principals(validate_files(example_files()).tree) if n.principal.startswith("arn:")]
    assert len(problems) == len(iam) and all("partition 'aws'" in p.message for p in problems)


@pytest.mark.parametrize(("entry", "field"), [
    ('  - id: "999988887777"\n', "reason"),
    ('  - id: "999988887777"\n    reason: "   "\n', "reason"),
    ("  - id: 999988887777\n    reason: x\n", "id"),
    ('  - id: "99998888777"\n    reason: x\n', "id"),
    ('  - id: "999988887777"\n    reason: x\n    until: 2027\n', "until"),
])
def test_trusted_external_accounts_are_strict(entry: str, field: str) -> None:
    files = _edit(example_files(), "org.yaml", "\n# The maximum any",
                  f"\ntrusted_external_accounts:\n{entry}\n# The maximum any")
    report = validate_files(files)
    assert not report.ok
    assert {p.rule for p in report.problems} <= {"SCH001", "SCH002", "SCH003", "SCH004"}
    assert any(field in p.message for p in report.problems), report.problems
