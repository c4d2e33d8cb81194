"""Governance rules over the whole tree, run after every file parsed and validated."""

from __future__ import annotations

from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem
from hypergov.rules.base import Rule
from hypergov.rules.capacity import check_capacity
from hypergov.rules.ceilings import check_ceilings
from hypergov.rules.clusters import check_clusters
from hypergov.rules.cost import check_cost
from hypergov.rules.identity import check_identity
from hypergov.rules.permissions import check_permissions
from hypergov.rules.quota_units import check_quota_units
from hypergov.rules.references import check_references
from hypergov.rules.trust import check_trust

ALL_RULES: tuple[Rule, ...] = (check_permissions, check_ceilings, check_capacity, check_references, check_identity,
                               check_trust, check_cost, check_clusters, check_quota_units)


def run_rules(tree: GovernanceTree) -> list[Problem]:
    return [p for rule in ALL_RULES for p in rule(tree)]
