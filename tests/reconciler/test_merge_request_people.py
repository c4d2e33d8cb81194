"""The merge request's summary asks the identity store once, for exactly the Identity Center
members the change adds or removes (`reconciler.merge_request.leading_sections`), and shows its
answers; a change without such members asks nothing. The store here is a stand-in recording what
it was asked (the embedded endpoint's answers: tests/integration/test_merge_request_people.py)."""

from __future__ import annotations

from collections.abc import Sequence

from hypergov.identity_people import People, Person, not_checked
from hypergov.validate import ValidationReport, validate_files
from reconciler.merge_request import leading_sections
from tests.core.merge_request_cases import replace
from tests.example_tree import example_files, example_tree


def _head(edit: tuple[str, str, str]) -> ValidationReport:
    files = example_files()
    replace(files, *edit)
    report = validate_files(files)
    assert report.ok, report.problems
    return report


class Store:
    """Answers from a dict; records each question."""

    def __init__(self, answers: People) -> None:
        self.answers = answers
        self.asked: list[tuple[str, ...]] = []

    def __call__(self, principals: Sequence[str]) -> People:
        self.asked.append(tuple(principals))
        return {p: self.answers[p] for p in principals}


# config/projects/vision.yaml: Viewer finance-analysts becomes nlp-engineers (which nlp.yaml names too)
SWAP = ("projects/vision.yaml", "  Viewer:\n    - identitycenter:group/finance-analysts\n",
        "  Viewer:\n    - identitycenter:group/nlp-engineers\n")


def test_the_store_is_asked_once_for_the_changed_members_only() -> None:
    store = Store({"identitycenter:group/nlp-engineers": (Person("akowalski", "Adam Kowalski"),
                                                          Person("lwinter", "Lena Winter")),
                   "identitycenter:group/finance-analysts": ()})
    summary = leading_sections(example_tree(), _head(SWAP), people_of=store)[0]
    assert store.asked == [("identitycenter:group/finance-analysts", "identitycenter:group/nlp-engineers")]
    assert "  - `- identitycenter:group/finance-analysts` (Viewer): no members\n" in summary
    assert "  - `+ identitycenter:group/nlp-engineers` (Viewer): 2 people\n    <details>" in summary


def test_not_checked_members_say_so() -> None:
    def offline(principals: Sequence[str]) -> People:
        return not_checked(principals, "no AWS credentials")

    summary = leading_sections(example_tree(), _head(SWAP), people_of=offline)[0]
    assert "  - `+ identitycenter:group/nlp-engineers` (Viewer): not checked (no AWS credentials)" in summary
    assert "people" not in summary


def test_a_change_without_identity_center_members_asks_nothing() -> None:
    store = Store({})
    head = _head(("projects/vision.yaml", "    - arn:aws:iam::111122223333:user/alice\n",
                  "    - arn:aws:iam::111122223333:user/alice\n    - arn:aws:iam::111122223333:user/dan\n"))
    summary = leading_sections(example_tree(), head, people_of=store)[0]
    assert store.asked == [] and "  - `+ arn:aws:iam::111122223333:user/dan` (Engineer)" in summary
