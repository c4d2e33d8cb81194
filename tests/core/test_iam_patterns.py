"""IAM action-pattern containment is decided exactly (not by string prefix)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypergov.rules.iam_patterns import matches, normalize, overlapping_action, uncovered_action


@pytest.mark.parametrize(
    ("pattern", "allowed", "contained"),
    [
        pytest.param("s3:GetObject", ["s3:Get*"], True, id="literal-in-wildcard"),
        pytest.param("s3:Get*", ["s3:*Object"], False, id="prefix-vs-suffix-wildcard"),
        pytest.param("s3:Get*", ["s3:GetO*", "s3:Get?*"], False, id="union-misses-bare-Get"),
        pytest.param("s3:Get*", ["s3:Get", "s3:Get?*"], True, id="union-covers-exactly"),
        pytest.param("s3:*", ["s3:?*"], True, id="empty-action-is-no-action"),
        pytest.param("S3:getobject", ["s3:GetObject"], True, id="case-insensitive"),
        pytest.param("ec2:Describe*", ["*"], True, id="star-covers-all"),
        pytest.param("*", ["s3:*", "ec2:*"], False, id="star-not-covered-by-services"),
        pytest.param("s?:Get*", ["s3:*"], False, id="question-mark-in-service"),
        pytest.param("sagemaker:Describe*", ["sagemaker:*"], True, id="service-wildcard"),
        pytest.param("sagemaker:*", ["sagemaker:Describe*", "sagemaker:List*"], False, id="narrow-union"),
        pytest.param("s3:Get*Tagging", ["s3:Get*"], True, id="infix-in-prefix"),
        pytest.param("s3:Get*", ["s3:Get*Tagging"], False, id="prefix-not-in-infix"),
    ],
)
def test_containment(pattern: str, allowed: list[str], contained: bool) -> None:
    witness = uncovered_action(pattern, tuple(allowed))
    assert (witness is None) == contained
    if witness is not None:
        assert matches(pattern, witness)
        assert not any(matches(a, witness) for a in allowed)


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        pytest.param("s3:Get*", "s3:*Tagging", True, id="prefix-suffix"),
        pytest.param("s3:Put*", "s3:Get*", False, id="disjoint-prefixes"),
        pytest.param("sagemaker:Describe*", "sagemaker:*ClusterSchedulerConfig", True, id="describe-scheduler"),
        pytest.param("iam:*", "iam:PassRole", True, id="literal-in-star"),
        pytest.param("ec2:?", "ec2:??", False, id="lengths-differ"),
    ],
)
def test_overlap(a: str, b: str, overlap: bool) -> None:
    witness = overlapping_action(a, b)
    assert (witness is not None) == overlap
    if witness is not None:
        assert matches(a, witness) and matches(b, witness)


ALPHABET = "ab:"
patterns = st.text(alphabet="ab:*?", min_size=1, max_size=5)


def _words(max_len: int) -> list[str]:
    return ["".join(p) for n in range(1, max_len + 1) for p in itertools.product(ALPHABET + "x", repeat=n)]


WORDS = [w for w in _words(7) if w.count(":") == 1 and not w.startswith(":") and not w.endswith(":")]


@settings(max_examples=300, deadline=None)
@given(pattern=patterns, allowed=st.lists(patterns, min_size=1, max_size=3))
def test_containment_agrees_with_enumeration(pattern: str, allowed: list[str]) -> None:
    """Witnesses are real counterexamples; 'contained' has none among all short actions."""
    witness = uncovered_action(pattern, tuple(allowed))
    if witness is not None:
        assert matches(pattern, witness) and not any(matches(a, witness) for a in allowed)
    else:
        for w in WORDS:
            assert not matches(pattern, w) or any(matches(a, w) for a in allowed), w


@settings(max_examples=300, deadline=None)
@given(a=patterns, b=patterns)
def test_overlap_agrees_with_enumeration(a: str, b: str) -> None:
    """The polynomial overlap search finds a common action exactly when short actions have one."""
    witness = overlapping_action(a, b)
    if witness is not None:
        assert matches(a, witness) and matches(b, witness)
    else:
        assert not any(matches(a, w) and matches(b, w) for w in WORDS)


HYPHEN_WORDS = [w for w in ("".join(p) for n in range(3, 6) for p in itertools.product("a-:", repeat=n))
                if w.count(":") == 1 and not w.startswith(":") and not w.endswith(":")]


@settings(max_examples=150, deadline=None)
@given(pattern=st.text(alphabet="a-:*?", min_size=1, max_size=5),
       allowed=st.lists(st.text(alphabet="a-:*?", min_size=1, max_size=5), min_size=1, max_size=3))
def test_containment_with_hyphens_agrees_with_enumeration(pattern: str, allowed: list[str]) -> None:
    witness = uncovered_action(pattern, tuple(allowed))
    if witness is not None:
        assert matches(pattern, witness) and not any(matches(a, witness) for a in allowed)
    else:
        for w in HYPHEN_WORDS:
            assert not matches(pattern, w) or any(matches(a, w) for a in allowed), w


@pytest.mark.parametrize(("pattern", "normal"), [
    ("S3:Get*", "s3:get*"), ("s3:**?*?", "s3:??*"), ("a*?b", "a?*b"), ("*?*", "?*"), ("a??b", "a??b")])
def test_normalize_keeps_the_language(pattern: str, normal: str) -> None:
    assert normalize(pattern) == normal
    for w in ("s3:getx", "s3:get", "axb", "ab", "axyb", "x", "s3:g"):
        assert matches(pattern, w) == matches(normal, w)
