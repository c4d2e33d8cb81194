"""Persona ceilings: what an Engineer or a Viewer may never be granted, even inside the boundary.

The maximum boundary caps every project role alike; it cannot say that an R&D engineer "can submit
and monitor training jobs but cannot modify cluster configurations" (the article's RBAC paragraph)
while a lead may do more. A persona's ceiling says it. Engineer and Viewer start from the built-in
ceiling (`ceiling_actions.py`, derived from AWS's action catalogue by what the actions do):

- `hyperpod`: every non-read SageMaker action whose required resources are HyperPod clusters,
  scheduler configs or compute quotas (create, update, delete, scale, reboot, replace and patch
  clusters and nodes, health checks, volumes and interfaces on nodes);
- `eks`: every non-read EKS action (cluster configuration and version, node groups, Fargate,
  add-ons, identity providers, pod identities, access entries and access policies, tags) except
  `eks:MutateViaKubernetesApi`, whose effect inside the cluster is the access entry's and the
  namespace RBAC's to bound (it is how the console submits jobs): there every persona has
  `AmazonEKSViewPolicy` and its own Role, which lets an Engineer submit jobs but never create
  pods or Deployments (the persona matrix, `components/namespace_access.py`);
- `governance`: every non-read action of IAM, Identity Center (`sso`, `sso-directory`,
  `identitystore`), Organizations, Account Management and Budgets: roles, policies, boundaries,
  group memberships and permission sets decide who is trusted; SCPs, OUs, regions and budgets
  are the org's compliance baseline.

org.yaml tightens a ceiling with `personas.<P>.ceiling.deny` and lifts part of the built-in one
only with `ceiling.widen_builtin` entries that carry a reason. A grant breaks the ceiling when its
pattern matches a ceiling action (exact IAM matching; the example reported is that real action)
or overlaps a `deny` pattern (exact automata, `hypergov.rules.iam_patterns`). PERM006 reports it
in a project, PERM007 in org.yaml itself (a persona policy above its own ceiling, or an opt-out
that lifts nothing).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from hypergov.model.common import PERSONAS, Persona
from hypergov.model.org import Organization, PersonaPolicy
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.problems import Problem, Severity
from hypergov.rules.base import problem
from hypergov.rules.ceiling_actions import BUILTIN_CEILING
from hypergov.rules.iam_patterns import FILE_SEARCH_STEPS, SearchBudget, decide_overlap, matches

BUILTIN_PERSONAS: frozenset[Persona] = frozenset({"Engineer", "Viewer"})
CATEGORY_TITLES = {
    "hyperpod": "changes HyperPod clusters, nodes, scheduler configs or compute quotas",
    "eks": "changes EKS cluster configuration or access",
    "governance": "changes IAM, Identity Center, Organizations, account settings or budgets",
}
_ALL: tuple[tuple[str, str], ...] = tuple((a, c) for c, actions in BUILTIN_CEILING.items() for a in actions)
_BY_SERVICE: dict[str, tuple[tuple[str, str], ...]] = {}
for _action, _category in _ALL:
    _service = _action.split(":", 1)[0].lower()
    _BY_SERVICE[_service] = (*_BY_SERVICE.get(_service, ()), (_action, _category))


@dataclass(frozen=True)
class PersonaCeiling:
    """One persona's effective ceiling: the built-in actions still forbidden, and the org's own."""

    persona: Persona
    builtin: bool
    widened: tuple[str, ...]  # widen_builtin patterns
    deny: tuple[str, ...]


@dataclass(frozen=True)
class Breach:
    example: str  # an action the grant includes and the ceiling forbids
    why: str
    builtin: bool  # from the built-in ceiling (else from ceiling.deny)
    published: bool = True  # False: the shortest action both match, which AWS may not have


def persona_ceiling(persona: Persona, policy: PersonaPolicy) -> PersonaCeiling:
    widened = tuple(p for w in policy.ceiling.widen_builtin for p in w.actions)
    return PersonaCeiling(persona, persona in BUILTIN_PERSONAS, widened, tuple(policy.ceiling.deny))


def _candidates(grant: str) -> tuple[tuple[str, str], ...]:
    """Built-in actions the grant could match: its service's, or all when the service is a wildcard."""
    service = grant.split(":", 1)[0].lower()
    if ":" not in grant or "*" in service or "?" in service:
        return _ALL
    return _BY_SERVICE.get(service, ())


def builtin_actions_matching(pattern: str) -> list[str]:
    return [a for a, _ in _candidates(pattern) if matches(pattern, a)]


def breach(grant: str, ceiling: PersonaCeiling, *, budget: SearchBudget | None = None) -> Breach | None:
    """The first way `grant` reaches above `ceiling`, or None when it stays below it. The overlaps
    with `ceiling.deny` are paid from `budget` (the grant's file's, as the permission rules pay
    theirs): a file full of hard grants cannot make the ceiling check stall the gate either."""
    found = _builtin_breach(grant, ceiling)
    if found is not None:
        return found
    for denied in ceiling.deny:
        overlap = decide_overlap(grant, denied, budget=budget)
        if not overlap.decided:  # fail closed: a grant nobody could check is not below the ceiling
            bound = (f"not checked: this file's patterns used up its search budget of {FILE_SEARCH_STEPS:,} steps "
                     "first" if budget is not None and budget.exhausted else
                     "too complex to check within hypergov's search bound")
            return Breach(grant, f"ceiling.deny '{denied}' ({bound}; narrow the pattern)", builtin=False,
                          published=False)
        witness = overlap.witness
        if witness is not None:
            # A real action when the grant is one, or when the catalogue we carry has one both
            # match; else the shortest action both match (which AWS may not have published).
            real = grant if not any(c in grant for c in "*?") else _published_in_both(grant, denied)
            return Breach(real or witness, f"ceiling.deny '{denied}'", builtin=False, published=real is not None)
    return None


@lru_cache(maxsize=65536)
def _builtin_breach(grant: str, ceiling: PersonaCeiling) -> Breach | None:
    """The first built-in ceiling action `grant` matches and no widening lifts (regular-expression
    matches against the catalogue we carry: linear in its size, no search)."""
    if ceiling.builtin:
        for action, category in _candidates(grant):
            if matches(grant, action) and not any(matches(w, action) for w in ceiling.widened):
                return Breach(action, CATEGORY_TITLES[category], builtin=True)
    return None


@lru_cache(maxsize=65536)
def _published_in_both(grant: str, denied: str) -> str | None:
    return next((a for a, _ in _ALL if matches(grant, a) and matches(denied, a)), None)


def check_ceilings(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    org = tree.org
    ceilings = {p: persona_ceiling(p, org.model.personas.for_persona(p)) for p in PERSONAS}
    org_budget = SearchBudget()  # org.yaml's persona policies: one file, one budget
    for persona in PERSONAS:
        policy = org.model.personas.for_persona(persona)
        yield from _widenings(org, persona, policy)
        for i, action in enumerate(policy.actions):
            found = breach(action, ceilings[persona], budget=org_budget)
            if found is not None:
                yield problem(org.pos("personas", persona, "actions", i), "PERM007",
                              _message(f"persona {persona}'s org-wide policy grants", action, persona, found),
                              f"remove it, or lift that part of the built-in ceiling on purpose under "
                              f"personas.{persona}.ceiling.widen_builtin with a reason" if found.builtin else
                              f"remove the action, or the pattern from personas.{persona}.ceiling.deny")
    for team, project in sorted(tree.projects.items()):
        budget = SearchBudget()
        for persona in PERSONAS:
            for i, action in enumerate(project.model.extra_permissions.of(persona)):
                found = breach(action, ceilings[persona], budget=budget)
                if found is not None:
                    yield problem(project.pos("extra_permissions", persona, i), "PERM006",
                                  _message(f"project '{team}' grants {persona}", action, persona, found),
                                  _project_hint(persona, found))


def _message(who: str, action: str, persona: Persona, found: Breach) -> str:
    head = f"{who} '{action}', above the {persona} ceiling"
    if found.example.lower() == action.lower():
        return f"{head}: it {found.why}" if found.builtin else f"{head} ({found.why})"
    if not found.published:
        return f"{head}: it overlaps {found.why} (e.g. '{found.example}')"
    why = f", which {found.why}" if found.builtin else f" ({found.why})"
    return f"{head}: it includes '{found.example}'{why}"


def _project_hint(persona: Persona, found: Breach) -> str:
    if found.builtin:
        return (f"{persona}s never change shared clusters or governance objects: grant a narrower action, or ask "
                f"a platform admin to lift it under personas.{persona}.ceiling.widen_builtin in org.yaml")
    return f"grant a narrower action; org.yaml personas.{persona}.ceiling.deny forbids this for every project"


def _widenings(org: Sourced[Organization], persona: Persona, policy: PersonaPolicy) -> Iterator[Problem]:
    """An opt-out that lifts nothing is a typo or a misunderstanding: the org believes it widened."""
    for i, widening in enumerate(policy.ceiling.widen_builtin):
        for j, pattern in enumerate(widening.actions):
            pos = org.pos("personas", persona, "ceiling", "widen_builtin", i, "actions", j)
            if persona not in BUILTIN_PERSONAS:
                yield problem(pos, "PERM007", f"widen_builtin '{pattern}' lifts nothing: {persona} has no built-in "
                              "ceiling", f"remove it; only {' and '.join(sorted(BUILTIN_PERSONAS))} have one",
                              Severity.WARNING)
            elif not builtin_actions_matching(pattern):
                close = difflib.get_close_matches(pattern, [a for a, _ in _ALL], n=1)
                yield problem(pos, "PERM007", f"widen_builtin '{pattern}' lifts nothing: it matches no action of "
                              f"the built-in {persona} ceiling",
                              f"did you mean '{close[0]}'?" if close else "remove it", Severity.WARNING)
