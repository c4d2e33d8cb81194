"""Exact containment and overlap of IAM action patterns.

IAM matches actions case-insensitively, with `*` (any run of characters) and `?` (any one
character). "Is every action that `ec2:Describe*` matches also matched by `ec2:*` or `ec2:Desc*`
and by no deny pattern?" is a question about regular languages, so we decide it exactly with
automata: each pattern is an NFA over the pattern characters plus one symbol standing for "any
other character", and a breadth-first search over the product of subset states finds a witness
action when containment fails. A string-prefix test would get `s3:Get*` vs `s3:*Object` wrong.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

_OTHER = "\x00"  # stands for every character that appears in none of the patterns


@dataclass(frozen=True)
class _Glob:
    text: str

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        """States reachable through `*` (which may match nothing)."""
        result = set()
        for s in states:
            while True:
                result.add(s)
                if s < len(self.text) and self.text[s] == "*":
                    s += 1
                    continue
                break
        return frozenset(result)

    def step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        nxt = set()
        for s in states:
            if s >= len(self.text):
                continue
            p = self.text[s]
            if p == "*":
                nxt.add(s)
            elif p == "?" or p == ch:
                nxt.add(s + 1)
        return self.closure(nxt)

    def accepts(self, states: frozenset[int]) -> bool:
        return len(self.text) in states


def _normalize(pattern: str) -> str:
    return pattern.lower()


def _alphabet(patterns: Iterable[str]) -> list[str]:
    chars = {":"} | {c for p in patterns for c in p if c not in "*?"}
    # "any other character" first, then letters: BFS then finds witnesses like 's3:x'.
    return [_OTHER, *sorted(chars, key=lambda c: (not c.isalpha(), c))]


def _witness_char(ch: str) -> str:
    return "x" if ch == _OTHER else ch


MultiState = tuple[frozenset[int], ...]

# Real actions look like `service:Action`: both parts non-empty, one colon. Tracking that shape
# alongside the automata keeps `s3:*` vs `s3:?*` contained (the only difference is "s3:", which
# is no action) and makes witnesses read like real actions.
_DEAD, _START, _SERVICE, _COLON, _ACTION = -1, 0, 1, 2, 3


def _shape_step(phase: int, ch: str) -> int:
    if ch == ":":
        return _COLON if phase == _SERVICE else _DEAD
    if phase in (_START, _SERVICE):
        return _SERVICE
    if phase in (_COLON, _ACTION):
        return _ACTION
    return _DEAD


def _search(subject: str, others: Sequence[str], *, want_other_accepting: bool) -> str | None:
    """BFS over (subject subset, others' subsets). Returns a witness action when a word is
    accepted by `subject` and (want_other_accepting) by some other / (not ...) by none of them."""
    a = _Glob(subject)
    bs = [_Glob(p) for p in others]
    alphabet = _alphabet([subject, *others])
    start = (a.closure([0]), tuple(b.closure([0]) for b in bs), _START)
    seen = {start}
    queue: deque[tuple[frozenset[int], MultiState, int, str]] = deque([(*start, "")])
    while queue:
        a_states, b_states, phase, word = queue.popleft()
        if phase == _ACTION and a.accepts(a_states):
            any_b = any(b.accepts(st) for b, st in zip(bs, b_states, strict=True))
            if any_b == want_other_accepting:
                return word
        for ch in alphabet:
            na = a.step(a_states, ch)
            nphase = _shape_step(phase, ch)
            if not na or nphase == _DEAD:
                continue
            nb = tuple(b.step(st, ch) for b, st in zip(bs, b_states, strict=True))
            key = (na, nb, nphase)
            if key not in seen:
                seen.add(key)
                queue.append((na, nb, nphase, word + _witness_char(ch)))
    return None


@lru_cache(maxsize=65536)
def uncovered_action(pattern: str, allowed: tuple[str, ...]) -> str | None:
    """An action matched by `pattern` but by none of `allowed`, or None when it is contained."""
    return _search(_normalize(pattern), [_normalize(p) for p in allowed], want_other_accepting=False)


@lru_cache(maxsize=65536)
def overlapping_action(pattern: str, other: str) -> str | None:
    """An action matched by both patterns, or None when they never match the same action."""
    return _search(_normalize(pattern), [_normalize(other)], want_other_accepting=True)


def is_contained(pattern: str, allowed: Sequence[str]) -> bool:
    return uncovered_action(pattern, tuple(allowed)) is None


def matches(pattern: str, action: str) -> bool:
    """Whether a concrete action matches a pattern (IAM semantics)."""
    g = _Glob(_normalize(pattern))
    states = g.closure([0])
    for ch in _normalize(action):
        states = g.step(states, ch)
        if not states:
            return False
    return g.accepts(states)
