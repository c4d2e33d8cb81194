"""The automata behind `iam_patterns`: glob NFAs, a bit-parallel union of globs, and the two
bounded searches (containment with antichains, overlap over reachable pairs).

Patterns arrive normalised (`iam_patterns.normalize`: lowercase, no `**`, `?` before `*`).
Positions of one glob are 0..n (n accepts); a `*` at p loops and may be skipped. Real actions
are `service:Action`: a shape automaton (phases below) runs alongside every search.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from functools import lru_cache

# How many minimal allow-state sets each subject state keeps for subsumption checks.
_ANTICHAIN = 4

_DEAD, _START, _SERVICE, _COLON, _ACTION = -1, 0, 1, 2, 3
# Representatives of "a character no live literal is": the first one not in use is chosen, so
# witnesses read like actions ('s3:x').
_OTHER_CHARS = "xyzqjkwvbfghmnpcdlrstaueoi0123456789-_"


class SearchBound(Exception):
    """A search reached its step bound."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        super().__init__(f"search bound of {steps:,} steps reached")


def _shape_step(phase: int, ch: str) -> int:
    if ch == ":":
        return _COLON if phase == _SERVICE else _DEAD
    if phase in (_START, _SERVICE):
        return _SERVICE
    return _ACTION if phase in (_COLON, _ACTION) else _DEAD


def _representative(used: set[str]) -> str:
    return next(c for c in _OTHER_CHARS if c not in used)


class Glob:
    """One normalised pattern as an NFA over positions 0..n (n accepts); `*` at p loops and may
    be skipped, so position p stands for its closure {p, p+1 if text[p] is '*'}."""

    def __init__(self, text: str) -> None:
        self.text = text
        n = len(text)
        self.closure = [(p, p + 1) if p < n and text[p] == "*" else (p,) for p in range(n + 1)]
        self.accepting = [n in c for c in self.closure]
        self.any = [any(q < n and text[q] in "*?" for q in c) for c in self.closure]
        self.lits = [{text[q] for q in c if q < n and text[q] not in "*?"} for c in self.closure]

    def successors(self, p: int, ch: str) -> tuple[int, ...]:
        out: list[int] = []
        for q in self.closure[p]:
            if q >= len(self.text):
                continue
            t = self.text[q]
            nxt = q if t == "*" else q + 1 if t == "?" or t == ch else -1
            if nxt >= 0 and nxt not in out:
                out.append(nxt)
        return tuple(out)


class Union:
    """Several normalised patterns as one bit-parallel NFA: pattern i occupies bits
    [offset_i, offset_i + n_i]; a set of states is an int. Normalised patterns have no `**`, so
    one shift computes the `*` closure."""

    def __init__(self, texts: Sequence[str]) -> None:
        star = any1 = accept = start = 0
        lit: dict[str, int] = {}
        offset = 0
        for text in texts:
            for i, t in enumerate(text):
                bit = 1 << (offset + i)
                if t == "*":
                    star |= bit
                elif t == "?":
                    any1 |= bit
                else:
                    lit[t] = lit.get(t, 0) | bit
            start |= 1 << offset
            accept |= 1 << (offset + len(text))
            offset += len(text) + 1
        self.star, self.any1, self.accept, self.lit = star, any1, accept, lit
        # A trailing `*` accepts every continuation: a set holding one covers all that follows.
        self.universal = sum(1 << (off + len(t) - 1) for off, t in zip(self._offsets(texts), texts, strict=True)
                             if t.endswith("*"))
        self.wild = star | any1
        self._live: dict[int, frozenset[str]] = {}
        self.start = start | ((start & star) << 1)
        # What one step costs: Python's integer operations are linear in the number of bits, so
        # a search over a very large union counts each step as several.
        self.weight = 1 + offset // 4096

    @staticmethod
    def _offsets(texts: Sequence[str]) -> list[int]:
        offsets, offset = [], 0
        for text in texts:
            offsets.append(offset)
            offset += len(text) + 1
        return offsets

    def step(self, states: int, ch: str) -> int:
        moved = states & (self.any1 | self.lit.get(ch, 0))
        nxt = (states & self.star) | (moved << 1)
        return nxt | ((nxt & self.star) << 1)

    def live_lits(self, states: int) -> frozenset[str]:
        found = self._live.get(states)
        if found is None:
            if len(self._live) > 65_536:
                self._live.clear()
            found = self._live[states] = frozenset(c for c, mask in self.lit.items() if states & mask)
        return found


@lru_cache(maxsize=256)
def union_of(texts: tuple[str, ...]) -> Union:
    """The union automaton of an allow list, built once per list (a boundary is shared by every
    project of the tree)."""
    return Union(texts)


def _candidates(a: Glob, p: int, b: Union, bset: int) -> list[str]:
    """The characters worth stepping on from (p, bset) when looking for an action A matches and
    B does not: any other character behaves like the representative."""
    if not a.any[p]:
        return sorted(a.lits[p])
    used = a.lits[p] | b.live_lits(bset) | {":"}
    return [_representative(used), *sorted(used)]


def search_uncovered(subject: str, allowed: tuple[str, ...], max_steps: int) -> tuple[str | None, int]:
    """BFS over (subject position, shape phase, allow-state set) with antichain pruning: the
    shortest action the subject matches and no allowed pattern does, or None. A step is one
    (state, character) expansion, subsumption checks included."""
    a = Glob(subject)
    b = union_of(allowed)
    # Per (position, phase): every allow-state set queued (exact duplicates), and the first
    # _ANTICHAIN minimal ones (subsumption). Pruning less than a full antichain is still exact,
    # and keeps each step's cost bounded.
    exact: dict[tuple[int, int], set[int]] = {(0, _START): {b.start}}
    chains: dict[tuple[int, int], list[int]] = {(0, _START): [b.start]}
    queue: deque[tuple[int, int, int, str]] = deque([(0, _START, b.start, "")])
    successors: dict[tuple[int, str], tuple[int, ...]] = {}
    transitions: dict[tuple[int, str], int] = {}
    steps = 0
    weight = b.weight
    accept, universal = b.accept, b.universal
    while queue:
        p, phase, bset, word = queue.popleft()
        if phase == _ACTION and a.accepting[p] and not bset & accept:
            return word, steps
        for ch in _candidates(a, p, b, bset):
            nphase = _shape_step(phase, ch)
            if nphase == _DEAD:
                continue
            steps += weight
            if steps > max_steps:
                raise SearchBound(max_steps)
            nb = transitions.get((bset, ch))
            if nb is None:
                nb = transitions[(bset, ch)] = b.step(bset, ch)
            if nb & universal:
                continue  # an allow pattern's trailing `*` is reached: everything after is covered
            nexts = successors.get((p, ch))
            if nexts is None:
                nexts = successors[(p, ch)] = a.successors(p, ch)
            for na in nexts:
                key = (na, nphase)
                seen = exact.get(key)
                if seen is None:
                    exact[key], chains[key] = {nb}, [nb]
                    queue.append((na, nphase, nb, word + ch))
                    continue
                if nb in seen or _subsumed(nb, chains[key]):
                    continue  # an explored subset of these allow states already covers this one
                seen.add(nb)
                chain = chains[key]
                if len(chain) < _ANTICHAIN:
                    chain[:] = [old for old in chain if nb & ~old]
                    chain.append(nb)
                queue.append((na, nphase, nb, word + ch))
    return None, steps


def _subsumed(states: int, chain: list[int]) -> bool:
    return any(not old & ~states for old in chain)


def literal_uncovered(subject: str, allowed: tuple[str, ...]) -> str | None:
    """Fast path for a pattern without wildcards: one run of the allow union over it."""
    phase = _START
    for ch in subject:
        phase = _shape_step(phase, ch)
    if phase != _ACTION:
        return None  # not an action at all: nothing to cover
    b = union_of(allowed)
    states = b.start
    for ch in subject:
        states = b.step(states, ch)
        if not states:
            break
    return None if states & b.accept else subject


def probes(subject: str) -> list[str]:
    """Cheap candidate witnesses: the pattern with every `*` matching nothing or one character
    and every `?` one character. When the breadth-first search is slow because the shortest
    witness is long (`s3:*a*a*a...`), one of these often is a witness already."""
    found = []
    for star in ("", "x"):
        word = subject.replace("*", star).replace("?", "x")
        phase = _START
        for ch in word:
            phase = _shape_step(phase, ch)
        if phase == _ACTION:
            found.append(word)
    return found


def accepted(b: Union, word: str) -> bool:
    states = b.start
    for ch in word:
        states = b.step(states, ch)
        if not states:
            return False
    return bool(states & b.accept)


def _overlap_candidates(a: Glob, p: int, b: Union, bset: int) -> list[str]:
    a_lits, b_lits = a.lits[p], b.live_lits(bset)
    b_any = bool(bset & b.wild)
    if a.any[p] and b_any:
        used = a_lits | b_lits | {":"}
        return [_representative(used), *sorted(used)]
    if a.any[p]:
        return sorted(b_lits)
    return sorted(a_lits if b_any else a_lits & b_lits)


def overlap(subject: str, second: str, max_steps: int) -> tuple[str | None, int]:
    """An action both (normalised) patterns match, and the steps used; SearchBound past
    `max_steps`.

    Polynomial: breadth-first over (position in `pattern`, shape phase) with the set of
    positions `other` can be in *together with it* as a bitset that only grows (a union of
    reachable pairs, not a subset construction); the witness is rebuilt backwards."""
    a, b = Glob(subject), Union([second])
    reach: dict[tuple[int, int], int] = {(0, _START): b.start}
    frontier = dict(reach)
    layers: list[dict[tuple[int, int], list[tuple[int, tuple[int, int], str, int]]]] = []
    steps = 0
    while frontier:
        layer: dict[tuple[int, int], list[tuple[int, tuple[int, int], str, int]]] = {}
        nxt: dict[tuple[int, int], int] = {}
        for key, bset in frontier.items():
            p, phase = key
            for ch in _overlap_candidates(a, p, b, bset):
                nphase = _shape_step(phase, ch)
                if nphase == _DEAD:
                    continue
                steps += 1
                if steps > max_steps:
                    raise SearchBound(max_steps)
                nb = b.step(bset, ch)
                for na in a.successors(p, ch):
                    nkey = (na, nphase)
                    new = nb & ~reach.get(nkey, 0)
                    if not new:
                        continue
                    reach[nkey] = reach.get(nkey, 0) | new
                    nxt[nkey] = nxt.get(nkey, 0) | new
                    layer.setdefault(nkey, []).append((new, key, ch, bset))
                    if nphase == _ACTION and a.accepting[na] and new & b.accept:
                        layers.append(layer)
                        return _rebuild(layers, b, nkey, new & b.accept), steps
        layers.append(layer)
        frontier = nxt
    return None, steps


def _rebuild(layers: list[dict[tuple[int, int], list[tuple[int, tuple[int, int], str, int]]]],
             b: Union, key: tuple[int, int], targets: int) -> str:
    """Walk the recorded layers backwards from an accepting (state, bit) to the start."""
    chars: list[str] = []
    for layer in reversed(layers):
        new, prev, ch, bset = next(r for r in layer[key] if r[0] & targets)
        bit = (new & targets) & -(new & targets)
        # the previous-layer bits of `bset` that step into `bit` on `ch`
        targets = 0
        rest = bset
        while rest:
            low = rest & -rest
            rest ^= low
            if b.step(low, ch) & bit:
                targets |= low
        chars.append(ch)
        key = prev
    return "".join(reversed(chars))


