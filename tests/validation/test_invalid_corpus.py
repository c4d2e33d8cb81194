"""Every invalid tree of the corpus (`cases/*.yaml`, overlays on the example tree) reports exactly
the problems its case lists: the rule id, the file and the line, and nothing else.

"Nothing else" matters as much as the expected problem: a syntax error that also drags in three
unrelated rule failures, or a rule firing where it cannot apply, is a bug a user pays for in
confusion. Known bugs are cases with an `xfail:` reason (strict, so the mark flips when fixed).
"""

from __future__ import annotations

import pytest
from corpus_overlay import Case, Expected, build_files, example_tree, load_cases

from hypergov.problems import Problem
from hypergov.rules.catalog import BY_ID, RULES
from hypergov.validate import validate_files

MIN_CASES_PER_RULE = 3
CASES = load_cases()
EXAMPLE = example_tree()


def _param(case: Case) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.name, marks=marks)


def _show(problems: list[Problem]) -> str:
    return "\n".join(f"  {p.pos}  {p.rule}  {p.message}  [hint: {p.hint}]" for p in problems) or "  (none)"


def _matches(p: Problem, e: Expected) -> bool:
    return (p.rule, p.pos.file, p.pos.line) == (e.rule, e.shown_file, e.line)


def _check_details(e: Expected, found: list[Problem]) -> list[str]:
    """What is wrong with the problems reported for one expected entry (empty: all fine)."""
    where = f"{e.rule} at {e.shown_file}:{e.line}"
    errors = []
    if e.column is not None and all(p.pos.column != e.column for p in found):
        errors.append(f"{where}: column {[p.pos.column for p in found]}, expected {e.column}")
    if all(p.severity.value != e.severity for p in found):
        errors.append(f"{where}: severity {[p.severity.value for p in found]}, expected {e.severity}")
    checks = ((e.message_has, "message", True), (e.message_lacks, "message", False),
              (e.hint_has, "hint", True), (e.hint_lacks, "hint", False))
    for needle, attr, wanted in checks:
        if needle is None:
            continue
        texts = [getattr(p, attr) for p in found]
        if wanted and not any(needle in t for t in texts):
            errors.append(f"{where}: {attr} should contain {needle!r}: {texts}")
        if not wanted and any(needle in t for t in texts):
            errors.append(f"{where}: {attr} should not contain {needle!r}: {texts}")
    return errors


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case_reports_exactly_its_expected_problems(case: Case) -> None:
    report = validate_files(build_files(case, EXAMPLE), display_root="config")
    problems = report.problems
    reported = {(p.rule, p.pos.file, p.pos.line) for p in problems}
    expected = {(e.rule, e.shown_file, e.line) for e in case.expect}
    assert reported == expected, (
        f"{case.name}: {case.description}\nmissing: {sorted(expected - reported)}\n"
        f"unexpected: {sorted(reported - expected)}\nreported:\n{_show(problems)}")
    errors = [err for e in case.expect for err in _check_details(e, [p for p in problems if _matches(p, e)])]
    assert not errors, "\n".join(errors) + f"\nreported:\n{_show(problems)}"
    assert report.ok is all(e.severity == "warning" for e in case.expect)


@pytest.mark.parametrize("case", [_param(c) for c in CASES if not c.xfail])
def test_every_problem_says_what_and_how_to_fix(case: Case) -> None:
    """Each problem has a message and a one-line hint, and names a file inside the tree."""
    for p in validate_files(build_files(case, EXAMPLE), display_root="config").problems:
        assert p.message.strip() and p.hint.strip(), p
        assert "\n" not in p.hint and "\n" not in p.message, p
        assert p.pos.file.startswith("config/") and p.pos.line >= 1 and p.pos.column >= 1, p
        assert "Traceback" not in p.message and "Error(" not in p.message, p


@pytest.mark.parametrize("rule", [pytest.param(r.id, id=r.id) for r in RULES])
def test_every_rule_has_at_least_three_passing_cases(rule: str) -> None:
    """Known-bug cases do not count: each rule is pinned by three cases that pass today."""
    named = [c for c in CASES if c.rule_prefix == rule and not c.xfail and any(e.rule == rule for e in c.expect)]
    assert len(named) >= MIN_CASES_PER_RULE, f"{rule}: only {[c.name for c in named]}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_case_is_named_after_a_rule_it_expects(case: Case) -> None:
    assert case.rule_prefix in BY_ID, f"{case.name}: no rule {case.rule_prefix} in the catalogue"
    assert any(e.rule == case.rule_prefix for e in case.expect), case.name
    assert all(e.rule in BY_ID for e in case.expect), case.name
    assert case.description.strip(), f"{case.name}: say what is wrong in 'description'"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_case_changes_the_example_tree(case: Case) -> None:
    """An overlay that changes nothing would test the example tree, not the mistake."""
    assert build_files(case, EXAMPLE) != EXAMPLE


# The kinds of mistake the foundation issue names explicitly, beyond one family per rule.
SPECIALS = {
    "empty file": "syn003-empty-project",
    "syntax error": "syn001-value-with-second-colon",
    "duplicate key": "syn002-top-level-key-twice",
    "wrong type": "sch002-string-for-integer",
    "unknown key": "sch001-typo-max-run-time",
    "10**30 integer": "sch004-huge-integer-budget",
    "5,000-character string": "sch004-5000-char-description",
    "file over 1 MB": "syn005-file-over-one-megabyte",
    "alias bomb": "syn005-alias-bomb",
    "Cyrillic look-alike in a project file name": "idn001-cyrillic-lookalike",
    "zero-width space in a value": "idn007-zero-width-space-in-tag-value",
    "right-to-left override in a value": "idn007-rtl-override-in-description",
    "NFKC-equal duplicate team names": "idn004-fullwidth-team-name",
    "uppercase variant of a team name": "idn004-uppercase-variant",
}


@pytest.mark.parametrize(("kind", "name"), [pytest.param(k, n, id=n) for k, n in SPECIALS.items()])
def test_corpus_has_the_special_cases(kind: str, name: str) -> None:
    names = {c.name: c for c in CASES}
    assert name in names, f"no case for {kind}"
    assert names[name].xfail is None, f"the case for {kind} must pass, not be a known bug"
