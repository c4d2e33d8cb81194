"""Permission containment: nothing a project role can do lies outside the org's maximum
boundary, nothing grantable can remove or get around that boundary (the escalation set), and
no pattern can stall the gate (each file's checks share a bounded search budget; what it cannot
decide is PERM005, never a verdict either way). Examples in messages are real AWS actions from
AWS's published catalogue whenever one exists."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from hypergov.model.common import PERSONAS
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem, SourcePos
from hypergov.rules.aws_actions import NotLookedUp, first_published
from hypergov.rules.base import problem
from hypergov.rules.escalation import category_of, escalation_cost, escalation_matches
from hypergov.rules.iam_patterns import (
    FILE_SEARCH_STEPS,
    MAX_SEARCH_STEPS,
    SearchBudget,
    decide_containment,
    decide_overlap,
    matches,
)


def tampering_actions(pattern: str) -> list[str]:
    """The escalation actions `pattern` matches (kept for callers of the former name)."""
    return list(escalation_matches(pattern))


# AWS Organizations quota: an SCP document holds at most 5,120 characters
# (https://docs.aws.amazon.com/organizations/latest/userguide/orgs_reference_limits.html). The SCP
# hypergov writes holds the boundary's allow (as NotAction) and deny lists, each action at least
# its length plus quotes and a comma. A larger boundary can never be applied; checking grants
# against it would only let an oversized org.yaml slow the gate.
SCP_MAX_CHARS = 5_120


def check_permissions(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    org = tree.org
    allow = tuple(org.model.permission_boundary.allow)
    deny = tuple(org.model.permission_boundary.deny)
    size = sum(len(a) + 3 for a in (*allow, *deny))
    if size > SCP_MAX_CHARS:
        yield problem(org.pos("permission_boundary"), "PERM005",
                      f"the boundary's allow and deny lists take at least {size:,} characters in the SCP hypergov "
                      f"writes, more than the {SCP_MAX_CHARS:,} an SCP may hold: AWS would refuse it, and no "
                      "permission is checked against it",
                      "merge actions into wildcard patterns (e.g. 's3:Get*') or remove some")
        return
    denied = _denied(deny)

    for i, pattern in enumerate(allow):
        reachable = [a for a in escalation_matches(pattern) if not denied(a)]
        if reachable:
            yield problem(org.pos("permission_boundary", "allow", i), "PERM003",
                          f"the boundary allows '{pattern}', which includes {_listing(reachable)}: roles could "
                          "remove, rewrite or get around their own boundary",
                          f"add {', '.join(repr(a) for a in reachable[:3])} (or a pattern covering "
                          f"{'them' if len(reachable) > 1 else 'it'}) to permission_boundary.deny")

    org_budget = SearchBudget()
    for persona in PERSONAS:
        for i, action in enumerate(org.model.personas.for_persona(persona).actions):
            pos = org.pos("personas", persona, "actions", i)
            yield from _containment(action, allow, deny, pos, "PERM004", f"persona {persona}'s org-wide policy",
                                    org_budget)

    for name, project in sorted(tree.projects.items()):
        extra = project.model.extra_permissions
        budget = SearchBudget()
        for persona in PERSONAS:
            for i, action in enumerate(extra.of(persona)):
                pos = project.pos("extra_permissions", persona, i)
                who = f"project '{name}' grants {persona}"
                if not budget.spend(escalation_cost(action)):
                    budget.remaining = 0
                    yield _too_complex(pos, action, who, budget)
                    continue
                yield from _containment(action, allow, deny, pos, "PERM001", who, budget)
                tamper = escalation_matches(action)
                if tamper:
                    yield problem(pos, "PERM003",
                                  f"'{action}' includes {_listing(list(tamper))}: the project's {persona} role "
                                  "could remove, rewrite or get around the boundary that contains it",
                                  "grant a narrower action; boundary, policy, role, credential and organization "
                                  "changes belong to platform admins")


def _listing(actions: list[str]) -> str:
    """'a, b, c and 12 more escalation actions (categories)', the first three named."""
    shown = ", ".join(actions[:3])
    more = f" and {len(actions) - 3} more escalation actions" if len(actions) > 3 else ""
    categories = sorted({category_of(a) for a in actions})
    return f"{shown}{more} ({'; '.join(categories)})"


def _denied(deny: tuple[str, ...]) -> Callable[[str], bool]:
    cache: dict[str, bool] = {}

    def denied(action: str) -> bool:
        if action not in cache:
            cache[action] = any(matches(d, action) for d in deny)
        return cache[action]
    return denied


def _containment(action: str, allow: tuple[str, ...], deny: tuple[str, ...], pos: SourcePos,
                 rule: str, who: str, budget: SearchBudget) -> Iterator[Problem]:
    inside = decide_containment(action, allow, budget=budget)
    if not inside.decided:
        yield _too_complex(pos, action, who, budget)
        return
    if inside.witness is not None:
        example = _example(action, inside.witness, lambda a: not any(matches(p, a) for p in allow), budget)
        yield problem(pos, rule, f"{who} '{action}', which is outside the org's maximum boundary{example}",
                      "narrow the action to what permission_boundary.allow in org.yaml covers, "
                      "or ask a platform admin to widen the boundary")
        return
    for d in deny:
        both = decide_overlap(action, d, budget=budget)
        if not both.decided:
            yield _too_complex(pos, action, who, budget)
            return
        if both.witness is not None:
            example = _example(action, both.witness, partial(matches, d), budget)
            yield problem(pos, "PERM002" if rule == "PERM001" else rule,
                          f"{who} '{action}', which overlaps the boundary's deny '{d}'{example}",
                          "remove the action or narrow it so it no longer matches the denied actions")
            return


def _example(action: str, witness: str, accept: Callable[[str], bool], budget: SearchBudget) -> str:
    """The example a message gives: a published action when one fits, else the exact witness
    and that only unpublished actions fit."""
    literal = "*" not in action and "?" not in action
    try:
        real = first_published(action, accept, budget=budget)
    except NotLookedUp:
        return "" if literal else f" (e.g. '{witness}'; AWS's catalogue was not searched: this file used up its " \
                                  "search budget)"
    if literal:
        return "" if real is not None else f" ('{action}' is not an action AWS has published)"
    if real is not None:
        return f" (e.g. '{real}')"
    return f" (it matches only actions AWS has not published, e.g. '{witness}')"


def _too_complex(pos: SourcePos, action: str, who: str, budget: SearchBudget) -> Problem:
    if budget.exhausted:
        why = f"this file's patterns used up its search budget of {FILE_SEARCH_STEPS:,} steps first"
    else:
        why = f"deciding it needs more than {MAX_SEARCH_STEPS:,} search steps"
    return problem(pos, "PERM005",
                   f"{who} '{action}', which is too complex to check against the boundary: {why}",
                   "use fewer and simpler patterns (long runs of '?' and many '*' between letters make "
                   "containment hard to decide), or list the actions themselves")
