"""No pattern can stall the gate: every containment and overlap decision, and every file of the
size limit, is bounded (issue 10 item 5). The bound is proved in the checker's own work, never
timed (a loaded CI machine must not fail a correct change; wall time: benchmarks/bench_containment.py):

- the automata's transitions are counted from outside the checker (`counting_transitions`): every
  character a search tries or a probe reads passes once through the shape automaton that runs
  alongside every search, and every move of an allow list's (or a second pattern's) bitset
  automaton is one `Union.step` (building the automata is linear in the patterns' lengths);
- a decision does at most a small multiple of the steps it reports (and pays) in transitions, plus
  a term linear in its patterns' lengths (`containment_work`, `overlap_work` say why), and reports
  at most MAX_SEARCH_STEPS / MAX_OVERLAP_STEPS: the step limit, not the inputs' luck, ends the
  worst ones (some of the worst patterns here reach it);
- in a file, every decision is paid from that file's SearchBudget of FILE_SEARCH_STEPS (one for
  the permission rules, one for the persona ceilings), and no automaton runs outside a decision:
  a file's search work is at most ~3 x 2 x FILE_SEARCH_STEPS transitions plus a term linear in
  its size, however many hard patterns it holds."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypergov.rules import ceilings, iam_automata, permissions
from hypergov.rules.aws_actions import line_regex
from hypergov.rules.escalation import escalation_matches
from hypergov.rules.iam_automata import union_of
from hypergov.rules.iam_patterns import (
    _OVERLAPS,
    _RESULTS,
    FILE_SEARCH_STEPS,
    MAX_OVERLAP_STEPS,
    MAX_SEARCH_STEPS,
    Decision,
    SearchBudget,
    decide_containment,
    decide_overlap,
    glob_regex,
    matches,
    normalize,
)
from hypergov.source import MAX_FILE_BYTES
from hypergov.tree_files import TreeEntry
from hypergov.validate import validate_files
from tests.validation.corpus_overlay import example_tree

MAX_PATTERN = 256  # the schema's max_length for an action pattern

EXAMPLE_ALLOW = ("sagemaker:*", "eks:Describe*", "eks:List*", "eks:AccessKubernetesApi", "s3:GetObject",
                 "s3:PutObject", "s3:ListBucket", "logs:DescribeLog*", "cloudwatch:GetMetric*", "fsx:Describe*",
                 "sts:GetCallerIdentity")


def _worst_patterns() -> list[str]:
    """The shapes that made the old subset construction exponential, at the schema's length."""
    n = MAX_PATTERN
    rnd = random.Random(10)
    worst = [
        "sagemaker:*a" + "?" * (n - 12),  # a letter followed by a run of '?'
        "s3:*a" + "?" * (n - 5),
        "s3:" + "*a" * ((n - 3) // 2),  # stars between letters
        "s3:" + "*?a" * ((n - 3) // 3),
        "*a" + "?" * 100 + ":*b" + "?" * 100,  # wildcards in the service part too
        "*:*" + "a?" * ((n - 3) // 2),
        "?" * (n - 2) + ":*",
        "*" + "?*" * ((n - 1) // 2),
    ]
    worst += ["s3:" + "".join(rnd.choice("*?ab") for _ in range(n - 3)) for _ in range(6)]
    return [p[:n] for p in worst]


def _hard_allows() -> list[tuple[str, ...]]:
    return [EXAMPLE_ALLOW,
            ("s3:*a" + "?" * 200,),
            tuple("s3:*" + c + "?" * 30 for c in "abcdefgh"),
            ("s3:*a" + "?" * 50, "s3:*b" + "?" * 50, "s3:?*"),
            tuple(p for p in _worst_patterns()[:6])]


# --- the checker's work, counted from outside it -----------------------------------------------


@dataclass
class Transitions:
    """Work of the automata, in the two moves every search and probe is made of."""

    characters: int = 0  # shape-automaton steps: one per character a search tries or a probe reads
    union_steps: int = 0  # Union.step calls: one move of a bitset automaton over a list of patterns

    def within(self, bound: Transitions) -> bool:
        return self.characters <= bound.characters and self.union_steps <= bound.union_steps

    def __sub__(self, other: Transitions) -> Transitions:
        return Transitions(self.characters - other.characters, self.union_steps - other.union_steps)

    def __add__(self, other: Transitions) -> Transitions:
        return Transitions(self.characters + other.characters, self.union_steps + other.union_steps)


@contextmanager
def counting_transitions() -> Iterator[Transitions]:
    """Count the automata's transitions while the block runs (the checker is not asked)."""
    seen = Transitions()
    shape_step, union_step = iam_automata._shape_step, iam_automata.Union.step

    def counted_shape_step(phase: int, ch: str) -> int:
        seen.characters += 1
        return shape_step(phase, ch)

    def counted_union_step(self: iam_automata.Union, states: int, ch: str) -> int:
        seen.union_steps += 1
        return union_step(self, states, ch)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(iam_automata, "_shape_step", counted_shape_step)
        patch.setattr(iam_automata.Union, "step", counted_union_step)
        yield seen


def containment_work(pattern: str, steps: int) -> Transitions:
    """The most transitions a containment decision of `pattern` that reports (or pays) `steps` does.

    A search expands a state on one character at a cost of `weight` >= 1 steps and stops on the
    expansion past its bound, and a decision runs at most two searches (a short first pass, then
    the rest of the bound), so they expand at most steps + 2 times. Each expansion queues at most
    two states (a glob position has at most two successors: itself under a `*`, and the next),
    and a queued state tries at most one character the shape automaton refuses (':' where no colon
    may be): at most 3 x (steps + 2) + 2 characters and steps + 2 union steps. Between the searches
    the two probe words (each `*` empty or one letter, each `?` one letter: at most the normalised
    pattern's length m each) are read once and run through the allow union: 2m of each. A pattern
    without wildcards is one run over its m characters."""
    m = len(normalize(pattern))
    return Transitions(characters=3 * steps + 2 * m + 8, union_steps=steps + 2 * m + 2)


def overlap_work(pattern: str, other: str, steps: int, witness: str | None) -> Transitions:
    """The most transitions an overlap decision that reports (or pays) `steps` does.

    The search over pairs expands a state on one character at one step and stops on the expansion
    past its bound: at most steps + 1 expansions, each adding at most two states to the next layer,
    each state trying at most one character the shape automaton refuses (3 x (steps + 1) + 1
    characters) and moving the other pattern's bitset once per expansion (steps + 1 union steps).
    The four probe words (two per pattern, at most m1 and m2 long) are read once (2 x (m1 + m2)
    characters) and each is run through both one-pattern unions (4 x (m1 + m2) union steps).
    Rebuilding the witness walks back one layer per character, moving each of the other pattern's
    m2 + 1 positions once."""
    m1, m2 = len(normalize(pattern)), len(normalize(other))
    rebuilt = len(witness) * (m2 + 1) if witness is not None else 0
    return Transitions(characters=3 * steps + 2 * (m1 + m2) + 4, union_steps=steps + 1 + 4 * (m1 + m2) + rebuilt)


def shortest_overlap_length(pattern: str, other: str) -> int:
    """The longest a shortest action both patterns match can be: each of its characters is read by
    a non-`*` position of one of them (at most m1 + m2), except those both read with a `*`; such a
    character could be dropped unless it is the colon or the only character of the service or the
    action part (3 at most)."""
    return len(normalize(pattern)) + len(normalize(other)) + 3


def clear_caches() -> None:
    """Forget every per-pattern result, so a decision or a file does its work again."""
    _RESULTS.clear()
    _OVERLAPS.clear()
    for cached in (escalation_matches, line_regex, glob_regex, union_of, ceilings._builtin_breach,
                   ceilings._published_in_both):
        cached.cache_clear()


def _metered(decide: Callable[[], Decision]) -> tuple[Decision, Transitions]:
    clear_caches()
    with counting_transitions() as work:
        result = decide()
    return result, work


def _check_containment(pattern: str, allow: tuple[str, ...] | list[str]) -> Decision:
    result, work = _metered(lambda: decide_containment(pattern, allow))
    assert result.steps <= MAX_SEARCH_STEPS, (pattern, allow, result)
    assert work.within(containment_work(pattern, result.steps)), (pattern, allow, result, work)
    if result.decided and result.witness is not None:
        assert matches(pattern, result.witness) and not any(matches(a, result.witness) for a in allow)
    return result


def _check_overlap(pattern: str, other: str) -> Decision:
    result, work = _metered(lambda: decide_overlap(pattern, other))
    assert result.steps <= MAX_OVERLAP_STEPS, (pattern, other, result)
    assert work.within(overlap_work(pattern, other, result.steps, result.witness)), (pattern, other, result, work)
    if result.witness is not None:
        assert matches(pattern, result.witness) and matches(other, result.witness)
        assert len(result.witness) <= shortest_overlap_length(pattern, other), (pattern, other, result.witness)
    return result


def test_worst_patterns_are_decided_or_refused_within_the_step_bound() -> None:
    refused = 0
    for allow in _hard_allows():
        for pattern in _worst_patterns():
            refused += not _check_containment(pattern, allow).decided
            for other in allow:
                refused += not _check_overlap(pattern, other).decided
    # The bound is what ends them: these inputs are hard enough to reach it (PERM005), and the
    # checks above show that reaching it costs no more than the bound's steps.
    assert refused > 0


_SERVICE = st.text(alphabet="ab-*?", min_size=1, max_size=40)
_ACTION = st.text(alphabet="abAB-*?", min_size=1, max_size=200)
_PATTERN = st.one_of(st.just("*"), st.builds(lambda s, a: f"{s}:{a}"[:MAX_PATTERN], _SERVICE, _ACTION))


@settings(max_examples=200, deadline=None)
@given(pattern=_PATTERN, allow=st.lists(_PATTERN, min_size=1, max_size=8))
def test_fuzz_no_decision_exceeds_the_step_bound(pattern: str, allow: list[str]) -> None:
    """Random schema-valid patterns: every single decision ends within its bound, decided or not."""
    _check_containment(pattern, allow)
    for other in allow[:3]:
        _check_overlap(pattern, other)


# --- files of the size limit ---------------------------------------------------------------------


def _fill(base: str, lines: list[str], indent: str, *, room: int = MAX_FILE_BYTES - 200) -> str:
    """`base` plus as many of `lines` (quoted list items) as fit in `room` bytes."""
    out, size = [base.rstrip("\n") + "\n"], len(base)
    for line in lines:
        item = f'{indent}- "{line}"\n'
        if size + len(item) > room:
            break
        out.append(item)
        size += len(item)
    return "".join(out)


def _hostile_grants(count: int) -> list[str]:
    rnd = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    grants = []
    for i in range(count):
        a, b = letters[i % 26], letters[(i // 26) % 26]
        grants.append([
            "s3:" + ("*" + a) * 63 + ("*" + b) * 63,
            "s3:*" + a + b + "?" * 240,
            "*:" + "".join(rnd.choice("*?" + a + b) for _ in range(250)),
            "s3:" + "".join(rnd.choice("*?ab") for _ in range(250)),
            "sagemaker:*" + "".join(rnd.choice("*?" + a) for _ in range(40)),
        ][i % 5][:MAX_PATTERN])
    return grants


HARD_BOUNDARY = ["s3:*" + c + "?" * 30 for c in "abcdefgh"] + ["*:*" + c + "?" * 200 for c in "ab"]


def project_file_of_worst_grants() -> dict[str, TreeEntry]:
    """The example tree with a hard boundary and projects/vision.yaml filled to the size limit
    with the worst grants."""
    files = example_tree()
    org = files["org.yaml"].decode().replace(
        "    - sts:GetCallerIdentity\n",
        "    - sts:GetCallerIdentity\n" + "".join(f'    - "{h}"\n' for h in HARD_BOUNDARY), 1)
    files["org.yaml"] = org.encode()
    vision = files["projects/vision.yaml"].decode()
    files["projects/vision.yaml"] = _fill(vision, _hostile_grants(5000), "    ").encode()
    return files


def org_file_of_worst_persona_patterns() -> dict[str, TreeEntry]:
    """The example tree with org.yaml filled to the size limit with the worst patterns as the
    Viewer persona's org-wide actions."""
    files = example_tree()
    org = files["org.yaml"].decode()
    marker = "  Viewer:\n    actions:\n"
    head, tail = org.split(marker)
    room = MAX_FILE_BYTES - 200 - len(head) - len(tail)
    files["org.yaml"] = (head + _fill(marker, _hostile_grants(5000), "      ", room=room) + tail).encode()
    return files


BEYOND_AN_SCP = [f"s3:*{i:04d}" + "?" * 200 for i in range(400)]


def org_file_with_a_boundary_beyond_an_scp() -> dict[str, TreeEntry]:
    """The example tree whose boundary also allows BEYOND_AN_SCP: more than an SCP may hold."""
    files = example_tree()
    org = files["org.yaml"].decode()
    big = "".join(f'    - "{pattern}"\n' for pattern in BEYOND_AN_SCP)
    files["org.yaml"] = org.replace("    - sts:GetCallerIdentity\n", "    - sts:GetCallerIdentity\n" + big, 1).encode()
    return files


@dataclass
class RuleDecision:
    """One decision a rule made while a tree was validated, what it paid and the work it did."""

    rule: str  # the module that decided: permissions or ceilings
    kind: str  # containment or overlap
    pattern: str
    against: tuple[str, ...]  # the allow list, or the one pattern overlap is decided with
    budget: SearchBudget | None
    paid: int  # what the decision took from `budget`
    result: Decision
    work: Transitions

    def bound(self) -> Transitions:
        """The most work this decision may do for what it paid."""
        if self.kind == "overlap":
            return overlap_work(self.pattern, self.against[0], self.paid, self.result.witness)
        return containment_work(self.pattern, self.paid)


@contextmanager
def recording_decisions() -> Iterator[tuple[list[RuleDecision], Transitions]]:
    """Every decision the permission and ceiling rules make, and every transition of the automata
    while the block runs (inside a decision or not)."""
    decisions: list[RuleDecision] = []
    with counting_transitions() as total, pytest.MonkeyPatch.context() as patch:
        def recorded(rule: str, kind: str, decide: Callable[..., Decision]) -> Callable[..., Decision]:
            def decision(pattern: str, against: Any, *, budget: SearchBudget | None = None) -> Decision:
                before = Transitions(total.characters, total.union_steps)
                remaining = budget.remaining if budget is not None else 0
                result = decide(pattern, against, budget=budget)
                paid = remaining - budget.remaining if budget is not None else 0
                decisions.append(RuleDecision(rule, kind, pattern, (against,) if kind == "overlap" else tuple(against),
                                              budget, paid, result, total - before))
                return result
            return decision

        patch.setattr(permissions, "decide_containment", recorded("permissions", "containment", decide_containment))
        patch.setattr(permissions, "decide_overlap", recorded("permissions", "overlap", decide_overlap))
        patch.setattr(ceilings, "decide_overlap", recorded("ceilings", "overlap", decide_overlap))
        yield decisions, total


def _validate_counted(files: dict[str, TreeEntry]) -> tuple[set[str], list[RuleDecision]]:
    """Validate `files` with every per-pattern cache cleared: the rules found, the decisions made
    and the automata's transitions, after checking that the budgets bound them: every decision
    is paid from a file's budget of FILE_SEARCH_STEPS and did no more than its payment allows, and
    no automaton ran outside a decision."""
    clear_caches()
    with recording_decisions() as (decisions, total):
        report = validate_files(files)
    assert decisions, "the rules decided nothing: this measures nothing"
    for d in decisions:
        assert d.budget is not None and d.budget.steps == FILE_SEARCH_STEPS, (d.rule, d.pattern)
        assert d.work.within(d.bound()), d
    inside = sum((d.work for d in decisions), Transitions())
    assert inside == total, (inside, total)  # no search or probe ran outside a paid decision
    return {p.rule for p in report.problems}, decisions


def test_a_project_file_of_the_size_limit_full_of_the_worst_patterns_is_bounded_by_its_budgets() -> None:
    files = project_file_of_worst_grants()
    assert len(files["projects/vision.yaml"]) > MAX_FILE_BYTES - 1000
    rules, decisions = _validate_counted(files)
    assert rules <= {"PERM001", "PERM002", "PERM003", "PERM005"}, rules
    hostile = set(_hostile_grants(5000))
    in_vision = [d for d in decisions if d.pattern in hostile]
    # Thousands of grants, two budgets: the permission rules' and the ceilings' for vision.yaml.
    assert len({id(d.budget) for d in in_vision}) <= 2
    # and the budget, not the end of the file, is what ended their search
    assert any(d.budget is not None and d.budget.exhausted for d in in_vision)


def test_an_org_file_of_the_size_limit_full_of_persona_patterns_is_bounded_by_its_budgets() -> None:
    files = org_file_of_worst_persona_patterns()
    assert len(files["org.yaml"]) > MAX_FILE_BYTES - 1000
    rules, decisions = _validate_counted(files)
    # PERM007 too: the example org's Viewer ceiling denies s3:Put*/s3:Delete*, which hostile s3 grants overlap
    assert rules <= {"PERM004", "PERM005", "PERM007"}, rules
    hostile = set(_hostile_grants(5000))
    in_org = [d for d in decisions if d.pattern in hostile]
    # Thousands of persona actions, two budgets: the permission rules' and the ceilings' for org.yaml.
    assert len({id(d.budget) for d in in_org}) <= 2
    assert any(d.budget is not None and d.budget.exhausted for d in in_org)


def test_a_boundary_larger_than_an_scp_is_refused_without_checking_grants_against_it() -> None:
    files = org_file_with_a_boundary_beyond_an_scp()
    clear_caches()
    with recording_decisions() as (decisions, _):
        report = validate_files(files)
    assert [p.rule for p in report.problems] == ["PERM005"]
    assert "more than the 5,120 an SCP may hold" in report.problems[0].message
    assert [d for d in decisions if d.rule == "permissions"] == []  # no grant is decided against it
    assert not any(set(d.against) & set(BEYOND_AN_SCP) for d in decisions)  # nor anything else, by any rule
