"""Deterministic names of everything hypergov creates, computed from the config alone.

Rules check these names (length, charset) before anything is planned, and the components use
the same functions, so a name that validates is exactly the name that gets created.
"""

from __future__ import annotations

import hashlib
import re

from hypergov.model.aws_limits import PERMISSION_SET_NAME, limit_max
from hypergov.model.common import Persona

# The role AWS Organizations creates in every member account it creates, trusted by the
# management account: what each account's AWS provider assumes, in both engines, by default.
ACCOUNT_ACCESS_ROLE = "OrganizationAccountAccessRole"

PERSONA_SLUG: dict[Persona, str] = {"ProjectLead": "lead", "Engineer": "engineer", "Viewer": "viewer"}


def namespace(team: str) -> str:
    """The team namespace HyperPod task governance creates for a team."""
    return f"hyperpod-ns-{team}"


def persona_group(team: str, persona: Persona) -> str:
    """The Kubernetes group one persona of a team is mapped into (from its EKS access entry) and its
    namespace Role is bound to. Not HyperPod's `hyperpod-ns-<team>-namespace-level-group`: HyperPod's
    Helm chart (team-role-and-bindings) binds that group to a Role that grants `create` on pods, so a
    persona mapped there could run pods around Kueue; and each persona needs its own group to hold
    different powers. The `hyperpod-ns-<team>-` prefix keeps the team recognisable (drift, audits)."""
    return f"hyperpod-ns-{team}-{PERSONA_SLUG[persona]}-group"


def persona_role(team: str, persona: Persona) -> str:
    """The Role in the team namespace holding what the persona's EKS access policy does not grant.
    Not HyperPod's `hyperpod-ns-<team>-namespace-role`, so that the Helm chart's Role and ours never
    overwrite each other."""
    return f"hyperpod-ns-{team}-{PERSONA_SLUG[persona]}-role"


def persona_role_binding(team: str, persona: Persona) -> str:
    """Named as HyperPod's chart names its binding: the Role's name and `-binding`."""
    return f"{persona_role(team, persona)}-binding"


HYPERPOD_TEAM_GROUP_SUFFIX = "-namespace-level-group"
"""HyperPod's own team group (`hyperpod-ns-<team>-namespace-level-group`): hypergov maps no one into
it, but an entry that does reaches the team namespace through HyperPod's chart."""

_PERSONA_GROUP = re.compile(
    r"hyperpod-ns-(?P<team>[a-z0-9-]+)-(?P<slug>" + "|".join(PERSONA_SLUG.values()) + r")-group")
_HYPERPOD_TEAM_GROUP = re.compile(r"hyperpod-ns-(?P<team>[a-z0-9-]+)" + re.escape(HYPERPOD_TEAM_GROUP_SUFFIX))


def team_of_group(group: str) -> str | None:
    """The team whose namespace a Kubernetes group reaches: one of hypergov's persona groups or
    HyperPod's own team group; None for any other group."""
    found = _PERSONA_GROUP.fullmatch(group) or _HYPERPOD_TEAM_GROUP.fullmatch(group)
    return found["team"] if found else None


def role_name(org: str, team: str, persona: Persona) -> str:
    return f"{org}-{team}-{PERSONA_SLUG[persona]}"


def role_policy_name(org: str, team: str, persona: Persona) -> str:
    return f"{role_name(org, team, persona)}-access"


PERMISSION_SET_NAME_MAX = limit_max(PERMISSION_SET_NAME)
_DIGEST = 8


def short_digest(text: str) -> str:
    """Eight hex digits of the text's SHA-256: what keeps a shortened name unique."""
    return hashlib.sha256(text.encode()).hexdigest()[:_DIGEST]


def permission_set_name(org: str, team: str, persona: Persona) -> str:
    """The Identity Center permission set of a project persona: named like its IAM role when that
    fits a permission set name (32 characters), else cut and ended with a digest of the full name,
    so two personas never share one (IDN004 checks the org's names all the same)."""
    full = role_name(org, team, persona)
    if len(full) <= PERMISSION_SET_NAME_MAX:
        return full
    return f"{full[:PERMISSION_SET_NAME_MAX - _DIGEST - 1]}-{short_digest(full)}"


# The role Identity Center makes in an account for a permission set assigned there:
# `AWSReservedSSO_<permission set>_<unique suffix>` under `/aws-reserved/sso.amazonaws.com/<region>/`
# (no region when the identity source is in us-east-1); the suffix changes whenever the role is
# made anew (IAM Identity Center user guide, "Referencing permission sets in resource policies").
SSO_ROLE_PREFIX = "AWSReservedSSO_"
SSO_ROLE_SUFFIX = "[0-9a-f]{16}"


def sso_role_path(identity_center_region: str) -> str:
    region = "" if identity_center_region == "us-east-1" else f"{identity_center_region}/"
    return f"/aws-reserved/sso.amazonaws.com/{region}"


def sso_role_name_regex(permission_set: str) -> str:
    """Exactly the roles of `permission_set` (RE2 and Python syntax alike): `<name>_anything` is
    another permission set, and its role does not match."""
    escaped = "".join(f"\\{c}" if c in ".+-" else c for c in permission_set)
    return f"^{SSO_ROLE_PREFIX}{escaped}_{SSO_ROLE_SUFFIX}$"


def sso_role_name_matcher(name_regex: str) -> re.Pattern[str] | None:
    """The regex `sso_role_name_regex` made for a permission set name (IAM's characters), compiled:
    anchored and literal but for the suffix's class, it means in Python's `re` what it means in
    RE2 (a role name holds no newline); None for any other regex, whose meaning in RE2 only the
    provider knows."""
    inner = re.fullmatch(re.escape(f"^{SSO_ROLE_PREFIX}") + r"((?:\\[.+\-]|[A-Za-z0-9_=,@])+)"
                         + re.escape(f"_{SSO_ROLE_SUFFIX}$"), name_regex)
    if inner is None:
        return None
    permission_set = re.sub(r"\\(.)", r"\1", inner.group(1))
    return re.compile(name_regex) if sso_role_name_regex(permission_set) == name_regex else None


def boundary_policy_name(org: str) -> str:
    return f"{org}-hypergov-permissions-boundary"


def scp_name(org: str) -> str:
    return f"{org}-hypergov-maximum-boundary"


def budget_name(org: str, team: str) -> str:
    return f"{org}-{team}-monthly"


def compute_quota_name(team: str, cluster: str) -> str:
    return f"{team}-on-{cluster}"


def scheduler_config_name(cluster: str) -> str:
    return f"{cluster}-scheduler"


# --- added for the components and stacks (append-only) ---

ROLE_PATH = "/hypergov/"
"""IAM path of every role hypergov makes: the SCP singles these roles out by it, so the maximum
boundary never constrains the platform administrators or hypergov's own deployer."""


PLATFORM_ADMIN_ROLE_PATH = "/hypergov-platform/"
"""IAM path of the org layer's Platform Administrator roles: hypergov's, but outside `/hypergov/`,
so the SCP's `role/hypergov/*` condition (the maximum boundary) never matches them."""


def platform_admin_role_name(org: str) -> str:
    return f"{org}-platform-administrator"


def platform_admin_permission_set_name(org: str) -> str:
    """The Platform Administrator's permission set (an org name has at most 20 characters)."""
    return f"{org}-platform-admin"


def platform_admin_policy_name(org: str) -> str:
    return f"{platform_admin_role_name(org)}-access"


def tag_policy_name(org: str) -> str:
    return f"{org}-hypergov-cost-tags"


def budget_alert_topic_name(org: str) -> str:
    return f"{org}-hypergov-budget-alerts"


def kueue_cluster_queue(team: str) -> str:
    """Named as HyperPod task governance names its own, so tooling that knows one knows both."""
    return f"hyperpod-ns-{team}-clusterqueue"


def kueue_local_queue(team: str) -> str:
    return f"hyperpod-ns-{team}-localqueue"


def kueue_priority_class(name: str) -> str:
    """The in-cluster name of the scheduler-config priority class `name`: the Kueue
    WorkloadPriorityClass a job names in its `kueue.x-k8s.io/priority-class` label, and that Kueue
    copies into the Workload's `spec.priorityClassName`.

    HyperPod task governance creates them from the cluster policy as `<name>-priority`. AWS,
    "Example HyperPod task governance AWS CLI commands"
    (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-operate-console-ui-governance-cli.html):
    "When a data scientist submits a job, they use one of the priority class names with the
    format `priority-class-name-priority`. In this example, `training-priority` refers to the
    priority class named "training"", and the labels to include are
    "kueue.x-k8s.io/priority-class: priority-class-name-priority".

    On plain-EKS clusters hypergov declares the WorkloadPriorityClasses itself
    (`components.kueue.workload_priority_class`) and names them the same way, so one job manifest
    carries the same label on every cluster of the org, whichever mode it runs in."""
    return f"{name}-priority"


def kueue_cohort(cluster: str) -> str:
    return f"{cluster}-cohort"


def kueue_resource_flavor(instance_type: str) -> str:
    return instance_type


def workload_admission_policy(team: str) -> str:
    return f"hypergov-{team}-workload-classes"


WORKLOAD_LIMITS = "hypergov-workload-limits"
"""Name of the LimitRange and ResourceQuota hypergov keeps in each team namespace."""


def org_stack() -> str:
    return "org"


def cluster_stack(cluster: str) -> str:
    return f"cluster-{cluster}"


def project_stack(team: str) -> str:
    return f"project-{team}"


# --- names written where jobs and the task-governance add-on read them (append-only) ---

STACK_LABEL = "hypergov.dev/stack"
"""The label naming the stack that declares a Kubernetes object (its value is a stack name)."""

KUEUE_QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
"""The label by which a job names its LocalQueue (`kueue_local_queue`), a label value."""

KUEUE_PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
"""The label by which a job names its WorkloadPriorityClass (`kueue_priority_class`)."""


# --- the inverses the usage accounting reads Kueue objects by (append-only) ---

_NAMESPACE = re.compile(r"hyperpod-ns-(?P<team>[a-z0-9]([-a-z0-9]*[a-z0-9])?)")
_CLUSTER_QUEUE = re.compile(r"hyperpod-ns-(?P<team>[a-z0-9]([-a-z0-9]*[a-z0-9])?)-clusterqueue")
_PRIORITY_SUFFIX = "-priority"


def team_of_namespace(name: str) -> str | None:
    """The team whose namespace (`namespace(team)`) `name` is; None for any other namespace."""
    found = _NAMESPACE.fullmatch(name)
    return found["team"] if found else None


def team_of_cluster_queue(name: str) -> str | None:
    """The team whose ClusterQueue (`kueue_cluster_queue(team)`) `name` is; None for any other."""
    found = _CLUSTER_QUEUE.fullmatch(name)
    return found["team"] if found else None


def priority_class_of(kueue_name: str) -> str | None:
    """The scheduler-config priority class whose WorkloadPriorityClass (`kueue_priority_class`) is
    `kueue_name`; None for a name hypergov and HyperPod do not make."""
    if kueue_name.endswith(_PRIORITY_SUFFIX) and len(kueue_name) > len(_PRIORITY_SUFFIX):
        return kueue_name[: -len(_PRIORITY_SUFFIX)]
    return None


def instance_type_of_flavor(flavor: str) -> str:
    """The instance type a ResourceFlavor (`kueue_resource_flavor`) stands for."""
    return flavor
