"""Identity and naming: every name is valid for what it becomes (namespace, label value, HyperPod
team, IAM role, tag; lengths from every place a derived name is written, `rules.derived_names`),
unique across the organization, and every project has a lead."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from hypergov import naming
from hypergov.model.aws_limits import (
    BUDGET_NAME,
    COMPUTE_QUOTA_NAME,
    ROLE_NAME,
    ROLE_POLICY_NAME,
    SCHEDULER_CONFIG_NAME,
    TAGS_PER_RESOURCE,
    limit_max,
    shape_pattern,
)
from hypergov.model.common import PERSONAS, is_identity_center
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.problems import Problem, SourcePos
from hypergov.rules.base import problem
from hypergov.rules.derived_names import check_derived_names

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
HYPERPOD_TEAM = re.compile(shape_pattern("sagemaker", "ComputeQuotaTargetTeamName"))
ENTITY_NAME = re.compile(shape_pattern("sagemaker", "EntityName"))
ENTITY_NAME_MAX = limit_max(COMPUTE_QUOTA_NAME)
SCHEDULER_CONFIG_NAME_MAX = limit_max(SCHEDULER_CONFIG_NAME)
IAM_NAME = re.compile(shape_pattern("iam", "roleNameType").replace(r"\w", "A-Za-z0-9_"))
ROLE_NAME_MAX = limit_max(ROLE_NAME)
POLICY_NAME_MAX = limit_max(ROLE_POLICY_NAME)
BUDGET_NAME_MAX = limit_max(BUDGET_NAME)
MAX_TAGS = limit_max(TAGS_PER_RESOURCE)
HYPERGOV_TAGS = 4  # project, cost centre, hypergov:layer, hypergov:org


def check_identity(tree: GovernanceTree) -> Iterator[Problem]:
    yield from _object_names(tree)
    yield from check_derived_names(tree, well_formed=lambda name: _name_problem(name) is None)
    yield from _derived_names(tree)
    yield from _uniqueness(tree)
    yield from _members(tree)
    yield from _tags(tree)


def _file_pos(tree: GovernanceTree, rel: str) -> SourcePos:
    return SourcePos(tree.files.get(rel, rel))


def _name_problem(name: str) -> str | None:
    if name != unicodedata.normalize("NFKC", name) or not name.isascii():
        return "contains non-ASCII characters"
    if not DNS_LABEL.match(name):
        return "must be lowercase letters, digits and '-', starting and ending with a letter or digit"
    return None


def _object_names(tree: GovernanceTree) -> Iterator[Problem]:
    for team in sorted(tree.project_files):
        pos = _file_pos(tree, f"projects/{team}.yaml")
        why = _name_problem(team)  # its length: check_derived_names
        if why is None and not HYPERPOD_TEAM.match(team):
            why = "is not a valid HyperPod team name"
        if why:
            yield problem(pos, "IDN001", f"team name {team!r} (the file name) {why}",
                          "rename the file to a short DNS label such as 'vision-research.yaml'")
    for cluster in sorted(tree.cluster_files):
        why = _name_problem(cluster)
        if why:
            yield problem(_file_pos(tree, f"clusters/{cluster}.yaml"), "IDN001",
                          f"cluster name {cluster!r} (the file name) {why}",
                          "rename the file to a DNS label such as 'gpu-west-1.yaml'")
    for team, cls in sorted(tree.workloads):
        why = _name_problem(cls)
        if why:
            yield problem(tree.workloads[(team, cls)].pos(), "IDN001",
                          f"workload class name {cls!r} (the file name) {why}",
                          "rename the file to a DNS label such as 'large-training.yaml'")


def _derived_names(tree: GovernanceTree) -> Iterator[Problem]:
    yield from _scheduler_config_names(tree)
    if tree.org is None:
        return
    org = tree.org.model.name
    for team, project in sorted(tree.projects.items()):
        if _name_problem(team):
            continue
        pos = project.pos()
        for persona in PERSONAS:
            role = naming.role_name(org, team, persona)
            if len(role) > ROLE_NAME_MAX or not IAM_NAME.match(role):
                yield problem(pos, "IDN002",
                              f"IAM role name '{role}' is {len(role)} characters; IAM allows {ROLE_NAME_MAX}",
                              f"shorten the team name by {len(role) - ROLE_NAME_MAX} character(s)")
                break
            policy = naming.role_policy_name(org, team, persona)
            if len(policy) > POLICY_NAME_MAX:
                yield problem(pos, "IDN002", f"IAM policy name '{policy}' is too long",
                              "shorten the team name")
                break
        budget = naming.budget_name(org, team)
        if len(budget) > BUDGET_NAME_MAX:
            yield problem(pos, "IDN002", f"budget name '{budget}' is longer than {BUDGET_NAME_MAX}",
                          "shorten the team name")
        for cluster in sorted(project.model.quotas):
            quota = naming.compute_quota_name(team, cluster)
            if len(quota) > ENTITY_NAME_MAX or not ENTITY_NAME.match(quota):
                yield problem(project.pos("quotas", cluster, key=True), "IDN002",
                              f"compute quota name '{quota}' is {len(quota)} characters; "
                              f"SageMaker allows {ENTITY_NAME_MAX}",
                              "shorten the team or cluster name")


def _scheduler_config_names(tree: GovernanceTree) -> Iterator[Problem]:
    """A task-governance cluster's scheduler config is named after the cluster (a SageMaker EntityName)."""
    for name, cluster in sorted(tree.clusters.items()):
        config = naming.scheduler_config_name(name)
        if not cluster.model.task_governance or _name_problem(name):
            continue  # plain-EKS clusters have no scheduler config; an invalid name is IDN001's
        if len(config) > SCHEDULER_CONFIG_NAME_MAX or not ENTITY_NAME.match(config):
            yield problem(cluster.pos(), "IDN002",
                          f"scheduler config name '{config}' is {len(config)} characters; "
                          f"SageMaker allows {SCHEDULER_CONFIG_NAME_MAX}",
                          f"shorten the cluster name (the file name) by "
                          f"{len(config) - SCHEDULER_CONFIG_NAME_MAX} character(s)")


def _uniqueness(tree: GovernanceTree) -> Iterator[Problem]:
    seen: dict[str, list[tuple[str, SourcePos]]] = defaultdict(list)
    for name, cluster in sorted(tree.clusters.items()):
        seen[f"HyperPod cluster '{cluster.model.hyperpod.cluster_name}'"].append(
            (name, cluster.pos("hyperpod", "cluster_name")))
        seen[f"EKS cluster '{cluster.model.eks.cluster_name}' in account '{cluster.model.account}'"].append(
            (name, cluster.pos("eks", "cluster_name")))
        classes: dict[str, int] = {}
        for i, pc in enumerate(cluster.model.scheduler.priority_classes):
            if pc.name in classes:
                yield problem(cluster.pos("scheduler", "priority_classes", i, "name"), "IDN004",
                              f"priority class '{pc.name}' is defined twice", "remove or rename one of them")
            classes[pc.name] = i
    for team in sorted(tree.project_files):
        folded = unicodedata.normalize("NFKC", team).casefold()
        seen[f"team name '{folded}' (ignoring case and Unicode form)"].append(
            (team, _file_pos(tree, f"projects/{team}.yaml")))
    for team, project in sorted(tree.projects.items()):
        if tree.org is not None:
            for persona in PERSONAS:
                if any(is_identity_center(p) for p in project.model.members.of(persona)):
                    name = naming.permission_set_name(tree.org.model.name, team, persona)
                    seen[f"permission set name '{name}'"].append((team, project.pos("members", persona, key=True)))
        for quota_cluster in project.model.quotas:
            seen[f"compute quota name '{naming.compute_quota_name(team, quota_cluster)}'"].append(
                (team, project.pos("quotas", quota_cluster, key=True)))
    if tree.org is not None:
        for field in ("name", "id"):
            for i, account in enumerate(tree.org.model.accounts):
                seen[f"account {field} '{getattr(account, field)}'"].append(
                    ("org", tree.org.pos("accounts", i, field)))
    for what, owners in sorted(seen.items()):
        if len(owners) < 2:
            continue
        first_owner, first_pos = owners[0]
        for owner, pos in owners[1:]:
            yield problem(pos, "IDN004", f"{what} is used by both '{first_owner}' ({first_pos}) and '{owner}'",
                          "names must be unique across the organization; rename one of them")


def _members(tree: GovernanceTree) -> Iterator[Problem]:
    for team, project in sorted(tree.projects.items()):
        members = project.model.members
        if not members.ProjectLead:
            yield problem(project.pos("members", key=True), "IDN005", f"project '{team}' has no ProjectLead",
                          "add at least one principal under members.ProjectLead")
        holder: dict[str, str] = {}
        for persona in PERSONAS:
            for i, principal in enumerate(members.of(persona)):
                if principal in holder:
                    yield problem(project.pos("members", persona, i), "IDN008",
                                  f"{principal} already holds {holder[principal]} in this project",
                                  "bind each principal to one persona; the higher one includes the lower")
                else:
                    holder[principal] = persona


def _tags(tree: GovernanceTree) -> Iterator[Problem]:
    objects: list[tuple[str, Sourced[Any], dict[str, str]]] = [
        (f"cluster '{n}'", c, c.model.tags) for n, c in sorted(tree.clusters.items())]
    objects += [(f"project '{n}'", p, p.model.tags) for n, p in sorted(tree.projects.items())]
    for what, sourced, tags in objects:
        for key in sorted(tags):
            if key.lower().startswith("aws:"):
                yield problem(sourced.pos("tags", key, key=True), "IDN003",
                              f"tag key '{key}' uses the prefix 'aws:', which AWS reserves",
                              "drop the 'aws:' prefix")
            if key != key.strip() or tags[key] != tags[key].strip():
                yield problem(sourced.pos("tags", key, key=True), "IDN003",
                              f"tag '{key}' has leading or trailing spaces", "remove the spaces")
        if len(tags) + HYPERGOV_TAGS > MAX_TAGS:
            yield problem(sourced.pos("tags", key=True), "IDN003",
                          f"{what} sets {len(tags)} tags; with hypergov's {HYPERGOV_TAGS} that exceeds "
                          f"AWS's limit of {MAX_TAGS}", f"keep at most {MAX_TAGS - HYPERGOV_TAGS} tags")
    if tree.org is not None:
        for i, key in enumerate(tree.org.model.cost_allocation.required_tags):
            if key.lower().startswith("aws:"):
                yield problem(tree.org.pos("cost_allocation", "required_tags", i), "IDN003",
                              f"tag key '{key}' uses the prefix 'aws:', which AWS reserves",
                              "drop the 'aws:' prefix")
