"""Limits as AWS documents them: the edges (min-1, min, max, max+1) of every numeric bound of a
value hypergov sends to AWS, and of every name it derives, checked through the real loader and
rules on the example tree.

The expected bounds are typed here from AWS's documentation (the SageMaker API Reference page
named in each row) or AWS's service model, never read from `hypergov.model.aws_limits`: a wrong
table must fail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import botocore.session
import pytest
import yaml
from corpus_overlay import example_tree

from hypergov.model.aws_limits import LIMITS
from hypergov.problems import Problem
from hypergov.tree_files import TreeEntry
from hypergov.validate import validate_files

EXAMPLE = example_tree()
API = "https://docs.aws.amazon.com/sagemaker/latest/APIReference"
TYPES = ["ml.p5.48xlarge", "ml.p4d.24xlarge", "ml.p4de.24xlarge", "ml.trn1.32xlarge", "ml.p5e.48xlarge",
         "ml.p5en.48xlarge", "ml.trn1n.32xlarge", "ml.trn2.48xlarge", "ml.g5.12xlarge", "ml.g5.24xlarge",
         "ml.g5.48xlarge", "ml.g6.12xlarge", "ml.g6.48xlarge", "ml.g6e.12xlarge", "ml.g6e.48xlarge",
         "ml.p6-b200.48xlarge"]


def _load(rel: str) -> Any:
    data = EXAMPLE[rel]
    assert isinstance(data, bytes)
    return yaml.safe_load(data)


def _with(rel: str, edit: Callable[[Any], None]) -> dict[str, TreeEntry]:
    doc = _load(rel)
    edit(doc)
    return {**EXAMPLE, rel: yaml.safe_dump(doc, sort_keys=False).encode()}


def _set_borrow(value: int) -> Callable[[Any], None]:
    return lambda d: d["quotas"]["gpu-west"].__setitem__("borrow_limit_percent", value)


def _set_fair_share(value: int) -> Callable[[Any], None]:
    return lambda d: d.__setitem__("fair_share_weight", value)


def _set_count(value: int) -> Callable[[Any], None]:
    return lambda d: d["quotas"]["gpu-west"]["instances"].__setitem__("ml.p5.48xlarge", value)


def _set_types(n: int) -> Callable[[Any], None]:
    return lambda d: d["quotas"]["gpu-west"].__setitem__("instances", {t: 1 for t in TYPES[:n]})


def _set_weight(value: int) -> Callable[[Any], None]:
    return lambda d: d["scheduler"]["priority_classes"][0].__setitem__("weight", value)


def _set_classes(n: int) -> Callable[[Any], None]:
    return lambda d: d["scheduler"].__setitem__("priority_classes",
                                                [{"name": f"class-{i}", "weight": i} for i in range(n)])


# (what, file, edit, documented min, documented max, source)
NUMERIC = [
    ("borrow_limit_percent", "projects/vision.yaml", _set_borrow, 1, 500,
     f"{API}/API_ResourceSharingConfig.html: 'The values can be 1 - 500 percent'"),
    ("fair_share_weight", "projects/vision.yaml", _set_fair_share, 0, 100,
     f"{API}/API_ComputeQuotaTarget.html: 'A weight of 0 is the lowest priority and 100 is the highest'"),
    ("quota instance count", "projects/vision.yaml", _set_count, 0, 10_000_000,
     "botocore's sagemaker service model, shape InstanceCount (ComputeQuotaResourceConfig.Count): 0-10,000,000"),
    ("instance types in a quota", "projects/vision.yaml", _set_types, 1, 15,
     f"{API}/API_ComputeQuotaConfig.html: ComputeQuotaResources, 'Maximum number of 15 items' (1: hypergov)"),
    ("priority class weight", "clusters/gpu-west.yaml", _set_weight, 0, 100,
     f"{API}/API_PriorityClass.html: 'The value is within a range from 0 to 100'"),
    ("priority classes", "clusters/gpu-west.yaml", _set_classes, 1, 10,
     f"{API}/API_SchedulerConfig.html: PriorityClasses, 'Maximum number of 10 items' (1: hypergov)"),
]


def _edges() -> list[Any]:
    params = []
    for what, rel, edit, low, high, _ in NUMERIC:
        for value, ok, edge in ((low - 1, False, "min-1"), (low, True, "min"), (high, True, "max"),
                                (high + 1, False, "max+1")):
            if value < 0 and what in ("instance types in a quota", "priority classes"):
                continue
            params.append(pytest.param(rel, edit(value), ok, id=f"{what.replace(' ', '-')}-{edge}-{value}"))
    return params


@pytest.mark.parametrize(("rel", "edit", "ok"), _edges())
def test_numeric_edges(rel: str, edit: Callable[[Any], None], ok: bool) -> None:
    problems = validate_files(_with(rel, edit), display_root="config").problems
    out_of_range = [p for p in problems if p.rule == "SCH004" and p.pos.file == f"config/{rel}"]
    assert (not out_of_range) is ok, out_of_range
    assert all(p.rule != "SCH004" for p in problems if p.pos.file != f"config/{rel}")


def _project(team: str) -> dict[str, TreeEntry]:
    """The example tree plus project `team` (a copy of recsys) with a quota on gpu-west."""
    return {**EXAMPLE, f"projects/{team}.yaml": EXAMPLE["projects/recsys.yaml"]}


def _cluster(name: str) -> dict[str, TreeEntry]:
    """The example tree plus a task-governance cluster `name` (a copy of gpu-west, renamed inside)."""
    doc = _load("clusters/gpu-west.yaml")
    doc["hyperpod"] = {"cluster_name": "gpu-north",
                       "arn": "arn:aws:sagemaker:us-west-2:111122223333:cluster/n0rth5x4q1wz"}
    doc["eks"] = {"cluster_name": "gpu-north-eks"}
    doc["capacity"] = {"ml.p5.48xlarge": {"instances": 1}}
    return {**EXAMPLE, f"clusters/{name}.yaml": yaml.safe_dump(doc).encode()}


def _about(problems: list[Problem], rule: str, needle: str) -> list[Problem]:
    return [p for p in problems if p.rule == rule and needle in p.message]


# The org is 'acme'. (name, documented max, how long the team/cluster name is at the edge,
# the tree for a name of that length, rule, what the message says).
DERIVED = [
    ("compute quota name <team>-on-gpu-west", 63, 63 - len("-on-gpu-west"), _project, "IDN002", "compute quota name",
     f"{API}/API_CreateComputeQuota.html: Name, 'Maximum length of 63'"),
    ("scheduler config name <cluster>-scheduler", 63, 63 - len("-scheduler"), _cluster, "IDN002",
     "scheduler config name", f"{API}/API_CreateClusterSchedulerConfig.html: Name, 'Maximum length of 63'"),
    ("IAM role name acme-<team>-engineer", 64, 64 - len("acme--engineer"), _project, "IDN002", "IAM role name",
     "https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html: RoleName, 'Maximum length of 64'"),
    ("budget name acme-<team>-monthly", 100, 100 - len("acme--monthly"), _project, "IDN002", "budget name",
     "https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_budgets_Budget.html: "
     "BudgetName, 'Maximum length of 100'"),
    ("namespace hyperpod-ns-<team>", 63, 63 - len("hyperpod-ns-"), _project, "IDN001", "namespace",
     "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/: DNS labels, at most 63"),
]


@pytest.mark.parametrize(("edit", "tree", "rule", "needle", "too_long"), [
    pytest.param(edit, tree, rule, needle, longer, id=f"{what}-{'max+1' if longer else 'max'}")
    for what, _, edit, tree, rule, needle, _ in DERIVED for longer in (False, True)])
def test_derived_name_edges(edit: int, tree: Callable[[str], dict[str, TreeEntry]], rule: str, needle: str,
                            too_long: bool) -> None:
    name = ("n" * (edit + too_long))
    found = _about(validate_files(tree(name), display_root="config").problems, rule, needle)
    assert bool(found) is too_long, found


def test_the_table_says_where_each_limit_comes_from() -> None:
    """Every row names its source; botocore rows are botocore's numbers exactly; docs rows name
    their page, and where they record the service model's bounds those are looser."""
    session = botocore.session.get_session()
    for key, limit in LIMITS.items():
        assert limit.source.startswith(("botocore model: ", "AWS docs: ", "Kubernetes docs: ")), key
        if limit.source.startswith("botocore model: "):
            service, shape_name = limit.source.removeprefix("botocore model: ").split(";")[0].split(" ")[:2]
            meta = session.get_service_model(service).shape_for(shape_name).metadata
            assert limit.max == meta.get("max"), key
            assert limit.min in (meta.get("min"), 1), key  # 1: hypergov asks for at least one (said in the note)
        else:
            assert "https://" in limit.source, key
        if limit.botocore is not None:
            low, high = limit.botocore
            assert (low is None or limit.min is None or low <= limit.min) and (
                high is None or limit.max is None or high >= limit.max), key


def test_borrow_limit_is_the_documented_range_not_the_service_models() -> None:
    limit = LIMITS["projects/*.quotas.*.borrow_limit_percent"]
    assert (limit.min, limit.max) == (1, 500)
    assert limit.botocore == (0, 10_000)  # botocore 1.44's sagemaker model: looser than the documentation
    assert "API_ResourceSharingConfig" in limit.source
