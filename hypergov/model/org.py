"""The organization layer (`config/org.yaml`): accounts, the maximum permission boundary, cost
allocation, allowed instance types and regions, platform administrators, and who may change what."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from hypergov.model.common import (
    AccountId,
    ActionPattern,
    InstanceType,
    OrganizationalUnitId,
    Partition,
    Persona,
    Principal,
    Region,
    StrictModel,
    TagKey,
)

OrgName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,19}$"),
                    Field(description="short org name (lowercase, digits, '-'; max 20), used in resource names")]
AccountAlias = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}$"),
                         Field(description="the name clusters use to refer to this account")]


class Account(StrictModel):
    """An AWS account that hosts HyperPod clusters."""

    name: AccountAlias
    id: AccountId


class PermissionBoundary(StrictModel):
    """The maximum any hypergov-made role may ever do: becomes the SCP and the IAM permissions
    boundary. An action is inside the boundary when an `allow` pattern matches it and no `deny`
    pattern does."""

    allow: list[ActionPattern] = Field(min_length=1)
    deny: list[ActionPattern] = Field(default_factory=list)


class PersonaPolicy(StrictModel):
    """What every project's role of one persona may do (projects may add within the boundary)."""

    actions: list[ActionPattern] = Field(min_length=1)


class Personas(StrictModel):
    ProjectLead: PersonaPolicy
    Engineer: PersonaPolicy
    Viewer: PersonaPolicy

    def for_persona(self, persona: Persona) -> PersonaPolicy:
        policy: PersonaPolicy = getattr(self, persona)
        return policy


class CostAllocation(StrictModel):
    """Cost-attribution tags. hypergov sets `project_tag` and `cost_centre_tag` itself on every
    taggable resource; `required_tags` are keys every project must set in its `tags`."""

    project_tag: TagKey = "Project"
    cost_centre_tag: TagKey = "CostCentre"
    cost_centre_pattern: Annotated[str, StringConstraints(max_length=200)] = r"^[A-Z]{2}-[0-9]{3,6}$"
    required_tags: list[TagKey] = Field(default_factory=list)


ChangeOwner = Annotated[
    str,
    StringConstraints(pattern=r"^(platform-admins|project-leads|project-members|@[A-Za-z0-9][A-Za-z0-9_.-]{0,38}"
                              r"(/[A-Za-z0-9_.-]{1,100})?|[^@\s]+@[^@\s]+\.[A-Za-z]{2,})$"),
    Field(description="'platform-admins', 'project-leads' (of the project the path belongs to), "
                      "'project-members', a '@user' / '@org/team' handle, or an e-mail address"),
]
PathGlob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.*?{}<>/-]+$", max_length=300),
                     Field(description="a path glob relative to the tree root; '<project>' stands for "
                                       "each project's name, e.g. 'projects/<project>.yaml'")]


class ChangeRule(StrictModel):
    """Who may approve changes to which paths of the tree (like CODEOWNERS; last match wins)."""

    paths: list[PathGlob] = Field(min_length=1)
    owners: list[ChangeOwner] = Field(min_length=1)


class Organization(StrictModel):
    name: OrgName
    partition: Partition = "aws"
    home_region: Region
    allowed_regions: list[Region] = Field(min_length=1)
    organizational_unit: OrganizationalUnitId
    accounts: list[Account] = Field(min_length=1)
    permission_boundary: PermissionBoundary
    personas: Personas
    cost_allocation: CostAllocation = CostAllocation()
    allowed_instance_types: list[InstanceType] = Field(min_length=1)
    platform_admins: list[Principal] = Field(min_length=1)
    change_control: list[ChangeRule] = Field(default_factory=list)

    def account(self, name: str) -> Account | None:
        return next((a for a in self.accounts if a.name == name), None)
