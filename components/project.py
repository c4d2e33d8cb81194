"""`ProjectGovernance`: the project layer. One IAM role per persona that has members, in the
account of every cluster the team has quota on, each with the org's permissions boundary, a trust
policy for the project's principals and a least-privilege ABAC policy (see `components.policies`);
on every cluster, per persona: an EKS access entry mapping the role into the persona's own
Kubernetes group, `AmazonEKSViewPolicy` scoped to the team namespace, and a Role + RoleBinding in
`hyperpod-ns-<team>` for what that policy does not grant (submitting jobs, Kueue's objects; see
`components.namespace_access`, the persona matrix); and a monthly AWS Budget on the project's
cost-centre tag in each of those accounts, alerting the org's budget topic there.

A persona without members gets no role, no access entry and no Role: a trust policy must name
someone. A project spread over several accounts gets one budget per account, its monthly amount
split in proportion to the accelerators it is guaranteed there (a member account's budget only
sees that account's costs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components import arns, namespace_access, policies
from components.identity_center import (
    ClusterAccess,
    PermissionSetSpec,
    declare_permission_set,
    identity_center_members,
)
from components.kube_objects import KubernetesObjects
from components.tags import cost_tags, k8s_labels
from hypergov import naming
from hypergov.model.cluster import Cluster
from hypergov.model.common import PERSONAS, Persona, is_identity_center
from hypergov.stack_views import ProjectView

TYPE = "hypergov:index:ProjectGovernance"


@dataclass(frozen=True)
class ProjectGovernanceArgs:
    view: ProjectView  # everything the project stack is declared from
    aws_providers: Mapping[tuple[str, str], aws.Provider]  # (account id, region) -> provider
    kubernetes: Mapping[str, k8s.Provider | None]  # cluster name -> provider; None: no Kubernetes object (counted)


def _json(document: object) -> str:
    return json.dumps(document, separators=(",", ":"))


def _alias(args: ProjectGovernanceArgs, account: str) -> str:
    return next(a.name for a in args.view.org.accounts if str(a.id) == account)


def budget_shares(view: ProjectView) -> dict[str, float]:
    """Account id -> the part of the project's budget spent there (by guaranteed accelerators, a
    MIG partition as its share of a GPU)."""
    weight: dict[str, float] = {}
    for name, cluster in sorted(view.clusters.items()):
        acct = arns.account_id(view.org, cluster.account)
        weight[acct] = weight.get(acct, 0) + view.quotas[name].total_gpus
    total = sum(weight.values())
    return {a: (w / total if total else 1 / len(weight)) for a, w in sorted(weight.items())}


def budget_limits(view: ProjectView) -> dict[str, str]:
    """Account id -> the monthly limit of the project's budget there, as AWS Budgets is given it
    (USD, two decimals): `monthly_usd` split by `budget_shares`. Empty without a budget. The usage
    chargeback's budget alerts (`usage.budget_alerts`) compare with these same figures."""
    budget = view.project.budget
    if budget is None:
        return {}
    return {acct: f"{budget.monthly_usd * share:.2f}" for acct, share in budget_shares(view).items()}


class ProjectGovernance(pulumi.ComponentResource):
    def __init__(self, name: str, args: ProjectGovernanceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        org, team, project = args.view.org, args.view.team, args.view.project
        self.tags = cost_tags(org, layer="project", project=(team, project))
        personas = [p for p in PERSONAS if project.members.of(p)]
        self.kubernetes = {c: KubernetesObjects(parent=self, provider=args.kubernetes[c])
                           for c in sorted(args.view.clusters)}
        roles: dict[tuple[str, Persona], aws.iam.Role] = {}
        accounts = sorted({arns.account_id(org, c.account) for c in args.view.clusters.values()})
        for acct in accounts:
            alias = _alias(args, acct)
            account_clusters = [c for c in args.view.clusters.values() if arns.account_id(org, c.account) == acct]
            for persona in personas:
                if any(not is_identity_center(p) for p in project.members.of(persona)):
                    roles[(acct, persona)] = self._role(args, acct=acct, alias=alias, persona=persona,
                                                        clusters=account_clusters)
        for acct, limit in budget_limits(args.view).items():
            self._budget(args, acct=acct, limit=limit)
        for cluster_name, cluster in sorted(args.view.clusters.items()):
            acct = arns.account_id(org, cluster.account)
            for persona in personas:
                if (acct, persona) in roles:
                    self._access(args, cluster_name=cluster_name, cluster=cluster, persona=persona,
                                 role=roles[(acct, persona)])
                self._rbac(args, cluster_name=cluster_name, persona=persona)
        for persona in personas:
            self._permission_set(args, persona=persona, accounts=accounts)
        self.register_outputs({"roleArns": sorted(arns.role_arn(org, account=a, team=team, persona=p)
                                                  for a, p in roles)})

    def _permission_set(self, args: ProjectGovernanceArgs, *, persona: Persona, accounts: list[str]) -> None:
        """The persona's Identity Center members reach its permissions through a permission set
        (`components.identity_center`), assigned in every account the project holds quota in."""
        org, team, project = args.view.org, args.view.team, args.view.project
        members = identity_center_members(project.members.of(persona))
        ic = org.identity_center
        if not members or ic is None:  # validation refuses Identity Center members without it (REF008)
            return
        clusters = [ClusterAccess(
            key=name, eks_cluster_name=c.eks.cluster_name, account=arns.account_id(org, c.account),
            provider=args.aws_providers[(arns.account_id(org, c.account), arns.cluster_region(org, c))],
            groups=(naming.persona_group(team, persona),),
            policy_arn=arns.eks_access_policy_arn(org, namespace_access.access_policy(persona)),
            scope={"type": "namespace", "namespaces": [naming.namespace(team)]})
            for name, c in sorted(args.view.clusters.items())]
        spec = PermissionSetSpec(
            key=naming.PERSONA_SLUG[persona], name=naming.permission_set_name(org.name, team, persona),
            description=f"hypergov: {persona} of project {team}",
            policy=policies.role_policy(org, team=team, project=project, persona=persona,
                                        clusters=list(args.view.clusters.values())),
            boundary=(naming.boundary_policy_name(org.name), "/"), members=members,
            accounts={a: (_alias(args, a), args.aws_providers[(a, org.home_region)]) for a in accounts},
            clusters=clusters)
        ic_account = arns.account_id(org, ic.account)
        declare_permission_set(self, spec, identity_center=ic, provider=args.aws_providers[(ic_account, ic.region)],
                               tags=self.tags)

    def _role(self, args: ProjectGovernanceArgs, *, acct: str, alias: str, persona: Persona,
              clusters: list[Cluster]) -> aws.iam.Role:
        org, team, project = args.view.org, args.view.team, args.view.project
        slug = naming.PERSONA_SLUG[persona]
        provider = args.aws_providers[(acct, org.home_region)]
        opts = pulumi.ResourceOptions(parent=self, provider=provider)
        role = aws.iam.Role(
            f"role-{slug}@{alias}", name=naming.role_name(org.name, team, persona), path=naming.ROLE_PATH,
            description=f"hypergov: {persona} of project {team}",
            assume_role_policy=_json(policies.trust_policy(project.members.of(persona))),
            permissions_boundary=arns.boundary_policy_arn(org, acct), max_session_duration=3600,
            tags=self.tags, opts=opts)
        aws.iam.RolePolicy(
            f"role-{slug}-access@{alias}", name=naming.role_policy_name(org.name, team, persona),
            role=naming.role_name(org.name, team, persona),
            policy=_json(policies.role_policy(org, team=team, project=project, persona=persona, clusters=clusters)),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[role]))
        return role

    def _budget(self, args: ProjectGovernanceArgs, *, acct: str, limit: str) -> None:
        org, team, project = args.view.org, args.view.team, args.view.project
        if project.budget is None or project.cost_centre is None:
            return
        alias = _alias(args, acct)
        topic = arns.budget_topic_arn(org, acct)
        aws.budgets.Budget(
            f"budget@{alias}", name=naming.budget_name(org.name, team), account_id=acct, budget_type="COST",
            limit_amount=limit, limit_unit="USD", time_unit="MONTHLY",
            cost_filters=[{"name": "TagKeyValue",
                           "values": [f"user:{org.cost_allocation.cost_centre_tag}${project.cost_centre}"]}],
            notifications=[{"comparison_operator": "GREATER_THAN", "threshold": float(pct),
                            "threshold_type": "PERCENTAGE", "notification_type": "ACTUAL",
                            "subscriber_sns_topic_arns": [topic]} for pct in sorted(project.budget.alert_at_percent)],
            tags=self.tags,
            opts=pulumi.ResourceOptions(parent=self, provider=args.aws_providers[(acct, org.home_region)]))

    def _access(self, args: ProjectGovernanceArgs, *, cluster_name: str, cluster: Cluster, persona: Persona,
                role: aws.iam.Role) -> None:
        org, team = args.view.org, args.view.team
        acct = arns.account_id(org, cluster.account)
        slug = naming.PERSONA_SLUG[persona]
        principal = arns.role_arn(org, account=acct, team=team, persona=persona)
        provider = args.aws_providers[(acct, arns.cluster_region(org, cluster))]
        entry = aws.eks.AccessEntry(
            f"access-{slug}@{cluster_name}", cluster_name=cluster.eks.cluster_name, principal_arn=principal,
            kubernetes_groups=[naming.persona_group(team, persona)],
            type="STANDARD", tags=self.tags,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[role]))
        aws.eks.AccessPolicyAssociation(
            f"access-policy-{slug}@{cluster_name}", cluster_name=cluster.eks.cluster_name, principal_arn=principal,
            policy_arn=arns.eks_access_policy_arn(org, namespace_access.access_policy(persona)),
            access_scope={"type": "namespace", "namespaces": [naming.namespace(team)]},
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[entry]))

    def _rbac(self, args: ProjectGovernanceArgs, *, cluster_name: str, persona: Persona) -> None:
        team, kube = args.view.team, self.kubernetes[cluster_name]
        slug = naming.PERSONA_SLUG[persona]
        labels = k8s_labels(self.tags)
        role_name = naming.persona_role(team, persona)
        role = kube.declare(
            k8s.rbac.v1.Role, f"rbac-role-{slug}@{cluster_name}",
            metadata={"name": role_name, "namespace": naming.namespace(team), "labels": labels},
            rules=namespace_access.role_rules(persona))
        kube.declare(
            k8s.rbac.v1.RoleBinding, f"rbac-binding-{slug}@{cluster_name}",
            metadata={"name": naming.persona_role_binding(team, persona), "namespace": naming.namespace(team),
                      "labels": labels},
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
            subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                       "name": naming.persona_group(team, persona)}],
            depends_on=[role])
