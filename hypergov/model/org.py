"""The organization layer (`config/org.yaml`): accounts (and the outside accounts it trusts), the
maximum permission boundary, persona policies and ceilings, cost allocation, allowed instance types
and regions, platform administrators, and who may change what."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

from hypergov.model.aws_limits import aws_str
from hypergov.model.common import (
    AccountId,
    ActionPattern,
    Duration,
    GitHostOwner,
    InstanceType,
    OrganizationalUnitId,
    Partition,
    Persona,
    Principal,
    Region,
    StrictModel,
    TagKey,
    duration_seconds,
)

OrgName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,19}$"),
                    Field(description="short org name (lowercase, digits, '-'; max 20), used in resource names")]
AccountAlias = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}$"),
                         Field(description="the name clusters use to refer to this account")]


class Account(StrictModel):
    """An AWS account that hosts HyperPod clusters."""

    name: AccountAlias
    id: AccountId


# A permission set's session lasts 1 to 12 hours (IAM Identity Center user guide, "Set session
# duration"); the API takes it as an ISO 8601 duration (`SessionDuration`, e.g. "PT8H").
SESSION_HOURS = (1, 12)


def _session_duration(value: str) -> str:
    low, high = SESSION_HOURS
    if not low * 3600 <= duration_seconds(value) <= high * 3600:
        raise ValueError(f"an Identity Center session lasts {low}h to {high}h (e.g. '8h'), not {value}")
    return value


SessionDuration = Annotated[Duration, AfterValidator(_session_duration),
                            Field(description="how long a person's session lasts, 1h to 12h (e.g. '8h')")]


class IdentityCenter(StrictModel):
    """The org's IAM Identity Center: where people come from. Each project persona with Identity
    Center members gets a permission set there, assigned to exactly those groups and users in
    exactly the accounts where the project holds quota."""

    instance_arn: Annotated[str, aws_str("sso-admin", "InstanceArn"), Field(
        description="the Identity Center instance, e.g. arn:aws:sso:::instance/ssoins-0123456789abcdef")]
    identity_store_id: Annotated[str, aws_str("identitystore", "IdentityStoreId"), Field(
        description="the instance's identity store, e.g. d-0123456789")]
    region: Region = Field(description="the region the instance lives in")
    account: AccountAlias = Field(description=(
        "the org account (a name from `accounts`) Identity Center is administered from: the management "
        "account's member or the delegated administrator"))
    session_duration: SessionDuration = "1h"


class PermissionBoundary(StrictModel):
    """The maximum any hypergov-made role may ever do: becomes the SCP and the IAM permissions
    boundary. An action is inside the boundary when an `allow` pattern matches it and no `deny`
    pattern does."""

    allow: list[ActionPattern] = Field(min_length=1)
    deny: list[ActionPattern] = Field(default_factory=list)


Reason = Annotated[str, StringConstraints(pattern=r"\S", max_length=500),
                  Field(description="why, in a sentence a reviewer can check (required, not blank)")]


class TrustedExternalAccount(StrictModel):
    """An AWS account outside `accounts` whose IAM users and roles may still be named as project
    members, cluster owners or platform admins (e.g. a central identity account)."""

    id: AccountId
    reason: Reason


class CeilingWidening(StrictModel):
    """An explicit opt-out from part of the built-in ceiling: these actions become grantable to
    the persona (still only inside the boundary)."""

    actions: list[ActionPattern] = Field(min_length=1)
    reason: Reason


class Ceiling(StrictModel):
    """What a persona may never be granted, by org.yaml or by any project, even inside the
    boundary. Engineer and Viewer start from hypergov's built-in ceiling (changes to HyperPod
    clusters, nodes, scheduler configs and compute quotas; EKS cluster configuration and access;
    IAM, Identity Center, Organizations, account settings and budgets): `deny` tightens it,
    `widen_builtin` is the only way to lift part of it. ProjectLead has no built-in ceiling."""

    deny: list[ActionPattern] = Field(default_factory=list, description=(
        "more action patterns this persona may never be granted (added to the built-in ceiling)"))
    widen_builtin: list[CeilingWidening] = Field(default_factory=list, description=(
        "built-in ceiling actions this persona may be granted after all, each with a reason"))


class PersonaPolicy(StrictModel):
    """What every project's role of one persona may do (projects may add within the boundary and
    below the persona's ceiling)."""

    actions: list[ActionPattern] = Field(min_length=1)
    ceiling: Ceiling = Field(default_factory=Ceiling, description=(
        "what this persona may never be granted; default: the built-in ceiling (Engineer, Viewer) or none"))


class PlatformAdministratorPolicy(StrictModel):
    """The policy of the org layer's Platform Administrator role, one per org account, trusted by
    `platform_admins` and cluster admin on every governed EKS cluster. It is not a project role:
    the maximum boundary (SCP and permissions boundary) does not apply to it."""

    actions: list[ActionPattern] = Field(min_length=1)


class Personas(StrictModel):
    ProjectLead: PersonaPolicy
    Engineer: PersonaPolicy
    Viewer: PersonaPolicy
    PlatformAdministrator: PlatformAdministratorPolicy | None = Field(default=None, description=(
        "the org layer's Platform Administrator role in every account; without it, no such role"))

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


# A price is written as a YAML number, which YAML reads as a float. `repr` gives the shortest text
# that reads back as the same float, and a decimal of at most 15 significant digits survives the
# round trip through a float unchanged (IEEE 754 doubles keep 15), so bounding the digits to 15
# makes the Decimal exactly what was written: money is never carried as a float past this point.
PRICE_DIGITS = 15
PRICE_DECIMAL_PLACES = 8


def _written_decimal(value: Any) -> Any:
    """A YAML number (int or float) as the Decimal it was written as. Anything else is refused: a
    quoted "55.04" is a string, and no value is coerced from another type (StrictModel)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("decimal_type", "Input should be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise PydanticCustomError("finite_number", "Input should be a finite number")
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


Price = Annotated[
    Decimal, BeforeValidator(_written_decimal),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0,
                    "exclusiveMaximum": 10 ** (PRICE_DIGITS - PRICE_DECIMAL_PLACES)}),
    Field(gt=0, max_digits=PRICE_DIGITS, decimal_places=PRICE_DECIMAL_PLACES, description=(
        f"a price in the org's currency, more than 0, at most {PRICE_DIGITS} digits of which "
        f"{PRICE_DECIMAL_PLACES} after the point, e.g. 55.04")),
]
PurchaseOption = Literal["on-demand", "reserved", "training-plan"]
CurrencyCode = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$"), Field(
    description="an ISO 4217 currency code, three capital letters, e.g. USD or EUR")]


class InstancePrice(StrictModel):
    """What one instance of a type costs the org per hour it is in a cluster (HyperPod bills a
    cluster's instances for as long as they are allocated, used or not)."""

    per_instance_hour: Price
    purchase_option: PurchaseOption = Field(description=(
        "how the org pays for these instances, for the reader of the chargeback: on-demand (the public "
        "price), reserved (a committed rate: a savings plan or reserved capacity), training-plan (a SageMaker "
        "flexible training plan's upfront price spread over its hours)"))


class Pricing(StrictModel):
    """Prices of instance-hours, for the usage chargeback (`usage.chargeback`): an instance type
    with accelerators is charged per accelerator-hour (its price / accelerators per instance), a
    CPU-only type per vCPU-hour (its price / vCPUs). A type without a price is reported unpriced,
    never charged zero."""

    currency: CurrencyCode = Field(default="USD", description=(
        "the currency of every price here and of the chargeback: its ISO 4217 code, three capital letters "
        "(e.g. USD, EUR); default USD, the currency of the projects' budgets"))
    instance_types: dict[InstanceType, InstancePrice] = Field(default_factory=dict, description=(
        "the price per instance-hour of each instance type the org allows (allowed_instance_types)"))


ChangeOwner = Annotated[
    str,
    StringConstraints(pattern=r"^(platform-admins|project-leads|project-members|@[A-Za-z0-9][A-Za-z0-9_.-]{0,38}"
                              r"(/[A-Za-z0-9_.-]{1,100})?|[^@\s]+@[^@\s]+\.[A-Za-z]{2,})$"),
    Field(description="'platform-admins', 'project-leads' (of the project the path belongs to), "
                      "'project-members', a '@user' / '@org/team' handle, or an e-mail address"),
]
PathGlob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.*?{},<>/-]+$", max_length=300),
                     Field(description="a path glob relative to the tree root: '*' and '?' within one segment, "
                                       "'**' across segments, '{a,b}' either; '<project>' stands for each "
                                       "project's name, e.g. 'projects/<project>.yaml'")]


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
    trusted_external_accounts: list[TrustedExternalAccount] = Field(default_factory=list, description=(
        "accounts outside `accounts` whose IAM principals may be members, owners or platform admins; "
        "every other principal must be in one of `accounts` (Identity Center principals always are)"))
    permission_boundary: PermissionBoundary
    personas: Personas
    cost_allocation: CostAllocation = CostAllocation()
    allowed_instance_types: list[InstanceType] = Field(min_length=1)
    pricing: Pricing | None = Field(default=None, description=(
        "prices per instance-hour for the usage chargeback; without it, every pool is reported unpriced"))
    platform_admins: list[Principal] = Field(min_length=1)
    platform_admins_on_git_host: list[GitHostOwner] = Field(default_factory=list, description=(
        "the platform admins on the Git host ('@org/team', '@user', '@group/subgroup', e-mail): the code "
        "owners `hypergov codeowners` writes wherever change_control names 'platform-admins' and for every "
        "path no rule matches; required by that command, read by nothing else"))
    change_control: list[ChangeRule] = Field(default_factory=list)
    identity_center: IdentityCenter | None = Field(default=None, description=(
        "IAM Identity Center; required when any member is 'identitycenter:...'"))

    def account(self, name: str) -> Account | None:
        return next((a for a in self.accounts if a.name == name), None)

    def trusted_account_ids(self) -> frozenset[str]:
        """Accounts whose IAM principals may be trusted: the org's own and the listed external ones."""
        return frozenset([*(str(a.id) for a in self.accounts), *(str(a.id) for a in self.trusted_external_accounts)])
