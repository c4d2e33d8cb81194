"""The bound of each name in the tree follows from the places its derived names are written
(`hypergov.rules.derived_names`): the table's names are the input plus fixed text (so the room an
input has at a place is the place's bound minus that text), and each input's tightest place is
the one the documents make it.

Expected values are typed from the documents: a Kubernetes label value holds 63 characters
(https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set),
an IAM role name 64 (https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html:
RoleName, 'Maximum length of 64').
"""

from __future__ import annotations

import pytest

from hypergov.rules.derived_names import (
    DERIVED_NAMES,
    PLAIN_EKS,
    TASK_GOVERNANCE,
    DerivedName,
    Input,
    Mode,
    input_bound,
)


@pytest.mark.parametrize("derived", [pytest.param(d, id=f"{d.input}: {d.place}") for d in DERIVED_NAMES])
def test_a_derived_name_is_its_input_plus_fixed_text(derived: DerivedName) -> None:
    name = derived.name
    assert len(name("abc")) == len(name("")) + 3 and "abc" in name("abc")


@pytest.mark.parametrize(("of", "modes", "room", "place"), [
    pytest.param("team", None, 63 - len("hyperpod-ns-") - len("-localqueue"), "kueue.x-k8s.io/queue-name", id="team"),
    pytest.param("priority class", TASK_GOVERNANCE, 63 - len("-priority"), "kueue.x-k8s.io/priority-class",
                 id="priority-class-task-governance"),
    pytest.param("priority class", PLAIN_EKS, 63 - len("-priority"), "kueue.x-k8s.io/priority-class",
                 id="priority-class-plain-eks"),  # hypergov names its own classes as the add-on does
    pytest.param("cluster", None, 63 - len("cluster-"), "hypergov.dev/stack", id="cluster"),
    pytest.param("org", None, 64 - len("-platform-administrator"), "IAM role name", id="org"),
])
def test_each_input_is_bounded_by_its_tightest_place(of: Input, modes: tuple[Mode, ...] | None, room: int,
                                                     place: str) -> None:
    tightest = input_bound(of, modes) if modes else input_bound(of)
    assert tightest.room == room and place in tightest.place


def test_the_org_name_pattern_fits_every_org_derived_name() -> None:
    """hypergov's own org bound (OrgName: at most 20, hypergov/model/org.py) is within the tightest place."""
    assert input_bound("org").room >= 20
