"""IAM, SCP and tag-policy documents built from the config: pure functions, so the governance
properties (boundary = SCP, no grant outside the boundary) are tested on plain dicts.

**SCP.** An SCP constrains every principal of the OU, the platform administrators and hypergov's
own deployer included, so a literal copy of the boundary would lock them out (the boundary denies
`iam:*`). The SCP therefore applies the boundary to the principals it is meant for, the roles
hypergov makes (all under the IAM path `/hypergov/`): deny everything outside `allow`
(`NotAction`) and everything in `deny`, when `aws:PrincipalArn` is such a role. It uses only Deny
statements, which every SCP evaluation mode supports; the OU keeps its FullAWSAccess allow.

**Trust.** A role trusts exactly the IAM users and roles its persona names, by ARN. No role
trusts an IAM Identity Center principal: Identity Center members reach a persona through its own
permission set (`components.identity_center`), whose provisioned role carries the persona's policy
and the boundary itself. Trusting them here would mean matching `AWSReservedSSO_<name>_*` role
names, which any permission set whose name starts the same way also matches.

**Role policies (least privilege, ABAC).** Each action a persona gets falls in one of three scopes:
- *shared clusters*: the HyperPod/EKS clusters the team has quota on are shared and tagged by the
  platform, not by the team, so cluster actions (`eks:*`, `logs:*`, and the concrete SageMaker
  cluster actions a granted pattern covers) are scoped by resource ARN to exactly those clusters
  (their EKS ARN, HyperPod ARN, and HyperPod log groups);
- *unscoped reads*: `List*`, `Search*`, and services without resource-level permissions (STS, Cost
  Explorer, CloudWatch metrics, ECR's GetAuthorizationToken, Budgets' ViewBudget) cannot be scoped
  by tag or ARN and stay unconditioned; all are read-only;
- *team resources* (everything else): allowed only on resources tagged with the team's project tag
  (`aws:ResourceTag/<project_tag>`, or for S3 objects `s3:ExistingObjectTag` / `s3:RequestObjectTag`).
Every action written comes from the persona's policy, the project's extra permissions, or a
concrete action such a pattern covers, so the validated containment in the boundary carries over.

**Platform Administrator.** The org layer's role in every account gets exactly the actions of
org.yaml's `personas.PlatformAdministrator`, on every resource: it creates and reclaims clusters,
whose ARNs do not exist yet, so it cannot be scoped like a project role.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from components import arns
from hypergov.model.cluster import Cluster
from hypergov.model.common import Persona, is_identity_center
from hypergov.model.org import Organization, PermissionBoundary, PlatformAdministratorPolicy
from hypergov.model.project import Project
from hypergov.rules.iam_patterns import matches

PolicyDocument = dict[str, Any]
VERSION = "2012-10-17"

# Read-only: node replacement and deletion stay with the platform administrators.
SHARED_CLUSTER_ACTIONS = ("sagemaker:DescribeCluster", "sagemaker:DescribeClusterNode", "sagemaker:ListClusterNodes")
UNSCOPED_SERVICES = frozenset({"sts", "ce", "cloudwatch", "budgets"})
UNSCOPED_ACTIONS = frozenset({"ecr:getauthorizationtoken", "s3:listbucket", "s3:listallmybuckets"})
CLUSTER_SERVICES = frozenset({"eks", "logs"})
S3_OBJECT_TAG_KEYS = (("s3:putobject", "s3:RequestObjectTag"), ("s3:", "s3:ExistingObjectTag"))


def boundary_document(boundary: PermissionBoundary) -> PolicyDocument:
    """The IAM permissions boundary every hypergov role carries: exactly the org's boundary."""
    statements: list[dict[str, Any]] = [
        {"Sid": "MaximumBoundary", "Effect": "Allow", "Action": list(boundary.allow), "Resource": "*"}]
    if boundary.deny:
        statements.append({"Sid": "BoundaryDeny", "Effect": "Deny", "Action": list(boundary.deny), "Resource": "*"})
    return {"Version": VERSION, "Statement": statements}


def scp_document(org: Organization) -> PolicyDocument:
    """The OU's SCP: the boundary, applied to every role hypergov makes (see module docstring)."""
    condition = {"ArnLike": {"aws:PrincipalArn": arns.hypergov_roles_pattern(org)}}
    boundary = org.permission_boundary
    statements: list[dict[str, Any]] = [
        {"Sid": "HypergovRolesOnlyInsideBoundary", "Effect": "Deny", "NotAction": list(boundary.allow),
         "Resource": "*", "Condition": condition}]
    if boundary.deny:
        statements.append({"Sid": "HypergovRolesBoundaryDeny", "Effect": "Deny", "Action": list(boundary.deny),
                           "Resource": "*", "Condition": condition})
    return {"Version": VERSION, "Statement": statements}


def tag_policy_document(org: Organization, *, teams: Iterable[str], cost_centres: Iterable[str]) -> dict[str, Any]:
    """An Organizations tag policy: the exact spelling of the cost keys, and for the project and
    cost-centre tags the values the tree knows (other cost centres are typos or strangers)."""
    alloc = org.cost_allocation
    tags: dict[str, Any] = {
        _tag_policy_key(alloc.project_tag): {"tag_key": {"@@assign": alloc.project_tag},
                                             "tag_value": {"@@assign": sorted(set(teams))}},
        _tag_policy_key(alloc.cost_centre_tag): {"tag_key": {"@@assign": alloc.cost_centre_tag},
                                                 "tag_value": {"@@assign": sorted(set(cost_centres))}},
    }
    for key in alloc.required_tags:
        tags.setdefault(_tag_policy_key(key), {"tag_key": {"@@assign": key}})
    return {"tags": dict(sorted(tags.items()))}


def _tag_policy_key(key: str) -> str:
    return "".join(c for c in key.lower() if c.isalnum()) or "tag"


def platform_admin_policy(policy: PlatformAdministratorPolicy) -> PolicyDocument:
    """The Platform Administrator role's policy: org.yaml's actions, unscoped (module docstring)."""
    return {"Version": VERSION, "Statement": [
        {"Sid": "PlatformAdministrator", "Effect": "Allow", "Action": list(policy.actions), "Resource": "*"}]}


def trust_policy(principals: Sequence[str]) -> PolicyDocument:
    """Who may assume a persona's role: its IAM principals, by ARN (Identity Center members are
    left out: see the module docstring). Call only with at least one IAM principal."""
    iam = sorted(p for p in principals if not is_identity_center(p))
    if not iam:
        raise ValueError("a trust policy needs at least one IAM principal")
    return {"Version": VERSION, "Statement": [
        {"Sid": "IamPrincipals", "Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"AWS": iam}}]}


@dataclass(frozen=True)
class ScopedActions:
    """A persona's granted actions, split by how they can be scoped."""

    shared_cluster: tuple[str, ...]
    unscoped: tuple[str, ...]
    tagged: tuple[tuple[str, str], ...]  # (action, condition key)


def scope_actions(actions: Iterable[str], *, project_tag: str) -> ScopedActions:
    shared: set[str] = set()
    unscoped: set[str] = set()
    tagged: set[tuple[str, str]] = set()
    for action in dict.fromkeys(actions):
        service, _, name = action.lower().partition(":")
        concrete = [a for a in SHARED_CLUSTER_ACTIONS if matches(action, a)]
        shared.update(concrete)
        if action.lower() in {a.lower() for a in concrete}:
            continue
        if service in CLUSTER_SERVICES and not name.startswith("list"):
            shared.add(action)
        elif service in UNSCOPED_SERVICES or action.lower() in UNSCOPED_ACTIONS or name.startswith(("list", "search")):
            unscoped.add(action)
        else:
            tagged.add((action, _tag_condition_key(action.lower(), project_tag)))
    return ScopedActions(tuple(sorted(shared)), tuple(sorted(unscoped)), tuple(sorted(tagged)))


def _tag_condition_key(action: str, project_tag: str) -> str:
    if action.startswith("s3:"):
        for prefix, key in S3_OBJECT_TAG_KEYS:
            if action.startswith(prefix):
                return f"{key}/{project_tag}"
    return f"aws:ResourceTag/{project_tag}"


def persona_actions(org: Organization, project: Project, persona: Persona) -> list[str]:
    return list(dict.fromkeys([*org.personas.for_persona(persona).actions, *project.extra_permissions.of(persona)]))


def role_policy(org: Organization, *, team: str, project: Project, persona: Persona,
                clusters: Sequence[Cluster]) -> PolicyDocument:
    """The least-privilege policy of one persona's role (see module docstring for the scopes)."""
    scoped = scope_actions(persona_actions(org, project, persona), project_tag=org.cost_allocation.project_tag)
    statements: list[dict[str, Any]] = []
    if scoped.shared_cluster:
        resources = sorted({r for c in clusters for r in (
            arns.eks_cluster_arn(org, c), arns.hyperpod_cluster_arn(org, c), arns.cluster_log_groups_arn(org, c))})
        statements.append({"Sid": "SharedClusters", "Effect": "Allow", "Action": list(scoped.shared_cluster),
                           "Resource": resources})
    if scoped.unscoped:
        statements.append({"Sid": "UnscopedReads", "Effect": "Allow", "Action": list(scoped.unscoped), "Resource": "*"})
    by_key: dict[str, list[str]] = {}
    for action, key in scoped.tagged:
        by_key.setdefault(key, []).append(action)
    for i, (key, actions) in enumerate(sorted(by_key.items())):
        statements.append({"Sid": f"TeamResources{i}", "Effect": "Allow", "Action": sorted(actions), "Resource": "*",
                           "Condition": {"StringEquals": {key: team}}})
    return {"Version": VERSION, "Statement": statements}


def policy_actions(document: PolicyDocument) -> list[str]:
    """Every action an Allow statement of `document` grants (for checks and tests)."""
    found: list[str] = []
    for statement in document["Statement"]:
        if statement["Effect"] != "Allow":
            continue
        action = statement["Action"]
        found.extend([action] if isinstance(action, str) else action)
    return found
