"""The example tree's declared AWS objects created on the embedded endpoint with boto3, request by
request as terraform's AWS provider creates them (the calls its resources' Create functions make,
with the arguments it maps from the same inputs), so a scan of the result must report nothing.

Only the types the live scan of EKS, Organizations, Budgets and SNS compares are applied, plus
the IAM roles EKS access entries need to exist (and, for the entries of Identity Center members,
the permission sets and assignments that make Identity Center provision their roles).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from benchmarks.live_seed import seed_live_state
from embedded_aws import DEFAULT_ACCOUNT, EmbeddedAws, seed_tree_clusters
from embedded_aws.seed_identity import seed_identity_center
from embedded_aws.seed_org import seed_organization
from engines.desired import DesiredObject
from engines.live.items import LiveScan
from engines.live.lookups import read_lookups, resolved
from engines.live.runner import CallCounter, ScanContext, ScanUnit, run_units
from engines.live.scan import scan_context
from tests.example_tree import example_tree

ORG_REGION = "us-east-1"  # Organizations is global; the provider signs it in us-east-1


@dataclass(frozen=True)
class Applied:
    context: ScanContext
    policy_ids: dict[str, str]  # organizations policy logical name -> its id


def applied_example(aws: EmbeddedAws, *, types: Iterable[str]) -> Applied:
    """A fresh endpoint holding the example tree's clusters, organization and OU, and its declared
    objects of `types` (in dependency order: roles, topics, policies, then what refers to them)."""
    aws.reset()
    context = example_context()
    seed_tree_clusters(context.tree, aws)
    seed_organization(context.tree, aws)
    seed_identity_center(context.tree, aws)  # only when org.yaml has `identity_center`
    wanted = frozenset(types)
    policy_ids: dict[str, str] = {}
    if "aws:eks/accessEntry:AccessEntry" in wanted:
        context = _with_identity_center(aws, context)
    order = ("aws:iam/role:Role", "aws:sns/topic:Topic", "aws:sns/topicPolicy:TopicPolicy",
             "aws:organizations/policy:Policy", "aws:organizations/policyAttachment:PolicyAttachment",
             "aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
             "aws:budgets/budget:Budget")
    for type_token in order:
        if type_token not in wanted:
            continue
        for obj in (o for o in context.desired if o.type == type_token):
            client = aws.client(_SERVICE[type_token], account=context.account_of(obj) or DEFAULT_ACCOUNT,
                                region=ORG_REGION if "organizations" in type_token else obj.region)
            _CREATE[type_token](client, obj, policy_ids)
    return Applied(context=context, policy_ids=policy_ids)


def _with_identity_center(aws: EmbeddedAws, context: ScanContext) -> ScanContext:
    """The permission sets (and the boundary policy they reference) with their assignments, which
    make Identity Center provision the roles the `access-sso-*` entries name; the context with
    those roles' ARNs (and the members' ids) read back, as the scan reads them."""
    def client_for(service: str, account: str | None, region: str) -> Any:
        return aws.client(service, account=account or DEFAULT_ACCOUNT, region=region)

    seed_live_state([o for o in context.desired if o.type in IDENTITY_CENTER_TYPES], [], client_for,
                    management_account=DEFAULT_ACCOUNT, threads=2, lookups=context.lookups)
    results, failures = read_lookups(context.lookups, client_for, CallCounter())
    assert not failures, failures
    return replace(context, desired=resolved(context.desired, results))


IDENTITY_CENTER_TYPES = frozenset({
    "aws:iam/policy:Policy", "aws:ssoadmin/permissionSet:PermissionSet",
    "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy",
    "aws:ssoadmin/permissionsBoundaryAttachment:PermissionsBoundaryAttachment",
    "aws:ssoadmin/accountAssignment:AccountAssignment"})


@functools.cache
def example_context() -> ScanContext:
    """The example tree's scan context, its graphs captured once per test session."""
    return scan_context(example_tree(), cache_dir=None, caller_account=DEFAULT_ACCOUNT)


def _role(iam: Any, obj: DesiredObject, _: dict[str, str]) -> None:
    iam.create_role(RoleName=obj.input("name"), Path=obj.input("path") or "/",
                    AssumeRolePolicyDocument=obj.input("assumeRolePolicy"))


def _topic(sns: Any, obj: DesiredObject, _: dict[str, str]) -> None:
    tags = [{"Key": k, "Value": v} for k, v in sorted((obj.input("tags") or {}).items())]
    sns.create_topic(Name=obj.input("name"), Tags=tags)


def _topic_policy(sns: Any, obj: DesiredObject, _: dict[str, str]) -> None:
    sns.set_topic_attributes(TopicArn=obj.input("arn"), AttributeName="Policy", AttributeValue=obj.input("policy"))


def _org_policy(org: Any, obj: DesiredObject, ids: dict[str, str]) -> None:
    tags = [{"Key": k, "Value": v} for k, v in sorted((obj.input("tags") or {}).items())]
    created = org.create_policy(Name=obj.input("name"), Type=obj.input("type") or "SERVICE_CONTROL_POLICY",
                                Content=obj.input("content"), Description=obj.input("description") or "", Tags=tags)
    ids[obj.name] = created["Policy"]["PolicySummary"]["Id"]


def _org_attachment(org: Any, obj: DesiredObject, ids: dict[str, str]) -> None:
    reference = str(obj.input("policyId"))  # "<id:scp>": the id of the policy named scp
    org.attach_policy(PolicyId=ids[reference.removeprefix("<id:").removesuffix(">")], TargetId=obj.input("targetId"))


def _access_entry(eks: Any, obj: DesiredObject, _: dict[str, str]) -> None:
    request = {"clusterName": obj.input("clusterName"), "principalArn": obj.input("principalArn"),
               "type": obj.input("type") or "STANDARD", "tags": obj.input("tags") or {}}
    if obj.input("kubernetesGroups"):
        request["kubernetesGroups"] = obj.input("kubernetesGroups")
    eks.create_access_entry(**request)


def _association(eks: Any, obj: DesiredObject, _: dict[str, str]) -> None:
    scope = obj.input("accessScope")
    eks.associate_access_policy(clusterName=obj.input("clusterName"), principalArn=obj.input("principalArn"),
                                policyArn=obj.input("policyArn"),
                                accessScope={"type": scope["type"], "namespaces": scope.get("namespaces", [])})


def _budget(budgets: Any, obj: DesiredObject, _: dict[str, str]) -> None:
    """resourceBudgetCreate: CreateBudget (CostFilters as a map, the provider's default CostTypes),
    then CreateNotification per notification block with its subscribers."""
    budget = {"BudgetName": obj.input("name"), "BudgetType": obj.input("budgetType"),
              "BudgetLimit": {"Amount": obj.input("limitAmount"), "Unit": obj.input("limitUnit")},
              "TimeUnit": obj.input("timeUnit"),
              "CostFilters": {f["name"]: list(f["values"]) for f in obj.input("costFilters") or []}}
    tags = [{"Key": k, "Value": v} for k, v in sorted((obj.input("tags") or {}).items())]
    budgets.create_budget(AccountId=obj.input("accountId"), Budget=budget, ResourceTags=tags)
    for n in obj.input("notifications") or []:
        subscribers = [{"SubscriptionType": "SNS", "Address": a} for a in n.get("subscriberSnsTopicArns", [])]
        subscribers += [{"SubscriptionType": "EMAIL", "Address": a} for a in n.get("subscriberEmailAddresses", [])]
        budgets.create_notification(
            AccountId=obj.input("accountId"), BudgetName=obj.input("name"),
            Notification={"NotificationType": n["notificationType"], "ComparisonOperator": n["comparisonOperator"],
                          "Threshold": float(n["threshold"]), "ThresholdType": n.get("thresholdType", "PERCENTAGE")},
            Subscribers=subscribers)


_SERVICE = {"aws:iam/role:Role": "iam", "aws:sns/topic:Topic": "sns", "aws:sns/topicPolicy:TopicPolicy": "sns",
            "aws:organizations/policy:Policy": "organizations",
            "aws:organizations/policyAttachment:PolicyAttachment": "organizations",
            "aws:eks/accessEntry:AccessEntry": "eks", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": "eks",
            "aws:budgets/budget:Budget": "budgets"}
_CREATE = {"aws:iam/role:Role": _role, "aws:sns/topic:Topic": _topic, "aws:sns/topicPolicy:TopicPolicy": _topic_policy,
           "aws:organizations/policy:Policy": _org_policy,
           "aws:organizations/policyAttachment:PolicyAttachment": _org_attachment,
           "aws:eks/accessEntry:AccessEntry": _access_entry,
           "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": _association,
           "aws:budgets/budget:Budget": _budget}


def scan_service(aws: EmbeddedAws, units_of: Callable[[ScanContext], list[ScanUnit]], context: ScanContext,
                 stacks: Sequence[str] = ("org",)) -> LiveScan:
    """One service's units run against the endpoint (the caller's account is the management one)."""
    return run_units(units_of(context), lambda s, a, r: aws.client(s, account=a or DEFAULT_ACCOUNT, region=r),
                     stacks=list(stacks))
