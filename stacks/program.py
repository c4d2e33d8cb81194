"""The Pulumi program: declares the one component of a stack (and its providers) from the tree.

`pulumi up --stack <name>` runs `__main__.py`, which calls `main()`: it reads the stack's config
(`hypergov:kind`, `hypergov:name`, `hypergov:configDir`, optionally `hypergov:kubeconfig` and
`hypergov:assumeRoleName`), refuses an invalid tree, and calls `declare`. Graph capture calls
`declare` directly with an already loaded tree.

Kubernetes objects: with an empty `hypergov:kubeconfig`, a Kubernetes provider would fall back to
the ambient kubectl context (or $KUBECONFIG) of whoever runs `pulumi up`, and create every team's
RBAC and limits on whatever cluster that is. So `main()` declares no Kubernetes provider and no
Kubernetes object then, and warns once per cluster with the count and how to enable them
(`kubernetes="skip-without-kubeconfig"`). Graph capture declares them all (`"declare"`): the
terraform engine plans every object and applies them with its own kubeconfig setting, or marks
them "not applied: no kubeconfig".

Every AWS resource goes through an explicit provider per account and region, so one stack can
span accounts: the provider of each account assumes the org's account access role there
(`hypergov.naming.ACCOUNT_ACCESS_ROLE`, the terraform engine's default too), or the role
`hypergov:assumeRoleName` names; set to '' all accounts use the ambient credentials.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native
import pulumi_kubernetes as k8s
from pulumi.dynamic import ResourceProvider

from components.arns import account_id, cluster_region
from components.cluster import ClusterGovernance, ClusterGovernanceArgs
from components.organization import OrganizationGovernance, OrganizationGovernanceArgs
from components.project import ProjectGovernance, ProjectGovernanceArgs
from components.workload import WorkloadPolicy, WorkloadPolicyArgs
from hypergov import naming
from hypergov.model.common import PERSONAS, is_identity_center
from hypergov.model.org import Organization
from hypergov.stack_views import ClusterView, OrgView, ProjectView, StackKind, StackView, stack_view
from hypergov.validate import InvalidTreeError, load_valid_tree
from stacks.files import STACK_CONFIG_DIR, stack_file

KubernetesMode = Literal["declare", "skip-without-kubeconfig"]


@dataclass(frozen=True, kw_only=True)
class StackSettings:
    """A stack's own configuration (its Pulumi.<stack>.yaml), apart from the tree, plus what to do
    with Kubernetes objects (no default: each caller says which one it is)."""

    kind: StackKind
    name: str
    kubernetes: KubernetesMode  # "declare" always (graph capture); "skip-without-kubeconfig" (pulumi up)
    # What carries out the HyperPod scheduler config (a dynamic resource): the engine's provider for
    # pulumi up, components.scheduler_config.CaptureOnlyProvider under graph capture.
    scheduler_config_provider: ResourceProvider
    config_dir: str = "config"
    kubeconfig: str = ""
    # cluster -> kubeconfig (its current context): the engine's `kubeconfigs` setting, ahead of `kubeconfig`
    kubeconfigs: Mapping[str, str] = field(default_factory=dict)
    assume_role_name: str = ""


class Providers:
    """Creates each explicit provider once, named after what it reaches."""

    def __init__(self, org: Organization, settings: StackSettings) -> None:
        self.org = org
        self.settings = settings
        self._aws: dict[tuple[str, str], aws.Provider] = {}

    def role_arn(self, account: str) -> str:
        name = self.settings.assume_role_name
        return f"arn:{self.org.partition}:iam::{account}:role/{name}" if name else ""

    def aws_provider(self, account: str, region: str) -> aws.Provider:
        key = (account, region)
        if key not in self._aws:
            alias = next(a.name for a in self.org.accounts if str(a.id) == account)
            role = self.role_arn(account)
            self._aws[key] = aws.Provider(f"aws-{alias}-{region}", region=region,
                                          allowed_account_ids=[account],
                                          assume_role=aws.ProviderAssumeRoleArgs(role_arn=role, session_name="hypergov")
                                          if role else None)
        return self._aws[key]

    def management(self) -> aws.Provider:
        return aws.Provider("aws-management", region=self.org.home_region)

    def aws_native(self, account: str, region: str) -> aws_native.Provider:
        alias = next(a.name for a in self.org.accounts if str(a.id) == account)
        role = self.role_arn(account)
        return aws_native.Provider(f"aws-native-{alias}-{region}", region=region,
                                   assume_role=aws_native.ProviderAssumeRoleArgs(role_arn=role, session_name="hypergov")
                                   if role else None)

    def kubernetes(self, cluster: str, eks_name: str) -> k8s.Provider | None:
        """The cluster's provider (the kubeconfig's context named after the EKS cluster), or None
        (declare no object) when there is no kubeconfig and the mode says to skip."""
        own = self.settings.kubeconfigs.get(cluster)
        if own:  # the cluster's own kubeconfig (as the terraform engine reads it): its current context
            return k8s.Provider(f"k8s-{cluster}", kubeconfig=own)
        kubeconfig = self.settings.kubeconfig
        if not kubeconfig and self.settings.kubernetes == "skip-without-kubeconfig":
            return None
        return k8s.Provider(f"k8s-{cluster}", kubeconfig=kubeconfig or None,
                            context=eks_name if kubeconfig else None)


def declare(view: StackView, settings: StackSettings) -> dict[str, int]:
    """Declare the stack's resources from its view into the running Pulumi program; returns, per
    cluster, the Kubernetes objects not declared for want of a kubeconfig (each warned about)."""
    providers = Providers(view.org, settings)
    skipped: dict[str, int] = {}
    contexts: dict[str, str] = {}
    if isinstance(view, OrgView):
        _declare_org(view, providers)
    elif isinstance(view, ClusterView):
        skipped = _declare_cluster(view, providers)
        contexts = {view.name: view.cluster.eks.cluster_name}
    else:
        skipped = _declare_project(view, providers)
        contexts = {c: m.eks.cluster_name for c, m in view.clusters.items()}
    skipped = {c: n for c, n in sorted(skipped.items()) if n}
    for cluster, count in skipped.items():
        pulumi.log.warn(skipped_message(stack=pulumi.get_stack(), cluster=cluster, count=count,
                                        context=contexts[cluster]))
    return skipped


def skipped_message(*, stack: str, cluster: str, count: int, context: str) -> str:
    """The one warning line per cluster whose Kubernetes objects `pulumi up` did not declare."""
    return (f"{count} Kubernetes object(s) for cluster '{cluster}' skipped: hypergov:kubeconfig is empty and "
            "hypergov never uses the ambient kubectl context; to declare them, set hypergov:kubeconfig "
            f"(a kubeconfig path with the context '{context}') in {stack_file(STACK_CONFIG_DIR, stack).as_posix()}")


def _declare_org(view: OrgView, providers: Providers) -> None:
    org = view.org
    OrganizationGovernance(org.name, OrganizationGovernanceArgs(
        view=view, management=providers.management(),
        accounts={str(a.id): providers.aws_provider(str(a.id), org.home_region) for a in org.accounts},
        cluster_providers={name: providers.aws_provider(account_id(org, c.account), cluster_region(org, c))
                           for name, c in view.clusters.items()},
        identity_center=_identity_center_provider(org, providers, org.platform_admins)))


def _identity_center_provider(org: Organization, providers: Providers, members: Sequence[str]) -> aws.Provider | None:
    """The provider of the Identity Center account and region, when `members` name anyone there."""
    ic = org.identity_center
    if ic is None or not any(is_identity_center(p) for p in members):
        return None
    return providers.aws_provider(account_id(org, ic.account), ic.region)


def _declare_cluster(view: ClusterView, providers: Providers) -> dict[str, int]:
    org, cluster = view.org, view.cluster
    acct = account_id(org, cluster.account)
    args = ClusterGovernanceArgs(view=view, scheduler_config_provider=providers.settings.scheduler_config_provider,
                                 assume_role_arn=providers.role_arn(acct))
    if cluster.task_governance:
        args = replace(args, aws_native=providers.aws_native(acct, cluster_region(org, cluster)))
    else:
        args = replace(args, kubernetes=providers.kubernetes(view.name, cluster.eks.cluster_name))
    component = ClusterGovernance(view.name, args)
    return {view.name: component.kubernetes.skipped}


def _declare_project(view: ProjectView, providers: Providers) -> dict[str, int]:
    org, team = view.org, view.team
    aws_providers: dict[tuple[str, str], aws.Provider] = {}
    for cluster in view.clusters.values():
        acct = account_id(org, cluster.account)
        for region in (org.home_region, cluster_region(org, cluster)):
            aws_providers[(acct, region)] = providers.aws_provider(acct, region)
    members = [p for persona in PERSONAS for p in view.project.members.of(persona)]
    ic_provider = _identity_center_provider(org, providers, members)
    if ic_provider is not None and org.identity_center is not None:
        aws_providers[(account_id(org, org.identity_center.account), org.identity_center.region)] = ic_provider
    kube = {c: providers.kubernetes(c, m.eks.cluster_name) for c, m in view.clusters.items()}
    governance = ProjectGovernance(team, ProjectGovernanceArgs(view=view, aws_providers=aws_providers, kubernetes=kube))
    skipped = {c: objects.skipped for c, objects in governance.kubernetes.items()}
    for cluster_name in view.clusters:
        policy = WorkloadPolicy(f"{team}@{cluster_name}", WorkloadPolicyArgs(
            view=view, cluster_name=cluster_name, kubernetes=kube[cluster_name]))
        skipped[cluster_name] += policy.kubernetes.skipped
    return skipped


def settings_from_config(scheduler_config_provider: ResourceProvider) -> StackSettings:
    """The stack's settings from its config. `hypergov:assumeRoleName` absent: each account's provider
    assumes the org's account access role (as the terraform engine does); set to '' to use the
    ambient credentials in every account (a single-account org run from inside it)."""
    config = pulumi.Config("hypergov")
    kind = config.require("kind")
    if kind not in ("org", "cluster", "project"):
        raise pulumi.RunError(f"hypergov:kind is '{kind}'; it must be org, cluster or project "
                              "(regenerate the stack files with 'hypergov stacks generate')")
    role = config.get("assumeRoleName")
    kubeconfigs = config.get_object("kubeconfigs") or {}
    if not isinstance(kubeconfigs, dict):
        raise pulumi.RunError("hypergov:kubeconfigs must be a mapping of cluster name -> kubeconfig path")
    return StackSettings(kind=kind, name=config.require("name"),  # type: ignore[arg-type]
                         kubernetes="skip-without-kubeconfig", scheduler_config_provider=scheduler_config_provider,
                         config_dir=config.get("configDir") or "config",
                         kubeconfig=config.get("kubeconfig") or "",
                         kubeconfigs={str(k): str(v) for k, v in kubeconfigs.items()},
                         assume_role_name=naming.ACCOUNT_ACCESS_ROLE if role is None else role)


def main(scheduler_config_provider: ResourceProvider) -> None:
    """The Pulumi program entry point (see `__main__.py`, which passes the engine's provider)."""
    settings = settings_from_config(scheduler_config_provider)
    try:
        tree = load_valid_tree(settings.config_dir)
    except InvalidTreeError as exc:
        raise pulumi.RunError(f"{exc} {settings.config_dir}") from None
    declare(stack_view(tree, settings.kind, settings.name), settings)
