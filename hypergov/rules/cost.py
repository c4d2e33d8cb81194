"""Cost attribution: every GPU-hour is traceable to a project through its tags, cost centre and
budget, and priced only for instance types the org allows."""

from __future__ import annotations

import re
from collections.abc import Iterator

from hypergov.model.org import Organization
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.problems import Problem
from hypergov.rules.base import problem

HYPERGOV_TAG_PREFIX = "hypergov:"


def check_cost(tree: GovernanceTree) -> Iterator[Problem]:
    if tree.org is None:
        return
    yield from _prices_of_allowed_types(tree.org)
    alloc = tree.org.model.cost_allocation
    owned = {alloc.project_tag, alloc.cost_centre_tag}
    try:
        centre_re: re.Pattern[str] | None = re.compile(alloc.cost_centre_pattern)
    except re.error as exc:
        centre_re = None
        yield problem(tree.org.pos("cost_allocation", "cost_centre_pattern"), "COST002",
                      f"cost_centre_pattern is not a valid regular expression: {exc}",
                      "fix the pattern, e.g. '^[A-Z]{2}-[0-9]{4}$'")
    for i, key in enumerate(alloc.required_tags):
        if key in owned or key.startswith(HYPERGOV_TAG_PREFIX):
            yield problem(tree.org.pos("cost_allocation", "required_tags", i), "COST004",
                          f"'{key}' is set by hypergov itself and cannot be required from projects",
                          "remove it from required_tags")
    for team, project in sorted(tree.projects.items()):
        model = project.model
        for key in sorted(alloc.required_tags):
            if key not in model.tags and key not in owned:
                yield problem(project.pos("tags", key=True), "COST001",
                              f"project '{team}' lacks the required tag '{key}'",
                              f"add '{key}: <value>' under tags")
        if model.cost_centre is None:
            yield problem(project.pos(), "COST002", f"project '{team}' has no cost_centre",
                          "add 'cost_centre: <id>' so every GPU-hour can be charged")
        elif centre_re is not None and not centre_re.search(model.cost_centre):
            yield problem(project.pos("cost_centre"), "COST002",
                          f"cost centre '{model.cost_centre}' does not match the org's pattern "
                          f"{alloc.cost_centre_pattern}", "use the org's cost-centre format")
        if model.budget is None or model.budget.monthly_usd == 0:
            yield problem(project.pos("budget", key=True), "COST003",
                          f"project '{team}' has no monthly budget",
                          "add 'budget: {monthly_usd: <amount>}'")
        for key in sorted(model.tags):
            if key in owned or key.startswith(HYPERGOV_TAG_PREFIX):
                yield problem(project.pos("tags", key, key=True), "COST004",
                              f"tag '{key}' is set by hypergov from the project's name and cost centre",
                              "remove it from tags")
    for name, cluster in sorted(tree.clusters.items()):
        for key in sorted(cluster.model.tags):
            if key in owned or key.startswith(HYPERGOV_TAG_PREFIX):
                yield problem(cluster.pos("tags", key, key=True), "COST004",
                              f"tag '{key}' on cluster '{name}' is set by hypergov", "remove it from tags")


def _prices_of_allowed_types(org: Sourced[Organization]) -> Iterator[Problem]:
    """A price for a type no cluster may run is a stale or mistyped entry: the chargeback would
    never use it, and the type it was meant for stays unpriced."""
    pricing = org.model.pricing
    if pricing is None:
        return
    allowed = set(org.model.allowed_instance_types)
    for itype in sorted(set(pricing.instance_types) - allowed):
        yield problem(org.pos("pricing", "instance_types", itype, key=True), "COST005",
                      f"pricing.instance_types prices {itype}, which is not in the org's allowed_instance_types",
                      f"remove the price of {itype}, or add {itype} to allowed_instance_types")
