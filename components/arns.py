"""ARNs of governed objects, computed from the config alone (partition, account id, region,
names), never read from provider outputs: a plan is then exact before anything exists, and the
same tree always yields the same graph."""

from __future__ import annotations

from hypergov import naming
from hypergov.model.cluster import Cluster
from hypergov.model.common import Persona
from hypergov.model.org import Organization


class ConfigReferenceError(ValueError):
    """The tree names something (an account) that the org does not define; validation normally
    catches this first."""


def account_id(org: Organization, account_name: str) -> str:
    account = org.account(account_name)
    if account is None:
        raise ConfigReferenceError(f"account '{account_name}' is not listed in org.yaml")
    return str(account.id)


def cluster_region(org: Organization, cluster: Cluster) -> str:
    return cluster.region or org.home_region


def boundary_policy_arn(org: Organization, account: str) -> str:
    return f"arn:{org.partition}:iam::{account}:policy/{naming.boundary_policy_name(org.name)}"


def role_arn(org: Organization, *, account: str, team: str, persona: Persona) -> str:
    path = naming.ROLE_PATH
    return f"arn:{org.partition}:iam::{account}:role{path}{naming.role_name(org.name, team, persona)}"


def platform_admin_role_arn(org: Organization, account: str) -> str:
    name = naming.platform_admin_role_name(org.name)
    return f"arn:{org.partition}:iam::{account}:role{naming.PLATFORM_ADMIN_ROLE_PATH}{name}"


def hypergov_roles_pattern(org: Organization) -> str:
    """Every role hypergov makes, in any account: what the SCP's conditions match."""
    return f"arn:{org.partition}:iam::*:role{naming.ROLE_PATH}*"


def eks_cluster_arn(org: Organization, cluster: Cluster) -> str:
    acct = account_id(org, cluster.account)
    return f"arn:{org.partition}:eks:{cluster_region(org, cluster)}:{acct}:cluster/{cluster.eks.cluster_name}"


def hyperpod_cluster_arn(org: Organization, cluster: Cluster) -> str:
    """The configured ARN. HyperPod ARNs end in a service-generated id, so without one in the
    config the best exact reference is every HyperPod cluster of that account and region."""
    if cluster.hyperpod.arn is not None:
        return str(cluster.hyperpod.arn)
    acct = account_id(org, cluster.account)
    return f"arn:{org.partition}:sagemaker:{cluster_region(org, cluster)}:{acct}:cluster/*"


def cluster_log_groups_arn(org: Organization, cluster: Cluster) -> str:
    """HyperPod writes node logs to /aws/sagemaker/Clusters/<name>/<id>."""
    acct = account_id(org, cluster.account)
    return (f"arn:{org.partition}:logs:{cluster_region(org, cluster)}:{acct}:log-group:"
            f"/aws/sagemaker/Clusters/{cluster.hyperpod.cluster_name}/*")


def budget_topic_arn(org: Organization, account: str) -> str:
    return f"arn:{org.partition}:sns:{org.home_region}:{account}:{naming.budget_alert_topic_name(org.name)}"


def eks_access_policy_arn(org: Organization, policy: str) -> str:
    return f"arn:{org.partition}:eks::aws:cluster-access-policy/{policy}"
