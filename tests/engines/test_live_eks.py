"""The live scan of EKS access entries and access policy associations.

Pure: declared objects as the stacks capture them, live entries shaped as DescribeAccessEntry and
ListAssociatedAccessPolicies return them (botocore's `AccessEntry` and `AssociatedAccessPolicy`).
Against the embedded endpoint: the example tree's entries created as terraform's provider creates
them, then changed out of band with boto3. Expected values are written from the config files and
the EKS API reference."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from botocore.config import Config

from embedded_aws import EmbeddedAws
from engines.desired import DesiredObject
from engines.live import eks_read
from engines.live.eks import ASSOCIATION, ENTRY, GovernedEksCluster, LiveEntry, LivePolicy, compare
from engines.live.items import AttributeDrift, LiveScan
from engines.live.runner import CallCounter, run_units
from tests.engines.live_apply import applied_example

PROD = "111122223333"
NLP_LEAD = f"arn:aws:iam::{PROD}:role/hypergov/acme-nlp-lead"
VIEW = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
ADMIN = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
NLP_GROUP = "hyperpod-ns-nlp-lead-group"  # naming.persona_group("nlp", "ProjectLead")
STACKS = frozenset({"org", "cluster-gpu-west", "project-nlp", "project-vision"})


def declared(type_token: str, name: str, stack: str, address: str, **inputs: Any) -> DesiredObject:
    return DesiredObject(stack=stack, type=type_token, name=name, address=address, account=PROD, region="us-west-2",
                         inputs={"clusterName": "gpu-west-eks", **inputs}, property_dependencies={})


LEAD_ENTRY = declared(ENTRY, "access-lead@gpu-west", "project-nlp", "aws_eks_access_entry.access-lead_gpu-west",
                      principalArn=NLP_LEAD, kubernetesGroups=[NLP_GROUP], type="STANDARD",
                      tags={"Project": "nlp", "hypergov:org": "acme"})
LEAD_POLICY = declared(ASSOCIATION, "access-policy-lead@gpu-west", "project-nlp",
                       "aws_eks_access_policy_association.access-policy-lead_gpu-west", principalArn=NLP_LEAD,
                       policyArn=VIEW, accessScope={"namespaces": ["hyperpod-ns-nlp"], "type": "namespace"})
CLUSTER = GovernedEksCluster(cluster_name="gpu-west-eks", account=PROD, region="us-west-2", cluster="gpu-west",
                             entries={NLP_LEAD: LEAD_ENTRY}, associations={(NLP_LEAD, VIEW): LEAD_POLICY},
                             stacks=STACKS)


def live(principal: str = NLP_LEAD, *, groups: tuple[str, ...] = (NLP_GROUP,), entry_type: str = "STANDARD",
         policies: tuple[LivePolicy, ...] = (LivePolicy(VIEW, "namespace", ("hyperpod-ns-nlp",)),),
         tags: dict[str, str] | None = None) -> LiveEntry:
    """As EKS returns it: a username EKS made up, the modification time."""
    return LiveEntry(principal_arn=principal, type=entry_type, kubernetes_groups=groups,
                     username=f"arn:aws:sts::{PROD}:assumed-role/x/{{{{SessionName}}}}",
                     tags={"hypergov:org": "acme", "Project": "nlp"} if tags is None else tags,
                     modified_at="2025-03-04T10:30:00+00:00", policies=policies)


def test_an_entry_as_declared_is_no_drift_whatever_eks_fills_in() -> None:
    assert compare(CLUSTER, [live()]) == []


def test_changed_groups_name_the_input_with_both_values_and_when() -> None:
    (item,) = compare(CLUSTER, [live(groups=(NLP_GROUP, "cluster-admins"))])
    assert (item.kind, item.stack, item.address, item.cluster) == (
        "changed", "project-nlp", "aws_eks_access_entry.access-lead_gpu-west", "gpu-west")
    assert item.attributes == (AttributeDrift("kubernetesGroups", [NLP_GROUP], ["cluster-admins", NLP_GROUP]),)
    assert item.changed_at == "2025-03-04T10:30:00+00:00"


def test_a_deleted_entry_is_missing_with_its_association() -> None:
    items = compare(CLUSTER, [])
    assert [(i.kind, i.address) for i in items] == [
        ("missing", "aws_eks_access_entry.access-lead_gpu-west"),
        ("missing", "aws_eks_access_policy_association.access-policy-lead_gpu-west")]
    assert items[0].fix == "hypergov apply --stack project-nlp recreates it"


def test_a_widened_scope_is_a_changed_association() -> None:
    (item,) = compare(CLUSTER, [live(policies=(LivePolicy(VIEW, "cluster", ()),))])
    assert (item.kind, item.type) == ("changed", ASSOCIATION)
    assert item.attributes == (AttributeDrift("accessScope", {"type": "namespace", "namespaces": ["hyperpod-ns-nlp"]},
                                              {"type": "cluster", "namespaces": []}),)


@pytest.mark.parametrize(("entry", "stack"), [
    pytest.param(live(f"arn:aws:iam::{PROD}:role/alice", policies=()), "project-nlp", id="into-a-team-group"),
    pytest.param(live(f"arn:aws:iam::{PROD}:role/bob", groups=(),
                      policies=(LivePolicy(VIEW, "namespace", ("hyperpod-ns-vision",)),)),
                 "project-vision", id="policy-in-a-team-namespace"),
    pytest.param(live(f"arn:aws:iam::{PROD}:role/hypergov/acme-x-lead", groups=(), policies=()), "org",
                 id="a-hypergov-role"),
    pytest.param(live(f"arn:aws:iam::{PROD}:role/carol", groups=("hyperpod-ns-gone-engineer-group",),
                      policies=()), "org", id="group-of-a-team-the-tree-lacks"),
    pytest.param(live(f"arn:aws:iam::{PROD}:role/dave", groups=("hyperpod-ns-vision-engineer-group",),
                      policies=()), "project-vision", id="into-hyperpods-own-team-group"),
])
def test_undeclared_entries_reaching_hypergov_objects_are_unmanaged(entry: LiveEntry, stack: str) -> None:
    (item,) = compare(CLUSTER, [live(), entry])
    assert (item.kind, item.stack, item.type, item.cluster) == ("unmanaged", stack, ENTRY, "gpu-west")
    assert item.ref == {"clusterName": "gpu-west-eks", "principalArn": entry.principal_arn}
    assert item.attributes[0] == AttributeDrift("principalArn", None, entry.principal_arn)


def test_the_cluster_creator_and_node_entries_are_left_alone() -> None:
    creator = live(f"arn:aws:iam::{PROD}:role/PlatformAdministrator", groups=(),
                   policies=(LivePolicy(ADMIN, "cluster", ()),))
    node = live(f"arn:aws:iam::{PROD}:role/gpu-west-node", groups=(), entry_type="EC2_LINUX", policies=())
    assert compare(CLUSTER, [live(), creator, node]) == []


def test_a_policy_added_to_a_declared_entry_is_unmanaged_in_its_stack() -> None:
    extra = LivePolicy(ADMIN, "cluster", ())
    (item,) = compare(CLUSTER, [live(policies=(LivePolicy(VIEW, "namespace", ("hyperpod-ns-nlp",)), extra))])
    assert (item.kind, item.stack, item.type) == ("unmanaged", "project-nlp", ASSOCIATION)
    assert item.ref == {"clusterName": "gpu-west-eks", "principalArn": NLP_LEAD, "policyArn": ADMIN}


# --- against the embedded endpoint ----------------------------------------------------------------

TYPES = ("aws:iam/role:Role", ENTRY, ASSOCIATION)
ONE_TRY = Config(retries={"mode": "standard", "total_max_attempts": 1})


def scan(aws: EmbeddedAws, units: list[Any]) -> LiveScan:
    return run_units(units, lambda s, a, r: aws.client(s, account=a or "", region=r, config=ONE_TRY), stacks=["org"])


def eks_calls(aws: EmbeddedAws) -> Counter[str]:
    return Counter(c["operation"] for c in aws.calls() if c["service"] == "eks")


def by_hand_role(aws: EmbeddedAws, name: str, *, path: str = "/") -> str:
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                      "Principal": {"Service": "ec2.amazonaws.com"}}]}
    iam = aws.client("iam", account=PROD, region="us-west-2")
    return str(iam.create_role(RoleName=name, Path=path, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"])


def test_after_an_apply_the_scan_is_clean_with_calls_per_entry_only_as_eks_forces(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    eks = aws.client("eks", account=PROD, region="us-west-2")
    eks.create_access_entry(clusterName="gpu-west-eks", principalArn=by_hand_role(aws, "gpu-west-node"),
                            type="EC2_LINUX")  # as EKS makes it for a node group: not hypergov's
    aws.clear_calls()
    result = scan(aws, eks_read.units(applied.context))
    assert (result.items, result.complete) == ((), True)
    # An entry per IAM role of a persona with IAM members, and per permission set's role of a persona
    # with Identity Center members (config/): gpu-west: org 2 (the role, the admins' set) + nlp 3
    # (lead role and set, engineer set) + recsys 2 + speech 3 (lead role, engineer and viewer sets)
    # + vision 4 (lead role, engineer role and set, viewer set) + the node's; trn-east: org 2 +
    # nlp 3 + research 3 (lead role, engineer and viewer sets).
    assert eks_calls(aws) == {"ListAccessEntries": 2, "DescribeAccessEntry": 23, "ListAssociatedAccessPolicies": 22}
    assert result.api_calls == 47


def test_out_of_band_changes_are_found_and_pruning_removes_only_the_unmanaged(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    eks = aws.client("eks", account=PROD, region="us-west-2")
    eks.delete_access_entry(clusterName="gpu-west-eks", principalArn=NLP_LEAD)
    alice = by_hand_role(aws, "alice")
    eks.create_access_entry(clusterName="gpu-west-eks", principalArn=alice, kubernetesGroups=[NLP_GROUP])
    vision_engineer = f"arn:aws:iam::{PROD}:role/hypergov/acme-vision-engineer"
    eks.update_access_entry(clusterName="gpu-west-eks", principalArn=vision_engineer,
                            kubernetesGroups=["hyperpod-ns-vision-engineer-group", "ops"])
    result = scan(aws, eks_read.units(applied.context))
    assert [(i.kind, i.stack, i.address) for i in result.items] == [
        ("missing", "project-nlp", "aws_eks_access_entry.access-lead_gpu-west"),
        ("unmanaged", "project-nlp", "aws_eks_access_entry.alice_gpu-west"),
        ("missing", "project-nlp", "aws_eks_access_policy_association.access-policy-lead_gpu-west"),
        ("changed", "project-vision", "aws_eks_access_entry.access-engineer_gpu-west")]  # by stack, address
    changed = result.items[3]
    assert changed.attributes == (AttributeDrift("kubernetesGroups", ["hyperpod-ns-vision-engineer-group"],
                                                 ["hyperpod-ns-vision-engineer-group", "ops"]),)
    assert (changed.account, changed.region, changed.cluster) == (PROD, "us-west-2", "gpu-west")
    assert changed.changed_at is not None
    unmanaged = result.items[1]
    assert unmanaged.attributes[:2] == (AttributeDrift("principalArn", None, alice),
                                        AttributeDrift("kubernetesGroups", None, [NLP_GROUP]))

    eks_read.PRUNERS[unmanaged.type].delete(eks, unmanaged, CallCounter())
    after = scan(aws, eks_read.units(applied.context))
    assert [i.kind for i in after.items] == ["missing", "missing", "changed"]
    assert alice not in eks.list_access_entries(clusterName="gpu-west-eks")["accessEntries"]


def test_an_undeclared_policy_on_a_declared_entry_is_disassociated_by_the_pruner(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    eks = aws.client("eks", account=PROD, region="us-west-2")
    eks.associate_access_policy(clusterName="gpu-west-eks", principalArn=NLP_LEAD, policyArn=ADMIN,
                                accessScope={"type": "cluster"})
    (item,) = scan(aws, eks_read.units(applied.context)).items
    assert (item.kind, item.type, item.stack) == ("unmanaged", ASSOCIATION, "project-nlp")
    eks_read.PRUNERS[item.type].delete(eks, item, CallCounter())
    assert scan(aws, eks_read.units(applied.context)).items == ()
    policies = eks.list_associated_access_policies(clusterName="gpu-west-eks", principalArn=NLP_LEAD)
    assert [p["policyArn"] for p in policies["associatedAccessPolicies"]] == [VIEW]


def test_entries_are_listed_in_pages(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    applied = applied_example(aws, types=TYPES)
    monkeypatch.setattr(eks_read, "PAGE_SIZE", 2)
    aws.clear_calls()
    assert scan(aws, eks_read.units(applied.context)).items == ()
    assert eks_calls(aws)["ListAccessEntries"] == 7 + 4  # gpu-west 14 entries, trn-east 8; 2 a page


def test_a_throttled_cluster_makes_the_scan_incomplete(aws: EmbeddedAws) -> None:
    applied = applied_example(aws, types=TYPES)
    aws.inject_fault("eks", "ListAccessEntries", kind="throttle", times=1)
    try:
        result = run_units(eks_read.units(applied.context)[:1],
                           lambda s, a, r: aws.client(s, account=a or "", region=r, config=ONE_TRY), stacks=["org"])
    finally:
        aws.clear_faults()
    (failure,) = result.failures
    assert (failure.stack, failure.failure.kind) == ("cluster-gpu-west", "temporary")
