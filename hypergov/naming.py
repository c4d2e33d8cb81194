"""Deterministic names of everything hypergov creates, computed from the config alone.

Rules check these names (length, charset) before anything is planned, and the components use
the same functions, so a name that validates is exactly the name that gets created.
"""

from __future__ import annotations

from hypergov.model.common import Persona

PERSONA_SLUG: dict[Persona, str] = {"ProjectLead": "lead", "Engineer": "engineer", "Viewer": "viewer"}


def namespace(team: str) -> str:
    """The team namespace HyperPod task governance creates for a team."""
    return f"hyperpod-ns-{team}"


def namespace_role(team: str) -> str:
    """The Kubernetes Role HyperPod documents for a team's namespace-level access."""
    return f"hyperpod-ns-{team}-namespace-role"


def namespace_group(team: str) -> str:
    """The Kubernetes group that role is bound to (mapped from the EKS access entry)."""
    return f"hyperpod-ns-{team}-namespace-level-group"


def role_name(org: str, team: str, persona: Persona) -> str:
    return f"{org}-{team}-{PERSONA_SLUG[persona]}"


def role_policy_name(org: str, team: str, persona: Persona) -> str:
    return f"{role_name(org, team, persona)}-access"


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
