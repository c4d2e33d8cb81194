"""Exact, bounded containment and overlap of IAM action patterns.

IAM matches actions case-insensitively, with `*` (any run of characters) and `?` (any one
character). "Is every action that `ec2:Describe*` matches also matched by `ec2:*` or `ec2:Desc*`?"
is a question about regular languages, so it is decided exactly with automata, never by string
prefix (which gets `s3:Get*` vs `s3:*Object` wrong). Real actions are `service:Action` with both
parts non-empty and one colon; a small shape automaton runs alongside, so `s3:*` is inside
`s3:?*` (the only difference, "s3:", is no action).

Why the search is bounded. Deciding whether one pattern is covered by a union of patterns is
coNP-hard even without `*` (patterns of one length over `?` and letters are the terms of a DNF,
and "the union covers `?...?`" is DNF tautology), so no exact method is polynomial for every
input, and the classic subset construction is exponential on inputs as small as `s3:*a??????`
(it must remember which of the last characters were `a`). hypergov therefore:
- normalises patterns (lowercase; every run of `*` and `?` holding a `*` becomes `?...?*`);
- tracks the subject pattern as single NFA positions and only the allow side as a set (a bitset
  over all allow patterns at once), pruning with antichains: a set of allow states that contains
  one already explored from the same position can reach no new counterexample;
- steps only on the characters that matter in the current state (the literals at live positions,
  `:`, and one representative of every other character), and stops a branch as soon as an allow
  pattern's trailing `*` is reached (everything after it is covered);
- tries cheap probe words (each `*` empty or one letter) when the shortest witness is deep;
- decides overlap (is some action matched by both patterns) in polynomial time, with the second
  pattern's positions as a bitset per position of the first: no subset construction at all;
- counts search steps, and gives up past `MAX_SEARCH_STEPS` / `MAX_OVERLAP_STEPS` per decision
  and past a `SearchBudget` per file. The rules report that as PERM005 ("too complex to check"),
  never as a verdict either way.

Public API (the permission rules and components use it; names and signatures are stable):
`matches`, `glob_regex`, `normalize`, `uncovered_action` / `overlapping_action` (a witness or
None; `PatternTooComplex` past the bound), `is_contained`, and the value-returning
`decide_containment` / `decide_overlap` (a `Decision`, optionally charged to a `SearchBudget`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from hypergov.rules.iam_automata import (
    SearchBound,
    accepted,
    literal_uncovered,
    overlap,
    probes,
    search_uncovered,
    union_of,
)

# A containment search that expands more states than this gives up (PatternTooComplex). Every
# pattern of the example and synthetic trees needs fewer than 200; the worst patterns the schema
# allows reach the bound in a few milliseconds (benchmarks/bench_containment.py).
MAX_SEARCH_STEPS = 6_000
# What one file's permission checks may spend together (SearchBudget): ~0.25 s on a loaded
# 2-core machine, against ~200 steps for the whole example tree.
FILE_SEARCH_STEPS = 30_000
# Overlap is polynomial (pairs of positions), but two long patterns still make ~250 x 250 pairs;
# past this many steps it is undecided too (PERM005). Probes answer most such pairs at once.
MAX_OVERLAP_STEPS = 6_000

class PatternTooComplex(Exception):
    """Containment could not be decided within `MAX_SEARCH_STEPS`."""

    def __init__(self, pattern: str, steps: int) -> None:
        self.pattern = pattern
        self.steps = steps
        super().__init__(f"containment of '{pattern}' not decided within {steps:,} search steps")


@dataclass(frozen=True)
class Decision:
    """The outcome of a decision: `witness` (an action outside, for containment; an action both
    match, for overlap) or None, `decided` False when the bound was reached, `steps` used."""

    witness: str | None
    decided: bool
    steps: int

    @property
    def contained(self) -> bool:
        return self.decided and self.witness is None


class SearchBudget:
    """Search steps several decisions share (one file's patterns), so that a file full of hard
    patterns costs at most `steps` in total, however many it holds: past it, decisions are
    undecided (PERM005) instead of slow. Work is counted, not timed, so results never depend on
    the machine's load."""

    def __init__(self, steps: int = FILE_SEARCH_STEPS) -> None:
        self.steps = steps
        self.remaining = steps

    def spend(self, steps: int) -> bool:
        """Pay `steps` if the budget still has them; False (and nothing paid) otherwise."""
        if steps > self.remaining:
            return False
        self.remaining -= steps
        return True

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0


Containment = Decision  # the name decide_containment's callers read best

_RUN = re.compile(r"[*?]+")
_ACTION_SHAPE = re.compile(r"[^:]+:[^:]+", re.DOTALL)


@lru_cache(maxsize=65536)
def normalize(pattern: str) -> str:
    """Lowercase, and every run of `*`/`?` holding a `*` as `?`s then one `*` (same language)."""
    def run(m: re.Match[str]) -> str:
        s = m.group(0)
        return "?" * s.count("?") + "*" if "*" in s else s
    return _RUN.sub(run, pattern.lower())


# Steps of plain breadth-first search before the probes are tried (shortest witnesses first).
_FIRST_PASS_STEPS = 1_000


def _decide(pattern: str, allowed: tuple[str, ...], max_steps: int) -> Containment:
    subject = normalize(pattern)
    allow = tuple(dict.fromkeys(normalize(p) for p in allowed))
    if "*" not in subject and "?" not in subject:
        return Containment(literal_uncovered(subject, allow), True, (1 + len(subject) // 8) * union_of(allow).weight)
    if "*" in allow:
        return Containment(None, True, 1)
    try:
        witness, steps = search_uncovered(subject, allow, min(max_steps, _FIRST_PASS_STEPS))
        return Containment(witness, True, steps)
    except SearchBound:
        pass
    b = union_of(allow)
    spent = _FIRST_PASS_STEPS
    for word in probes(subject):
        spent += 1 + len(word) // 8
        if not accepted(b, word):
            return Containment(word, True, spent)
    if max_steps <= spent:
        return Containment(None, False, max_steps)
    try:
        witness, steps = search_uncovered(subject, allow, max_steps - spent)
    except SearchBound:
        return Containment(None, False, max_steps)
    return Containment(witness, True, spent + steps)


# Results by (pattern, allowed, max_steps): decided ones answer any bound they fit in.
_RESULTS: dict[tuple[str, tuple[str, ...], int], Containment] = {}
_RESULTS_MAX = 65_536


def decide_containment(pattern: str, allowed: Sequence[str], *, max_steps: int = MAX_SEARCH_STEPS,
                       budget: SearchBudget | None = None) -> Containment:
    """Whether every action `pattern` matches is matched by some of `allowed`: `witness` is an
    action outside (lowercase, shortest unless found by a probe, possibly unpublished);
    `decided` is False past `max_steps` or past what `budget` has left (it pays the steps used)."""
    key = (pattern, tuple(allowed), max_steps)
    cap = max_steps if budget is None else min(max_steps, budget.remaining)
    result = _RESULTS.get(key)
    if result is None and cap > 0:
        # The search is deterministic, so a decided result (and its step count) is the same under
        # any bound that lets it finish; an undecided one is kept only for the full bound.
        result = _decide(pattern, key[1], cap)
        if result.decided or cap == max_steps:
            if len(_RESULTS) >= _RESULTS_MAX:
                _RESULTS.clear()
            _RESULTS[key] = result
    if result is None or (result.decided and result.steps > cap):
        result = Containment(None, False, max(cap, 0))
    if budget is not None:
        budget.spend(min(max(result.steps, 1), budget.remaining))
    return result


def uncovered_action(pattern: str, allowed: tuple[str, ...]) -> str | None:
    """An action matched by `pattern` but by none of `allowed`, or None when it is contained.
    Raises PatternTooComplex past MAX_SEARCH_STEPS (`decide_containment` gives that as a value)."""
    result = decide_containment(pattern, allowed)
    if not result.decided:
        raise PatternTooComplex(pattern, result.steps)
    return result.witness


def is_contained(pattern: str, allowed: Sequence[str]) -> bool:
    return uncovered_action(pattern, tuple(allowed)) is None


_OVERLAPS: dict[tuple[str, str], Decision] = {}


def _overlap_decision(pattern: str, other: str, cap: int) -> Decision:
    for literal, glob in ((pattern, other), (other, pattern)):
        if "*" not in literal and "?" not in literal:  # one regular-expression match decides it
            found = _ACTION_SHAPE.fullmatch(literal) is not None and matches(glob, literal)
            return Decision(literal.lower() if found else None, True, 1 + len(literal) // 8)
    first, second = normalize(pattern), normalize(other)
    spent = 0
    for word in (*probes(first), *probes(second)):
        spent += 1 + len(word) // 8
        if accepted(union_of((first,)), word) and accepted(union_of((second,)), word):
            return Decision(word, True, spent)
    try:
        witness, steps = overlap(first, second, max(cap - spent, 0))
    except SearchBound:
        return Decision(None, False, cap)
    return Decision(witness, True, spent + steps)


def decide_overlap(pattern: str, other: str, *, budget: SearchBudget | None = None) -> Decision:
    """Whether some action matches both patterns: `witness` is one (lowercase), `decided` False
    past MAX_OVERLAP_STEPS or what `budget` has left (it pays the steps used)."""
    cap = MAX_OVERLAP_STEPS if budget is None else min(MAX_OVERLAP_STEPS, budget.remaining)
    result = _OVERLAPS.get((pattern, other))
    if result is None and cap > 0:
        result = _overlap_decision(pattern, other, cap)
        if result.decided or cap == MAX_OVERLAP_STEPS:
            if len(_OVERLAPS) >= _RESULTS_MAX:
                _OVERLAPS.clear()
            _OVERLAPS[(pattern, other)] = result
    if result is None or (result.decided and result.steps > cap):
        result = Decision(None, False, max(cap, 0))
    if budget is not None:
        budget.spend(min(max(result.steps, 1), budget.remaining))
    return result


def overlapping_action(pattern: str, other: str) -> str | None:
    """An action matched by both patterns, or None when they never match the same action."""
    result = decide_overlap(pattern, other)
    if not result.decided:
        raise PatternTooComplex(pattern, result.steps)
    return result.witness


@lru_cache(maxsize=65536)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A linear-time regular expression for one pattern (lowercase input): each `*` takes the
    earliest occurrence of the fixed-length segment after it, atomically, which is optimal for
    globs and never backtracks across stars."""
    segments = ["".join("." if c == "?" else re.escape(c) for c in s) for s in normalize(pattern).split("*")]
    if len(segments) == 1:
        return re.compile(segments[0], re.DOTALL)
    middle = "".join(f"(?>.*?{s})" for s in segments[1:-1])
    return re.compile(f"{segments[0]}{middle}.*{segments[-1]}", re.DOTALL)


def matches(pattern: str, action: str) -> bool:
    """Whether a concrete action matches a pattern (IAM semantics)."""
    return glob_regex(pattern).fullmatch(action.lower()) is not None
