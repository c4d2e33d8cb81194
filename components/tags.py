"""Cost-attribution tags: the one place that decides which tags a governed object carries.

Every taggable resource of every layer gets its tags from `cost_tags`, so the rule "every GPU-hour
is traceable to a project" is enforced by construction and checked once in the tests. hypergov's
own keys are written last and therefore cannot be overridden by a project or cluster file (the
validation rules reject such attempts anyway).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from hypergov.model.cluster import Cluster
from hypergov.model.org import Organization
from hypergov.model.project import Project

Layer = Literal["organization", "cluster", "project", "workload"]

ORG_TAG = "hypergov:org"
LAYER_TAG = "hypergov:layer"
CLUSTER_TAG = "hypergov:cluster"


def cost_tags(org: Organization, *, layer: Layer, project: tuple[str, Project] | None = None,
              cluster: tuple[str, Cluster] | None = None) -> dict[str, str]:
    """The tags of an object of `layer`; a team's objects carry its project tag and cost centre,
    a cluster's its cluster tags (a team's object on a cluster carries both, the team's winning)."""
    tags: dict[str, str] = {}
    if cluster is not None:
        name, model = cluster
        tags.update(model.tags)
        tags[CLUSTER_TAG] = name
    if project is not None:
        team, proj = project
        tags.update(proj.tags)
        tags[org.cost_allocation.project_tag] = team
        if proj.cost_centre is not None:
            tags[org.cost_allocation.cost_centre_tag] = proj.cost_centre
    tags[ORG_TAG] = org.name
    tags[LAYER_TAG] = layer
    return dict(sorted(tags.items()))


def as_tag_list(tags: Mapping[str, str]) -> list[dict[str, str]]:
    """CloudFormation-style `[{key, value}]` tags, as pulumi-aws-native and the SageMaker API take them."""
    return [{"key": k, "value": v} for k, v in sorted(tags.items())]


def k8s_labels(tags: Mapping[str, str]) -> dict[str, str]:
    """The same attribution as Kubernetes labels (keys under hypergov.io/, values label-safe)."""
    labels = {f"hypergov.io/{_label_key(k)}": _label_value(v) for k, v in tags.items()}
    return dict(sorted(labels.items()))


def _label_key(key: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in key.removeprefix("hypergov:"))
    return cleaned.strip("-_.")[:63] or "tag"


def _label_value(value: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "-" for c in value)
    return cleaned.strip("-_.")[:63]
