"""Live drift of IAM roles and policies, decided without I/O.

The desired objects are the `aws:iam/*` resources of every stack (`engines.desired`); the
live ones are what GetAccountAuthorizationDetails returned for one account (every role with its
trust policy, boundary, tags, inline policies and attached policies, every customer managed
policy with its versions' documents) and, for the two role attributes that call does not carry
(description, maximum session duration), ListRoles. Only what a desired object sets is compared;
policy documents are compared as canonical JSON (`engines.live.iam_documents`), tags as maps.

Kinds:
- `changed` / `missing`: declared roles, inline role policies, customer managed policies and
  role policy attachments.
- `unmanaged`: roles under hypergov's IAM paths (`naming.ROLE_PATH`, `PLATFORM_ADMIN_ROLE_PATH`)
  that no stack declares, attributed to the project stack whose naming they follow, else `org`;
  inline policies and attached managed policies on a declared role that no stack declares; customer
  managed policies named as hypergov names its policies (the org's boundary, any name a stack
  gives a policy) where no stack declares one.
- `unbounded`: a role under `ROLE_PATH` (declared or not) whose live boundary is missing or is not
  the org's boundary policy, or whose live policies allow actions outside org.yaml's
  `permission_boundary` (an allow pattern not contained in `allow`, or overlapping `deny`, decided
  by the validation rules' containment; undecidable, a NotAction allow, or an attached policy whose
  document the scan did not read all count as outside: fail closed).

One role can give two items: its boundary (and escaping policies) as `unbounded`, everything else
as `changed`; a role under `ROLE_PATH` never reports its boundary as `changed`. An inline policy
nobody declares that grants beyond the boundary is both `unmanaged` (the policy, prunable) and
part of the role's `unbounded` item (the role, the security finding).
GAAD names no last modifier, so `changed_by`/`changed_at` stay None.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components import arns
from engines.desired import DesiredObject, address_of
from engines.live.documents import same_document
from engines.live.iam_documents import NOT_READ, BoundaryCheck
from engines.live.items import AttributeDrift, DriftItem, DriftKind, attribute
from hypergov import naming
from hypergov.model.common import PERSONAS
from hypergov.model.org import Organization
from hypergov.model.tree import GovernanceTree
from stacks.spec import StackSpec

ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
POLICY = "aws:iam/policy:Policy"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
IAM_TYPES = (ROLE, ROLE_POLICY, POLICY, ATTACHMENT)
HYPERGOV_PATHS = (naming.ROLE_PATH, naming.PLATFORM_ADMIN_ROLE_PATH)
LISTED_ROLE_INPUTS = ("description", "maxSessionDuration")  # carried by ListRoles, not by GAAD

def name_of_role(reference: Any) -> str:
    """A role named by name or by ARN (Pulumi accepts both for `role`)."""
    text = str(reference or "")
    return text.rsplit("/", 1)[-1] if text.startswith("arn:") else text


@dataclass(frozen=True)
class LiveRole:
    name: str
    path: str
    arn: str
    assume_role_policy: Any
    boundary: str | None
    tags: Mapping[str, str]
    inline: Mapping[str, Any]  # policy name -> document
    attached: tuple[str, ...]  # managed policy ARNs
    listed: Mapping[str, Any] | None = None  # its ListRoles entry, when that was read

    @classmethod
    def read(cls, detail: Mapping[str, Any], listed: Mapping[str, Any] | None = None) -> LiveRole:
        """From a GAAD RoleDetail (documents already decoded by botocore) and its ListRoles entry."""
        boundary = (detail.get("PermissionsBoundary") or {}).get("PermissionsBoundaryArn")
        return cls(name=str(detail["RoleName"]), path=str(detail.get("Path", "/")), arn=str(detail.get("Arn", "")),
                   assume_role_policy=_decoded(detail.get("AssumeRolePolicyDocument")), boundary=boundary,
                   tags={t["Key"]: t["Value"] for t in detail.get("Tags") or []},
                   inline={p["PolicyName"]: _decoded(p.get("PolicyDocument"))
                           for p in detail.get("RolePolicyList") or []},
                   attached=tuple(p["PolicyArn"] for p in detail.get("AttachedManagedPolicies") or []), listed=listed)

    @property
    def under_role_path(self) -> bool:
        return self.path.startswith(naming.ROLE_PATH)


@dataclass(frozen=True)
class LivePolicy:
    name: str
    arn: str
    path: str
    description: str | None
    document: Any  # the default version's

    @classmethod
    def read(cls, detail: Mapping[str, Any]) -> LivePolicy:
        default = detail.get("DefaultVersionId")
        versions = detail.get("PolicyVersionList") or []
        document = next((v.get("Document") for v in versions
                         if v.get("IsDefaultVersion") or v.get("VersionId") == default), None)
        return cls(name=str(detail["PolicyName"]), arn=str(detail["Arn"]), path=str(detail.get("Path", "/")),
                   description=detail.get("Description"), document=_decoded(document))


def _decoded(document: Any) -> Any:
    """botocore URL-decodes and parses GAAD's documents; a client that does not gives text."""
    return json.loads(document) if isinstance(document, str) and document else document


@dataclass(frozen=True)
class AccountIam:
    """The live IAM of one account, as one scan read it."""

    roles: Mapping[str, LiveRole]
    policies: Mapping[str, LivePolicy]  # customer managed, by name

    @classmethod
    def read(cls, roles: Iterable[Mapping[str, Any]], policies: Iterable[Mapping[str, Any]],
             listed: Mapping[str, Mapping[str, Any]] | None = None) -> AccountIam:
        found = {str(r["RoleName"]): LiveRole.read(r, (listed or {}).get(str(r["RoleName"]))) for r in roles}
        return cls(roles=found, policies={str(p["PolicyName"]): LivePolicy.read(p) for p in policies})

    def account_id(self) -> str:
        found = [r.arn for r in self.roles.values()] + [p.arn for p in self.policies.values()]
        arn = next((a for a in found if a), "")
        return arn.split(":")[4] if arn.count(":") >= 5 else ""


@dataclass(frozen=True)
class OrgIam:
    """What the tree says of IAM beyond the desired objects: the boundary, the names hypergov gives."""

    model: Organization
    allow: tuple[str, ...]
    deny: tuple[str, ...]
    aliases: Mapping[str, str]  # account id -> its alias in org.yaml
    role_owners: Mapping[str, tuple[str, str]]  # role name hypergov gives -> (stack, logical name without @alias)
    policy_owners: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # same, for managed policies

    @classmethod
    def of(cls, tree: GovernanceTree, specs: Sequence[StackSpec], desired: Iterable[DesiredObject]) -> OrgIam | None:
        if tree.org is None:
            return None
        org = tree.org.model
        owners = {naming.platform_admin_role_name(org.name): (naming.org_stack(), "platform-admin")}
        for spec in specs:
            if spec.kind == "project":
                for persona in PERSONAS:
                    owners[naming.role_name(org.name, spec.subject, persona)] = (
                        spec.name, f"role-{naming.PERSONA_SLUG[persona]}")
        policies = {naming.boundary_policy_name(org.name): (naming.org_stack(), "boundary")}
        for obj in desired:
            if obj.type == POLICY and obj.input("name"):
                policies.setdefault(str(obj.input("name")), (obj.stack, obj.name.split("@", 1)[0]))
        return cls(model=org, allow=tuple(org.permission_boundary.allow),
                   deny=tuple(org.permission_boundary.deny), aliases={str(a.id): a.name for a in org.accounts},
                   role_owners=owners, policy_owners=policies)

    def boundary_arn(self, account: str) -> str:
        return arns.boundary_policy_arn(self.model, account)

    def logical(self, prefix: str, account: str) -> str:
        alias = self.aliases.get(account)
        return f"{prefix}@{alias}" if alias else prefix

@dataclass(frozen=True)
class Declared:
    """One account's desired IAM objects, keyed by their IAM identity."""

    roles: Mapping[str, DesiredObject]
    inline: Mapping[tuple[str, str], DesiredObject]  # (role, policy name)
    attachments: Mapping[tuple[str, str], DesiredObject]  # (role, policy ARN)
    policies: Mapping[str, DesiredObject]

    @classmethod
    def of(cls, desired: Iterable[DesiredObject]) -> Declared:
        objs = list(desired)
        return cls(roles={str(o.input("name")): o for o in objs if o.type == ROLE and o.input("name")},
                   inline={(name_of_role(o.input("role")), str(o.input("name"))): o for o in objs
                           if o.type == ROLE_POLICY},
                   attachments={(name_of_role(o.input("role")), str(o.input("policyArn"))): o for o in objs
                                if o.type == ATTACHMENT},
                   policies={str(o.input("name")): o for o in objs if o.type == POLICY and o.input("name")})


def compare(org: OrgIam, account: str, region: str, desired: Iterable[DesiredObject],
            live: AccountIam) -> list[DriftItem]:
    """Every changed, missing, unmanaged and unbounded IAM object of one account."""
    declared = Declared.of(desired)
    items: list[DriftItem] = []
    for name, obj in sorted(declared.roles.items()):
        items += _role_items(obj, live.roles.get(name))
    for (role, name), obj in sorted(declared.inline.items()):
        found = live.roles.get(role)
        if found is None or name not in found.inline:
            items.append(_declared_item(obj, account, "missing"))
        elif not same_document(obj.document("policy"), found.inline[name]):
            items.append(_declared_item(obj, account, "changed",
                                        (attribute("policy", obj.document("policy"), found.inline[name]),)))
    for (role, arn), obj in sorted(declared.attachments.items()):
        found = live.roles.get(role)
        if found is None or arn not in found.attached:
            items.append(_declared_item(obj, account, "missing"))
    for name, obj in sorted(declared.policies.items()):
        items += _policy_items(obj, account, live.policies.get(name))
    items += _unmanaged(org, account, region, declared, live)
    items += _unbounded(org, account, region, declared, live)
    return items


def _role_items(obj: DesiredObject, live: LiveRole | None) -> list[DriftItem]:
    account = obj.account or (live.arn.split(":")[4] if live else "")
    if live is None:
        return [_declared_item(obj, account, "missing")]
    changed: list[AttributeDrift] = []
    if obj.input("path") is not None and obj.input("path") != live.path:
        changed.append(attribute("path", obj.input("path"), live.path))
    if not same_document(obj.document("assumeRolePolicy"), live.assume_role_policy):
        changed.append(attribute("assumeRolePolicy", obj.document("assumeRolePolicy"), live.assume_role_policy))
    # Under ROLE_PATH the boundary is the unbounded item's (one finding, one place).
    if obj.input("permissionsBoundary") is not None and not live.under_role_path \
            and obj.input("permissionsBoundary") != live.boundary:
        changed.append(attribute("permissionsBoundary", obj.input("permissionsBoundary"), live.boundary))
    if obj.input("tags") is not None and dict(obj.input("tags")) != dict(live.tags):
        changed.append(attribute("tags", dict(obj.input("tags")), dict(live.tags)))
    if live.listed is not None:
        for key, member in (("description", "Description"), ("maxSessionDuration", "MaxSessionDuration")):
            want, have = obj.input(key), live.listed.get(member)
            if want is not None and (want or None) != (have or None):
                changed.append(attribute(key, want, have))
    return [_declared_item(obj, account, "changed", tuple(changed))] if changed else []


def _policy_items(obj: DesiredObject, account: str, live: LivePolicy | None) -> list[DriftItem]:
    if live is None:
        return [_declared_item(obj, account, "missing")]
    changed: list[AttributeDrift] = []
    if obj.input("path") is not None and obj.input("path") != live.path:
        changed.append(attribute("path", obj.input("path"), live.path))
    if obj.input("description") is not None and (obj.input("description") or None) != (live.description or None):
        changed.append(attribute("description", obj.input("description"), live.description))
    if not same_document(obj.document("policy"), live.document):
        changed.append(attribute("policy", obj.document("policy"), live.document))
    return [_declared_item(obj, account, "changed", tuple(changed))] if changed else []


def _declared_item(obj: DesiredObject, account: str, kind: DriftKind,
                   attributes: tuple[AttributeDrift, ...] = ()) -> DriftItem:
    verb = "creates" if kind == "missing" else "restores"
    return DriftItem(kind=kind, stack=obj.stack, address=obj.address, type=obj.type, account=obj.account or account,
                     region=obj.region, fix=f"hypergov apply --stack {obj.stack} {verb} it", attributes=attributes,
                     ref=_ref(obj))


def _ref(obj: DesiredObject) -> dict[str, str]:
    if obj.type == ROLE:
        return {"RoleName": str(obj.input("name"))}
    if obj.type == ROLE_POLICY:
        return {"RoleName": name_of_role(obj.input("role")), "PolicyName": str(obj.input("name"))}
    if obj.type == ATTACHMENT:
        return {"RoleName": name_of_role(obj.input("role")), "PolicyArn": str(obj.input("policyArn"))}
    return {"PolicyName": str(obj.input("name"))}


def _where_declared(stack: str) -> str:
    return f"projects/{stack.removeprefix('project-')}.yaml" if stack.startswith("project-") else "org.yaml"


def role_owner(org: OrgIam, name: str, account: str) -> tuple[str, str]:
    """(stack, address) of a role no stack declares: the project (or org) stack whose naming it
    follows, at the address that stack would give it; else `org` at `aws_iam_role.<name>`."""
    owner = org.role_owners.get(name)
    if owner is None:
        return naming.org_stack(), address_of(ROLE, name)
    return owner[0], address_of(ROLE, org.logical(owner[1], account))


def _unmanaged(org: OrgIam, account: str, region: str, declared: Declared, live: AccountIam) -> list[DriftItem]:
    items: list[DriftItem] = []

    def item(stack: str, address: str, type_token: str, fix: str, attributes: tuple[AttributeDrift, ...],
             ref: dict[str, str]) -> None:
        items.append(DriftItem(kind="unmanaged", stack=stack, address=address, type=type_token, account=account,
                               region=region, fix=fix, attributes=attributes, ref=ref))

    for name, role in sorted(live.roles.items()):
        obj = declared.roles.get(name)
        if obj is None:
            if role.path.startswith(HYPERGOV_PATHS):
                stack, address = role_owner(org, name, account)
                item(stack, address, ROLE, f"delete it (hypergov drift --prune-unmanaged) or declare it in "
                     f"{_where_declared(stack)}", _role_listing(role), {"RoleName": name})
            continue
        prune = f"delete it (hypergov drift --prune-unmanaged): {obj.stack} declares role {name} without it"
        for policy, document in sorted(role.inline.items()):
            if (name, policy) not in declared.inline:
                item(obj.stack, address_of(ROLE_POLICY, f"{name}:{policy}"), ROLE_POLICY, prune,
                     (AttributeDrift("policy", None, document),), {"RoleName": name, "PolicyName": policy})
        for arn in role.attached:
            if (name, arn) not in declared.attachments:
                item(obj.stack, address_of(ATTACHMENT, f"{name}/{arn.rsplit('/', 1)[-1]}"), ATTACHMENT, prune,
                     (AttributeDrift("policyArn", None, arn),), {"RoleName": name, "PolicyArn": arn})
    for name, managed in sorted(live.policies.items()):
        owner = org.policy_owners.get(name)
        if owner is not None and name not in declared.policies:
            item(owner[0], address_of(POLICY, org.logical(owner[1], account)), POLICY,
                 "delete it (hypergov drift --prune-unmanaged): hypergov names a policy so, and no stack declares "
                 "it in this account", (AttributeDrift("policy", None, managed.document),), {"PolicyArn": managed.arn})
    return items


def _role_listing(role: LiveRole) -> tuple[AttributeDrift, ...]:
    shown: list[AttributeDrift] = [AttributeDrift("path", None, role.path),
                                   AttributeDrift("assumeRolePolicy", None, role.assume_role_policy),
                                   AttributeDrift("permissionsBoundary", None, role.boundary)]
    if role.inline:
        shown.append(AttributeDrift("inlinePolicies", None, sorted(role.inline)))
    if role.attached:
        shown.append(AttributeDrift("managedPolicyArns", None, sorted(role.attached)))
    return tuple(shown)


def _unbounded(org: OrgIam, account: str, region: str, declared: Declared, live: AccountIam) -> list[DriftItem]:
    """Roles under ROLE_PATH without the org's boundary or with policies granting beyond it."""
    check = BoundaryCheck(org.allow, org.deny)
    documents = {p.arn: p.document for p in live.policies.values()}
    items: list[DriftItem] = []
    for name, role in sorted(live.roles.items()):
        if not role.under_role_path:
            continue
        expected = org.boundary_arn(account)
        found: list[AttributeDrift] = []
        if role.boundary != expected:
            found.append(attribute("permissionsBoundary", expected, role.boundary))
        escaping: set[bool] = set()  # whether each policy granting beyond the boundary is declared
        for policy, document in sorted(role.inline.items()):
            if outside := check.actions_outside(document):
                found.append(AttributeDrift(f"inlinePolicies.{policy}", None, outside))
                escaping.add((name, policy) in declared.inline)
        for arn in sorted(role.attached):
            outside = check.actions_outside(documents[arn]) if arn in documents else [NOT_READ]
            if outside:
                found.append(AttributeDrift(f"managedPolicyArns.{arn}", None, outside))
                escaping.add((name, arn) in declared.attachments)
        if not found:
            continue
        obj = declared.roles.get(name)
        if obj is None:
            stack, address = role_owner(org, name, account)
            fix = f"delete it (hypergov drift --prune-unmanaged): no stack declares this role under {naming.ROLE_PATH}"
        else:
            stack, address = obj.stack, obj.address
            fix = _unbounded_fix(stack, boundary=role.boundary != expected, escaping=escaping)
        items.append(DriftItem(kind="unbounded", stack=stack, address=address, type=ROLE, account=account,
                               region=obj.region if obj else region, fix=fix, attributes=tuple(found),
                               ref={"RoleName": name}))
    return items


def _unbounded_fix(stack: str, *, boundary: bool, escaping: set[bool]) -> str:
    parts = []
    if boundary:
        parts.append(f"hypergov apply --stack {stack} re-attaches the boundary")
    if True in escaping:
        parts.append(f"hypergov apply --stack {stack} restores its declared policies")
    if False in escaping:
        parts.append("delete the policies no stack declares (hypergov drift --prune-unmanaged)")
    return "; ".join(parts)
