"""The escalation set: every action that lets a principal inside the maximum boundary remove,
rewrite or get around it. PERM003 refuses a boundary or a project grant that reaches any of them.

The set is defined by what actions do, not as a list to keep up by hand: each category below
says why its actions escalate and selects them from AWS's action catalogue (`aws_actions`) by
service and access level where AWS's access level says it (IAM's "Permissions management" is
exactly the actions that change what a principal may do), and lists them explicitly, with the
reason, where no access level does. The explicit lists follow the publicly documented IAM
privilege-escalation methods of Rhino Security Labs
(https://github.com/RhinoSecurityLabs/AWS-IAM-Privilege-Escalation, methods #1-#28, cited by
number) and hypergov's own trust model (Identity Center users by name, groups by permission
set). A method that needs two permissions (iam:PassRole with lambda:CreateFunction, ec2:RunInstances,
glue:CreateDevEndpoint, cloudformation:CreateStack, datapipeline:CreatePipeline, ...) is closed by
its escalating member (iam:PassRole); the other member is ordinary work and stays grantable.
Every member is a published action (a test checks it), so a message always names a real one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from hypergov.rules.aws_actions import PERMISSIONS, TAGGING, WRITE, Action, line_regex, service_actions
from hypergov.rules.iam_patterns import normalize


@dataclass(frozen=True)
class Category:
    """One reason an action escalates, and how its members are found in the catalogue."""

    name: str
    why: str
    services: tuple[str, ...] = ()
    levels: frozenset[str] = frozenset()  # select the services' actions with one of these levels ...
    name_pattern: str = ".*"  # ... whose name matches this (anchored) regular expression
    explicit: tuple[str, ...] = ()  # and these, "service:Action" as AWS spells them

    def selects(self, action: Action) -> bool:
        return (bool(action.access_levels & self.levels) and TAGGING not in action.access_levels
                and re.fullmatch(self.name_pattern, action.name) is not None)


CATEGORIES: tuple[Category, ...] = (
    Category(
        "IAM permissions management",
        "attach, detach, put and delete identity policies, create and version managed policies, set or "
        "delete permissions boundaries, rewrite trust policies (UpdateAssumeRolePolicy) and the password "
        "policy (Rhino #1, #2, #7-#12, #14)",
        services=("iam",), levels=frozenset({PERMISSIONS})),
    Category(
        "IAM credentials of other users",
        "create, reset, re-activate or re-enable another user's access keys, console password, "
        "service-specific credentials, SSH keys, signing certificates or MFA devices (Rhino #4-#6)",
        services=("iam",), levels=frozenset({WRITE}),
        name_pattern=r"(Create|Update|Reset|Upload|Enable|Deactivate|Resync)"
                     r"(AccessKey|LoginProfile|ServiceSpecificCredential|SSHPublicKey|SigningCertificate"
                     r"|MFADevice|VirtualMFADevice)"),
    Category(
        "IAM principals, roles and federation",
        "new users and roles (without hypergov's boundary or path), group membership (Rhino #13; leaving "
        "a group escapes its denies), passing roles to services (Rhino #3, #15-#17, #19, #21, #22, #24, "
        "#27) and into instance profiles, identity providers whose tokens roles trust, and root sessions "
        "in member accounts",
        explicit=("iam:CreateRole", "iam:CreateUser", "iam:AddUserToGroup", "iam:RemoveUserFromGroup",
                  "iam:PassRole", "iam:AddRoleToInstanceProfile", "iam:CreateOpenIDConnectProvider",
                  "iam:UpdateOpenIDConnectProviderThumbprint", "iam:AddClientIDToOpenIDConnectProvider",
                  "iam:CreateSAMLProvider", "iam:UpdateSAMLProvider",
                  "iam:EnableOrganizationsRootCredentialsManagement", "iam:EnableOrganizationsRootSessions")),
    Category(
        "STS credentials of other principals",
        "temporary credentials of another role, a federated user, or a member account's root user "
        "(Rhino #14 with UpdateAssumeRolePolicy)",
        explicit=("sts:AssumeRole", "sts:AssumeRoleWithSAML", "sts:AssumeRoleWithWebIdentity", "sts:AssumeRoot",
                  "sts:GetFederationToken", "sts:GetDelegatedAccessToken")),
    Category(
        "Organizations structure and policies",
        "every Organizations action that writes: accounts into, out of and between OUs and the "
        "organization (MoveAccount, RemoveAccountFromOrganization, LeaveOrganization, CreateAccount, "
        "InviteAccountToOrganization ...), OUs, delegated administrators, trusted services, and SCPs "
        "and their policy types (Attach/Detach/Update/DeletePolicy, DisablePolicyType ...)",
        services=("organizations",), levels=frozenset({WRITE, PERMISSIONS})),
    Category(
        "Identity Center users, groups and permission sets",
        "hypergov trusts Identity Center users by name and groups through the permission set of the same "
        "name: whoever writes the identity store, the directory, the permission sets or the account "
        "assignments can become any trusted principal",
        services=("sso", "identitystore", "sso-directory"), levels=frozenset({WRITE, PERMISSIONS})),
    Category(
        "resources that run with a role",
        "one permission on an existing resource runs code with that resource's role: Lambda code (Rhino "
        "#18) and layers (#26), a Glue development endpoint's SSH key (#20), a SageMaker notebook "
        "(#28). CodeStar's methods (#23, #25) are left out: AWS retired CodeStar and its actions are no "
        "longer in the catalogue",
        explicit=("lambda:UpdateFunctionCode", "lambda:UpdateFunctionConfiguration", "glue:UpdateDevEndpoint",
                  "sagemaker:CreatePresignedNotebookInstanceUrl")),
)


@cache
def escalation_by_category() -> dict[str, tuple[str, ...]]:
    """Each category's members, as AWS spells them, in a stable order."""
    result: dict[str, tuple[str, ...]] = {}
    for category in CATEGORIES:
        found = {a.full for s in category.services for a in service_actions(s) if category.selects(a)}
        found.update(category.explicit)
        result[category.name] = tuple(sorted(found, key=str.lower))
    return result


@cache
def escalation_actions() -> tuple[str, ...]:
    """The whole set: every action PERM003 keeps out of reach, by category (in CATEGORIES'
    order, so messages name the most telling first), then alphabetically."""
    ordered = (a for members in escalation_by_category().values() for a in members)
    return tuple(dict.fromkeys(ordered))


@cache
def _by_lower() -> dict[str, str]:
    return {a.lower(): a for a in escalation_actions()}


@cache
def category_of(action: str) -> str:
    return next(name for name, members in escalation_by_category().items() if action in members)


@cache
def _members_text() -> str:
    return "\n".join(_by_lower())


@cache
def _limits() -> tuple[int, frozenset[str]]:
    """The longest member, and the members' service prefixes (cheap filters before a scan)."""
    return max(map(len, _by_lower())), frozenset(a.partition(":")[0] for a in _by_lower())


def _trivially_none(text: str) -> bool:
    """No member can match: the pattern needs more characters than the longest member has, or
    names a service no member is of."""
    longest, services = _limits()
    service, colon, _ = text.partition(":")
    literal_service = colon and "*" not in service and "?" not in service
    return len(text) - text.count("*") > longest or bool(literal_service and service not in services)


def escalation_cost(pattern: str) -> int:
    """Search steps a PERM003 check of `pattern` is charged: nothing when a lookup or a filter
    answers it, else about what compiling and running its regular expression costs."""
    text = normalize(pattern)
    if ("*" not in text and "?" not in text) or _trivially_none(text):
        return 0
    return 4 * len(text)


@lru_cache(maxsize=65536)
def escalation_matches(pattern: str) -> tuple[str, ...]:
    """The members of the escalation set `pattern` matches (IAM semantics), in the set's order."""
    text = normalize(pattern)
    if "*" not in text and "?" not in text:
        hit = _by_lower().get(text)
        return (hit,) if hit else ()
    if _trivially_none(text):
        return ()
    members = _by_lower()
    return tuple(members[m.group(0)] for m in line_regex(pattern).finditer(_members_text()))
