"""Live drift of IAM Identity Center (permission sets and account assignments), decided without I/O.

The desired objects are the `aws:ssoadmin/*` resources of every stack (`components.identity_center`:
a permission set per persona with Identity Center members, its inline policy, the org boundary as a
customer-managed reference, an account assignment per member and account), with the lookups
already resolved (`engines.live.lookups`: a member's principal id is what the identity store
returned). The live ones are what sso-admin returned in the Identity Center account and region
(`LivePermissionSet`: DescribePermissionSet, GetInlinePolicyForPermissionSet,
GetPermissionsBoundaryForPermissionSet, ListManagedPoliciesInPermissionSet,
ListCustomerManagedPolicyReferencesInPermissionSet, ListTagsForResource; ListAccountAssignments per
hypergov permission set and org account). A declared object refers to its permission set by the
set's output ARN (`<arn:permission-set-engineer>` in the captured graph): the set is matched by
name, the name its stack declares.

Kinds (attribute paths in the inputs' spelling, as every scan module reports them and
`engines.live.scan_plan` turns into terraform's):
- `changed`: a declared permission set whose description, session duration or tags differ; a
  declared inline policy whose document differs; a declared boundary attachment naming another
  policy. Terraform's apply of the stack restores each (the resource owns that attribute).
- `missing`: a declared permission set, inline policy, boundary or assignment that is not live. An
  assignment whose member's lookup found nothing (the group or user was deleted from, or renamed
  in, the identity store; its `principalId` still holds the placeholder) is missing too, with a
  fix that says so: no apply can recreate it until the tree or the identity store changes.
- `unmanaged` (prunable): an assignment of a declared permission set to a principal or account no
  stack declares; a permission set named as hypergov names them (`<org>-<team>-<persona slug>` for
  a project of the tree, `<org>-platform-admin`) that no stack declares; a managed policy or
  customer-managed policy reference attached to a declared permission set. Attachments are
  unmanaged, not `changed`, for the reason IAM's are (`engines.live.iam`): hypergov declares none,
  terraform's `aws_ssoadmin_permission_set` does not own them (they are resources of their own,
  `aws_ssoadmin_managed_policy_attachment`), so an apply would leave them and a `changed` item
  would never clear; deleting exactly them is what repairs it. Nor `unbounded`: that kind is an
  IAM role without the org boundary or granting beyond it; a project permission set keeps its
  boundary attachment (its absence is that declared object `missing`), which bounds whatever is
  attached beside it.
sso-admin names no last modifier, so `changed_by`/`changed_at` stay None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.desired import DesiredObject, address_of
from engines.live.documents import parsed, same_document
from engines.live.items import AttributeDrift, DriftItem, DriftKind, attribute
from engines.type_mappings import tf_name
from hypergov import naming
from hypergov.model.common import PERSONAS
from hypergov.model.tree import GovernanceTree
from stacks.resource_graph import LOOKUP_PLACEHOLDER
from stacks.spec import StackSpec

PERMISSION_SET = "aws:ssoadmin/permissionSet:PermissionSet"
INLINE_POLICY = "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy"
BOUNDARY = "aws:ssoadmin/permissionsBoundaryAttachment:PermissionsBoundaryAttachment"
ASSIGNMENT = "aws:ssoadmin/accountAssignment:AccountAssignment"
# What hypergov never declares, found attached to its permission sets (Pulumi's and terraform's types).
MANAGED_ATTACHMENT = "aws:ssoadmin/managedPolicyAttachment:ManagedPolicyAttachment"
CUSTOMER_ATTACHMENT = "aws:ssoadmin/customerManagedPolicyAttachment:CustomerManagedPolicyAttachment"
_TF_TYPES = {MANAGED_ATTACHMENT: "aws_ssoadmin_managed_policy_attachment",
             CUSTOMER_ATTACHMENT: "aws_ssoadmin_customer_managed_policy_attachment"}
IDENTITY_CENTER_TYPES = (PERMISSION_SET, INLINE_POLICY, BOUNDARY, ASSIGNMENT)
DEFAULT_POLICY_PATH = "/"
_ARN_REFERENCE = "<arn:"


@dataclass(frozen=True)
class LivePermissionSet:
    """One permission set as sso-admin returned it (the policies and tags only for hypergov's)."""

    arn: str
    name: str
    description: str | None = None
    session_duration: str | None = None
    inline_policy: Any = None  # the document (text or parsed); None: none
    boundary: Mapping[str, Any] | None = None  # in the inputs' spelling (`boundary_of`); None: none
    managed_policies: tuple[str, ...] = ()  # ARNs
    customer_policies: tuple[tuple[str, str], ...] = ()  # (name, path)
    tags: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, described: Mapping[str, Any], *, inline: str | None = None,
             boundary: Mapping[str, Any] | None = None, managed: Iterable[Mapping[str, Any]] = (),
             customer: Iterable[Mapping[str, Any]] = (), tags: Iterable[Mapping[str, str]] = ()) -> LivePermissionSet:
        """From DescribePermissionSet's `PermissionSet`, GetInlinePolicyForPermissionSet's
        `InlinePolicy`, GetPermissionsBoundaryForPermissionSet's `PermissionsBoundary`, the
        `AttachedManagedPolicies`, `CustomerManagedPolicyReferences` and `Tags` lists."""
        return cls(arn=str(described["PermissionSetArn"]), name=str(described["Name"]),
                   description=described.get("Description"), session_duration=described.get("SessionDuration"),
                   inline_policy=inline or None, boundary=boundary_of(boundary),
                   managed_policies=tuple(sorted(str(p["Arn"]) for p in managed)),
                   customer_policies=tuple(sorted((str(p["Name"]), str(p.get("Path") or DEFAULT_POLICY_PATH))
                                                  for p in customer)),
                   tags={t["Key"]: t["Value"] for t in tags})


def boundary_of(live: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """An API `PermissionsBoundary` in the inputs' spelling (`{"customerManagedPolicyReference":
    {"name", "path"}}` or `{"managedPolicyArn"}`), the path defaulted as the API defaults it."""
    if not live:
        return None
    reference = live.get("CustomerManagedPolicyReference") or live.get("customerManagedPolicyReference")
    if reference:
        return {"customerManagedPolicyReference": {
            "name": str(reference.get("Name", reference.get("name"))),
            "path": str(reference.get("Path") or reference.get("path") or DEFAULT_POLICY_PATH)}}
    arn = live.get("ManagedPolicyArn") or live.get("managedPolicyArn")
    return {"managedPolicyArn": str(arn)} if arn else None


@dataclass(frozen=True)
class LiveAssignment:
    permission_set_arn: str
    account: str
    principal_type: str
    principal_id: str

    @classmethod
    def read(cls, listed: Mapping[str, Any]) -> LiveAssignment:
        """From a ListAccountAssignments `AccountAssignment`."""
        return cls(permission_set_arn=str(listed["PermissionSetArn"]), account=str(listed["AccountId"]),
                   principal_type=str(listed["PrincipalType"]), principal_id=str(listed["PrincipalId"]))


@dataclass(frozen=True)
class LiveIdentityCenter:
    """The instance's permission sets (by name) and the assignments read (of declared sets)."""

    permission_sets: Mapping[str, LivePermissionSet]
    assignments: tuple[LiveAssignment, ...] = ()


@dataclass(frozen=True)
class OrgIdentityCenter:
    """What the tree says of Identity Center beyond the desired objects: where the instance is, the
    org's accounts, the permission set names hypergov gives and whose they are."""

    instance_arn: str
    account: str  # the Identity Center account's id
    region: str
    aliases: Mapping[str, str]  # account id -> its alias in org.yaml
    owners: Mapping[str, tuple[str, str]]  # permission set name hypergov gives -> (stack, logical name)
    # a lookup's name -> the member it reads ("group ml-platform-admins"), for the deleted-member fix
    members: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: GovernanceTree, specs: Sequence[StackSpec],
           members: Mapping[str, str] | None = None) -> OrgIdentityCenter | None:
        if tree.org is None or tree.org.model.identity_center is None:
            return None
        org = tree.org.model
        ic = org.identity_center
        assert ic is not None
        account = org.account(ic.account)
        if account is None:
            return None
        owners = {naming.platform_admin_permission_set_name(org.name): (naming.org_stack(),
                                                                        "permission-set-platform-admin")}
        for spec in specs:
            if spec.kind == "project":
                for persona in PERSONAS:
                    owners[naming.permission_set_name(org.name, spec.subject, persona)] = (
                        spec.name, f"permission-set-{naming.PERSONA_SLUG[persona]}")
        return cls(instance_arn=ic.instance_arn, account=str(account.id), region=ic.region,
                   aliases={str(a.id): a.name for a in org.accounts}, owners=owners, members=dict(members or {}))

    @property
    def accounts(self) -> tuple[str, ...]:
        return tuple(sorted(self.aliases))


def member_lookups(lookups: Iterable[Any]) -> dict[str, str]:
    """lookup name -> "group <display name>" / "user <user name>", for the identity-store reads."""
    found: dict[str, str] = {}
    for lookup in lookups:
        kind = {"aws:identitystore/getGroup:getGroup": "group", "aws:identitystore/getUser:getUser": "user"}.get(
            lookup.type)
        if kind:
            unique = (lookup.inputs.get("alternateIdentifier") or {}).get("uniqueAttribute") or {}
            found[lookup.name] = f"{kind} {unique.get('attributeValue', '?')}"
    return found


@dataclass(frozen=True)
class Declared:
    """Every stack's desired Identity Center objects, keyed by their identity in sso-admin."""

    permission_sets: Mapping[str, DesiredObject]  # name ->
    inline: Mapping[str, DesiredObject]  # permission set name ->
    boundaries: Mapping[str, DesiredObject]  # permission set name ->
    assignments: Mapping[tuple[str, str, str, str], DesiredObject]  # (set name, account, type, principal id) ->

    @classmethod
    def of(cls, desired: Iterable[DesiredObject]) -> Declared:
        objs = list(desired)
        sets = {(o.stack, o.name): o for o in objs if o.type == PERMISSION_SET}

        def set_name(obj: DesiredObject) -> str | None:
            reference = str(obj.input("permissionSetArn") or "")
            if reference.startswith(_ARN_REFERENCE) and reference.endswith(">"):
                found = sets.get((obj.stack, reference[len(_ARN_REFERENCE):-1]))
                return str(found.input("name")) if found is not None else None
            return None

        inline: dict[str, DesiredObject] = {}
        boundaries: dict[str, DesiredObject] = {}
        assignments: dict[tuple[str, str, str, str], DesiredObject] = {}
        for obj in objs:
            if obj.type not in (INLINE_POLICY, BOUNDARY, ASSIGNMENT):
                continue
            name = set_name(obj)
            if name is None:  # a set of another stack's, or none: nothing to match it with
                continue
            if obj.type == INLINE_POLICY:
                inline[name] = obj
            elif obj.type == BOUNDARY:
                boundaries[name] = obj
            else:
                assignments[(name, str(obj.input("targetId")), str(obj.input("principalType")),
                             str(obj.input("principalId")))] = obj
        return cls(permission_sets={str(o.input("name")): o for o in sets.values() if o.input("name")},
                   inline=inline, boundaries=boundaries, assignments=assignments)

    def hypergov_names(self, org: OrgIdentityCenter) -> frozenset[str]:
        """The permission sets whose policies and assignments the scan reads: declared, or named as
        hypergov names them."""
        return frozenset({*self.permission_sets, *org.owners})


def compare(org: OrgIdentityCenter, desired: Iterable[DesiredObject], live: LiveIdentityCenter) -> list[DriftItem]:
    """Every changed, missing and unmanaged Identity Center object of the instance."""
    declared = Declared.of(desired)
    items: list[DriftItem] = []
    for name, obj in sorted(declared.permission_sets.items()):
        items += _permission_set_items(org, obj, live.permission_sets.get(name))
    for name, obj in sorted(declared.inline.items()):
        found = live.permission_sets.get(name)
        if found is None or found.inline_policy is None:
            items.append(_declared_item(org, obj, "missing"))
        elif not same_document(obj.document("inlinePolicy"), found.inline_policy):
            items.append(_declared_item(org, obj, "changed", (
                attribute("inlinePolicy", obj.document("inlinePolicy"), parsed(found.inline_policy)),)))
    for name, obj in sorted(declared.boundaries.items()):
        found = live.permission_sets.get(name)
        want = boundary_of(_api_spelling(obj.input("permissionsBoundary")))
        if found is None or found.boundary is None:
            items.append(_declared_item(org, obj, "missing"))
        elif want != found.boundary:
            items.append(_declared_item(org, obj, "changed", (attribute("permissionsBoundary", want, found.boundary),)))
    items += _assignment_items(org, declared, live)
    items += _unmanaged(org, declared, live)
    return items


def _api_spelling(boundary: Any) -> dict[str, Any] | None:
    """A declared `permissionsBoundary` input as the API spells it (for `boundary_of`)."""
    if not isinstance(boundary, Mapping):
        return None
    reference = boundary.get("customerManagedPolicyReference")
    if reference:
        return {"CustomerManagedPolicyReference": {"Name": reference.get("name"), "Path": reference.get("path")}}
    return {"ManagedPolicyArn": boundary.get("managedPolicyArn")} if boundary.get("managedPolicyArn") else None


def _permission_set_items(org: OrgIdentityCenter, obj: DesiredObject,
                          live: LivePermissionSet | None) -> list[DriftItem]:
    if live is None:
        return [_declared_item(org, obj, "missing")]
    changed: list[AttributeDrift] = []
    for key, have in (("description", live.description), ("sessionDuration", live.session_duration)):
        want = obj.input(key)
        if want is not None and (want or None) != (have or None):
            changed.append(attribute(key, want, have))
    if obj.input("tags") is not None and dict(obj.input("tags")) != dict(live.tags):
        changed.append(attribute("tags", dict(obj.input("tags")), dict(live.tags)))
    return [_declared_item(org, obj, "changed", tuple(changed))] if changed else []


def _declared_item(org: OrgIdentityCenter, obj: DesiredObject, kind: DriftKind,
                   attributes: tuple[AttributeDrift, ...] = (), fix: str | None = None) -> DriftItem:
    verb = "creates" if kind == "missing" else "restores"
    return DriftItem(kind=kind, stack=obj.stack, address=obj.address, type=obj.type,
                     account=obj.account or org.account, region=obj.region or org.region,
                     fix=fix or f"hypergov apply --stack {obj.stack} {verb} it", attributes=attributes)


def _where_declared(stack: str) -> str:
    return f"projects/{stack.removeprefix('project-')}.yaml" if stack.startswith("project-") else "org.yaml"


def _assignment_items(org: OrgIdentityCenter, declared: Declared, live: LiveIdentityCenter) -> list[DriftItem]:
    arns = {ps.arn: name for name, ps in live.permission_sets.items()}
    found = {(arns.get(a.permission_set_arn, ""), a.account, a.principal_type, a.principal_id)
             for a in live.assignments}
    items: list[DriftItem] = []
    for key, obj in sorted(declared.assignments.items()):
        if key in found:
            continue
        placeholder = LOOKUP_PLACEHOLDER.search(str(obj.input("principalId") or ""))
        if placeholder is None:
            items.append(_declared_item(org, obj, "missing"))
            continue
        member = org.members.get(placeholder["name"], "member")
        items.append(_declared_item(org, obj, "missing", (AttributeDrift("principalId", member, None),), fix=(
            f"the {member} no longer exists in Identity Center (deleted or renamed in identity store): "
            f"create it there again, or remove it from {_where_declared(obj.stack)}")))
    return items


def _address(type_token: str, logical: str) -> str:
    tf_type = _TF_TYPES.get(type_token)
    return f"{tf_type}.{tf_name(logical)}" if tf_type else address_of(type_token, logical)


def _unmanaged(org: OrgIdentityCenter, declared: Declared, live: LiveIdentityCenter) -> list[DriftItem]:
    items: list[DriftItem] = []

    def item(stack: str, address: str, type_token: str, fix: str, attributes: tuple[AttributeDrift, ...],
             ref: dict[str, str]) -> None:
        items.append(DriftItem(kind="unmanaged", stack=stack, address=address, type=type_token, account=org.account,
                               region=org.region, fix=fix, attributes=attributes,
                               ref={"InstanceArn": org.instance_arn, **ref}))

    for name, ps in sorted(live.permission_sets.items()):
        obj = declared.permission_sets.get(name)
        if obj is None:
            owner = org.owners.get(name)
            if owner is not None:
                item(owner[0], address_of(PERMISSION_SET, owner[1]), PERMISSION_SET,
                     f"delete it with its assignments (hypergov drift --prune-unmanaged) or declare it in "
                     f"{_where_declared(owner[0])}", _listing(ps), {"PermissionSetArn": ps.arn, "Name": name})
            continue
        prune = f"detach it (hypergov drift --prune-unmanaged): {obj.stack} declares permission set {name} without it"
        for arn in ps.managed_policies:
            item(obj.stack, _address(MANAGED_ATTACHMENT, f"{name}/{arn.rsplit('/', 1)[-1]}"), MANAGED_ATTACHMENT,
                 prune, (AttributeDrift("managedPolicyArn", None, arn),),
                 {"PermissionSetArn": ps.arn, "ManagedPolicyArn": arn})
        for policy, path in ps.customer_policies:
            item(obj.stack, _address(CUSTOMER_ATTACHMENT, f"{name}/{policy}"), CUSTOMER_ATTACHMENT, prune,
                 (AttributeDrift("customerManagedPolicyReference", None, {"name": policy, "path": path}),),
                 {"PermissionSetArn": ps.arn, "Name": policy, "Path": path})
    members = _member_names(declared)
    arns = {ps.arn: name for name, ps in live.permission_sets.items()}
    for a in sorted(live.assignments, key=lambda a: (a.permission_set_arn, a.account, a.principal_type,
                                                     a.principal_id)):
        set_name = arns.get(a.permission_set_arn)
        obj = declared.permission_sets.get(set_name or "")
        if obj is None or (set_name, a.account, a.principal_type, a.principal_id) in declared.assignments:
            continue
        who = members.get((a.principal_type, a.principal_id), f"{a.principal_type.lower()}-{a.principal_id}")
        alias = org.aliases.get(a.account, a.account)
        logical = f"{obj.name.removeprefix('permission-set-')}-{who}@{alias}"
        item(obj.stack, address_of(ASSIGNMENT, f"assignment-{logical}"), ASSIGNMENT,
             f"delete it (hypergov drift --prune-unmanaged), or make the {who.replace('-', ' ', 1)} a member of the "
             f"persona in {_where_declared(obj.stack)}",
             (AttributeDrift("principalType", None, a.principal_type),
              AttributeDrift("principalId", None, a.principal_id), AttributeDrift("targetId", None, a.account)),
             {"PermissionSetArn": a.permission_set_arn, "TargetId": a.account, "TargetType": "AWS_ACCOUNT",
              "PrincipalType": a.principal_type, "PrincipalId": a.principal_id})
    return items


def _member_names(declared: Declared) -> dict[tuple[str, str], str]:
    """(principal type, id) -> the member key its declared assignments carry ("group-support"), for
    naming an assignment nobody declares of a principal the tree knows."""
    found: dict[tuple[str, str], str] = {}
    for obj in declared.assignments.values():
        stem = obj.name.split("@", 1)[0]
        kind = "group-" if obj.input("principalType") == "GROUP" else "user-"
        at = stem.find(kind)
        if at >= 0:
            found[(str(obj.input("principalType")), str(obj.input("principalId")))] = stem[at:]
    return found


def _listing(ps: LivePermissionSet) -> tuple[AttributeDrift, ...]:
    shown = [AttributeDrift("name", None, ps.name), AttributeDrift("sessionDuration", None, ps.session_duration)]
    if ps.description:
        shown.append(AttributeDrift("description", None, ps.description))
    return tuple(shown)
