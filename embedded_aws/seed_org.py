"""Seed the organization layer of a config tree: an Organization whose management account is the
endpoint's default account, with the SCP and tag policy types enabled, and the tree's OU under its
root *with the id the tree names*.

The Organizations API cannot choose an OU id (AWS generates it; so does moto), but `org.yaml`
names one. The OU is created through the API like any client would, then the id of that one
object is set in moto's backend. That is only possible where the endpoint's state lives, so this
runs in the endpoint's own process (the `hypergov embedded-aws --seed-config` child, or an
in-process `EmbeddedAws`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from embedded_aws.handle import DEFAULT_ACCOUNT
from embedded_aws.seed import SeedTarget
from hypergov.model.tree import GovernanceTree

POLICY_TYPES = ("SERVICE_CONTROL_POLICY", "TAG_POLICY")


@dataclass(frozen=True)
class SeededOrganization:
    management_account: str
    root_id: str
    ou_id: str


def seed_organization(tree: GovernanceTree, endpoint: SeedTarget, *,
                      management_account: str = DEFAULT_ACCOUNT) -> SeededOrganization:
    """Create (idempotently) the organization and the OU `org.yaml` names."""
    if tree.org is None:
        raise ValueError("the config tree has no valid org.yaml; run 'hypergov validate'")
    org = tree.org.model
    client = endpoint.client("organizations", account=management_account, region="us-east-1")
    try:
        client.describe_organization()
    except client.exceptions.AWSOrganizationsNotInUseException:
        client.create_organization(FeatureSet="ALL")
    root = client.list_roots()["Roots"][0]
    enabled = {p["Type"] for p in root.get("PolicyTypes", []) if p.get("Status") == "ENABLED"}
    for policy_type in POLICY_TYPES:
        if policy_type not in enabled:
            client.enable_policy_type(RootId=root["Id"], PolicyType=policy_type)
    children = client.list_organizational_units_for_parent(ParentId=root["Id"])["OrganizationalUnits"]
    existing = {ou["Id"] for ou in children}
    if org.organizational_unit not in existing:
        created = client.create_organizational_unit(ParentId=root["Id"], Name=f"{org.name}-hyperpod")
        _set_ou_id(management_account, created["OrganizationalUnit"]["Id"], org.organizational_unit, org.partition)
    return SeededOrganization(management_account=management_account, root_id=root["Id"],
                              ou_id=org.organizational_unit)


def _set_ou_id(account: str, generated: str, wanted: str, partition: str) -> None:
    from moto.organizations.models import organizations_backends

    backend: Any = organizations_backends[account][partition]
    ou = next(o for o in backend.ou if o.id == generated)
    ou.id = wanted
