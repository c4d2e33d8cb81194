"""Permission containment: nothing a project role can do lies outside the org's maximum
boundary, and nothing grantable can remove that boundary."""

from __future__ import annotations

from collections.abc import Iterator

from hypergov.model.common import PERSONAS
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem, SourcePos
from hypergov.rules.base import problem
from hypergov.rules.iam_patterns import matches, overlapping_action, uncovered_action

# Actions that let a principal remove, detach or rewrite a permissions boundary or an SCP, or
# mint a principal that carries none. A boundary that allows any of them is not a boundary.
BOUNDARY_TAMPERING = (
    "iam:DeleteRolePermissionsBoundary", "iam:PutRolePermissionsBoundary",
    "iam:DeleteUserPermissionsBoundary", "iam:PutUserPermissionsBoundary",
    "iam:CreatePolicyVersion", "iam:SetDefaultPolicyVersion", "iam:DeletePolicyVersion",
    "iam:DeletePolicy", "iam:CreateRole", "iam:CreateUser",
    "organizations:DetachPolicy", "organizations:DeletePolicy", "organizations:UpdatePolicy",
    "organizations:DisablePolicyType", "organizations:LeaveOrganization",
)


def tampering_actions(pattern: str) -> list[str]:
    return [a for a in BOUNDARY_TAMPERING if matches(pattern, a)]


def check_permissions(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    org = tree.org
    allow = tuple(org.model.permission_boundary.allow)
    deny = tuple(org.model.permission_boundary.deny)

    for i, pattern in enumerate(allow):
        reachable = [a for a in tampering_actions(pattern) if not any(matches(d, a) for d in deny)]
        if reachable:
            yield problem(org.pos("permission_boundary", "allow", i), "PERM003",
                          f"the boundary allows '{pattern}', which includes {', '.join(reachable[:3])}"
                          + (" ..." if len(reachable) > 3 else "")
                          + ": roles could remove or rewrite their own boundary",
                          f"add {', '.join(repr(a) for a in reachable[:3])} (or 'iam:*PermissionsBoundary') "
                          "to permission_boundary.deny")

    for persona in PERSONAS:
        for i, action in enumerate(org.model.personas.for_persona(persona).actions):
            pos = org.pos("personas", persona, "actions", i)
            yield from _containment(action, allow, deny, pos, "PERM004", f"persona {persona}'s org-wide policy")

    for name, project in sorted(tree.projects.items()):
        extra = project.model.extra_permissions
        for persona in PERSONAS:
            for i, action in enumerate(extra.of(persona)):
                pos = project.pos("extra_permissions", persona, i)
                yield from _containment(action, allow, deny, pos, "PERM001",
                                        f"project '{name}' grants {persona}")
                tamper = tampering_actions(action)
                if tamper:
                    yield problem(pos, "PERM003",
                                  f"'{action}' includes {', '.join(tamper[:3])}: the project's {persona} role "
                                  "could remove or rewrite the boundary that contains it",
                                  "grant a narrower action; boundary and SCP changes belong to platform admins")


def _containment(action: str, allow: tuple[str, ...], deny: tuple[str, ...], pos: SourcePos,
                 rule: str, who: str) -> Iterator[Problem]:
    uncovered = uncovered_action(action, allow)
    if uncovered is not None:
        example = f" (e.g. '{uncovered}')" if uncovered != action.lower() else ""
        yield problem(pos, rule, f"{who} '{action}', which is outside the org's maximum boundary{example}",
                      "narrow the action to what permission_boundary.allow in org.yaml covers, "
                      "or ask a platform admin to widen the boundary")
        return
    for d in deny:
        both = overlapping_action(action, d)
        if both is not None:
            yield problem(pos, "PERM002" if rule == "PERM001" else rule,
                          f"{who} '{action}', which overlaps the boundary's deny '{d}' (e.g. '{both}')",
                          "remove the action or narrow it so it no longer matches the denied actions")
            return
