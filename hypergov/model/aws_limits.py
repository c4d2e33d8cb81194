"""Field limits as AWS has them: from botocore's official service models, and from AWS's
documentation where the service model is looser.

When AWS changes a limit (a new HyperPod instance type, a longer name), upgrading botocore
updates our validation with it. Each helper returns pydantic metadata for `Annotated[...]` carrying the
shape's length bounds, pattern (anchored: AWS matches the whole value), range or enum.

The service model is not always the contract: it lets `BorrowLimit` range 0-10,000 where the
documentation says 1-500 percent. `LIMITS` at the end is the one table of every numeric bound
of a value hypergov sends to AWS (or derives a name from), each with its source; the models and
the identity rules read their bounds from it.
"""

from __future__ import annotations

import atexit
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import botocore
from annotated_types import Interval, Len
from pydantic import GetCoreSchemaHandler, StringConstraints
from pydantic_core import core_schema

if TYPE_CHECKING:
    import botocore.session
    from botocore.model import ServiceModel


@cache
def _service(name: str) -> ServiceModel:
    return _session().get_service_model(name)


@lru_cache(maxsize=1)
def _session() -> botocore.session.Session:
    import botocore.session  # only when a shape is not kept (`_KeptFacts`): its import is ~0.08 s

    return botocore.session.get_session()


@dataclass(frozen=True)
class ShapeFacts:
    """What hypergov reads of a botocore shape: its metadata (min, max, pattern) and its enum."""

    metadata: Mapping[str, Any]
    enum: tuple[str, ...]


def shape(service: str, shape_name: str) -> ShapeFacts:
    return _facts(service, shape_name, None)


def member_shape(service: str, structure: str, member: str) -> ShapeFacts:
    return _facts(service, structure, member)


@cache
def _facts(service: str, shape_name: str, member: str | None) -> ShapeFacts:
    key = f"{service}/{shape_name}" + (f"/{member}" if member else "")
    kept = _KEPT.facts.get(key)
    if kept is not None:
        return ShapeFacts(kept["metadata"], tuple(kept["enum"]))
    from botocore.model import StructureShape

    found = _service(service).shape_for(shape_name)
    if member is not None:
        assert isinstance(found, StructureShape), f"{service} {shape_name} is not a structure"
        found = found.members[member]
    facts = ShapeFacts(dict(found.metadata), tuple(getattr(found, "enum", ())))  # only a string shape has one
    _KEPT.add(key, facts)
    return facts


class _KeptFacts:
    """The shapes' facts kept between processes, one file per botocore version: loading the
    service models (sagemaker's alone is ~40 ms) is a tenth of a second of every hypergov
    command's start, for a few dozen numbers and patterns. Only speed depends on it: an unreadable
    file is read from botocore again, an unwritable directory keeps nothing. Not kept when botocore
    may read models other than its own (`AWS_DATA_PATH`, `~/.aws/models`): the version would not
    name them."""

    FORMAT = 1

    def __init__(self) -> None:
        self.path = _kept_path()
        self.facts: dict[str, dict[str, Any]] = {}
        self._added = False
        if self.path is not None:
            try:
                loaded = json.loads(self.path.read_text())
                self.facts = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self.facts = {}

    def add(self, key: str, facts: ShapeFacts) -> None:
        self.facts[key] = {"metadata": dict(facts.metadata), "enum": list(facts.enum)}
        if self.path is not None and not self._added:
            self._added = True
            atexit.register(self.write)

    def write(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, prefix=".aws-shapes-", delete=False) as out:
                json.dump(self.facts, out, sort_keys=True)
            os.replace(out.name, self.path)  # whole or not at all, whoever else writes it
        except OSError:
            pass


def _kept_path() -> Path | None:
    """`HYPERGOV_CACHE_DIR`, else `$XDG_CACHE_HOME/hypergov` (when absolute, as the XDG spec
    says), else `~/.cache/hypergov`; None without a home to find (or where botocore reads models
    of its own)."""
    home = Path(os.path.expanduser("~"))
    if os.environ.get("AWS_DATA_PATH") or not home.is_absolute() or (home / ".aws" / "models").exists():
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = os.environ.get("HYPERGOV_CACHE_DIR") or (Path(xdg) if os.path.isabs(xdg) else home / ".cache") / "hypergov"
    return Path(base) / f"aws-shapes-{botocore.__version__}-v{_KeptFacts.FORMAT}.json"


_KEPT = _KeptFacts()


def anchored(pattern: str) -> str:
    """AWS validates the whole value; botocore patterns are often written unanchored."""
    core = pattern.removeprefix("^").removesuffix("$")
    return f"^(?:{core})$"


def aws_str(service: str, shape_name: str, *, member: str | None = None) -> StringConstraints:
    """String constraints exactly as the AWS shape (or structure member) has them.
    Use as `Annotated[str, aws_str("iam", "roleNameType"), Field(description=...)]`."""
    found = member_shape(service, shape_name, member) if member else shape(service, shape_name)
    meta = found.metadata
    pattern = meta.get("pattern")
    return StringConstraints(min_length=meta.get("min"), max_length=meta.get("max"),
                             pattern=anchored(pattern) if pattern else None)


def aws_range(service: str, shape_name: str) -> Interval:
    """Numeric bounds of an AWS integer shape, e.g. `Annotated[int, aws_range("sagemaker", "FairShareWeight")]`."""
    meta = shape(service, shape_name).metadata
    return Interval(ge=meta.get("min"), le=meta.get("max"))


def aws_enum_values(service: str, shape_name: str) -> tuple[str, ...]:
    return shape(service, shape_name).enum


@dataclass(frozen=True)
class AwsEnum:
    """A string that must be one of an AWS enum shape's values (JSON Schema: `enum`)."""

    service: str
    shape_name: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.literal_schema(list(aws_enum_values(self.service, self.shape_name)))


def shape_pattern(service: str, shape_name: str) -> str:
    return anchored(shape(service, shape_name).metadata["pattern"])


def shape_max(service: str, shape_name: str) -> int:
    return int(shape(service, shape_name).metadata["max"])


# --- the one table of limits: every bound of a value hypergov sends to AWS, with its source ----


@dataclass(frozen=True)
class Limit:
    """One bound of a config value that becomes an AWS API field (or part of a name hypergov
    derives). `source` says where the numbers come from: "botocore model: <service> <shape>"
    (read from botocore at import, never retyped) or "AWS docs: <page>" (typed here, with the
    page, where the documentation is stricter than the service model)."""

    aws_field: str
    min: int | None
    max: int | None
    source: str
    botocore: tuple[int | None, int | None] | None = None  # the service model's bounds, where looser


def _bounds(service: str, shape_name: str) -> tuple[int | None, int | None]:
    meta = shape(service, shape_name).metadata
    return meta.get("min"), meta.get("max")


def _from_botocore(aws_field: str, service: str, shape_name: str, *, min_: int | None = None,
                   note: str = "") -> Limit:
    """A limit exactly as botocore has it; `min_` raises the lower bound for hypergov's own reason (`note`)."""
    low, high = _bounds(service, shape_name)
    source = f"botocore model: {service} {shape_name}" + (f"; {note}" if note else "")
    return Limit(aws_field, low if min_ is None else min_, high, source)


API = "https://docs.aws.amazon.com/sagemaker/latest/APIReference"
K8S_NAMES = "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names"
K8S_SUBDOMAIN = "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-subdomain-names"
K8S_LABELS = "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set"

BORROW_LIMIT = "projects/*.quotas.*.borrow_limit_percent"
FAIR_SHARE_WEIGHT = "projects/*.fair_share_weight"
QUOTA_COUNT = "projects/*.quotas.*.instances.*"
QUOTA_INSTANCE_TYPES = "projects/*.quotas.*.instances + resources"
QUOTA_ACCELERATORS = "projects/*.quotas.*.{resources,absolute_borrow_limits}.*.accelerators"
QUOTA_VCPU = "projects/*.quotas.*.{resources,absolute_borrow_limits}.*.vcpu"
QUOTA_MEMORY_GIB = "projects/*.quotas.*.{resources,absolute_borrow_limits}.*.memory_gib"
QUOTA_PARTITION_COUNT = "projects/*.quotas.*.{resources,absolute_borrow_limits}.*.partition.count"
ABSOLUTE_BORROW_LIMITS = "projects/*.quotas.*.absolute_borrow_limits"
PRIORITY_WEIGHT = "clusters/*.scheduler.priority_classes[].weight"
PRIORITY_CLASSES = "clusters/*.scheduler.priority_classes"
PRIORITY_CLASS_NAME = "clusters/*.scheduler.priority_classes[].name"
NAMESPACE = "namespace hyperpod-ns-<team>"
LABEL_VALUE = "a Kubernetes label value (queue-name, priority-class, hypergov.dev/stack)"
OBJECT_NAME = "a Kubernetes object name (DNS subdomain: queues, RBAC, priority classes, policies)"
COMPUTE_QUOTA_NAME = "compute quota name <team>-on-<cluster>"
SCHEDULER_CONFIG_NAME = "scheduler config name <cluster>-scheduler"
ROLE_NAME = "IAM role name <org>-<team>-<persona>"
ROLE_POLICY_NAME = "IAM role policy name <org>-<team>-<persona>-access"
BUDGET_NAME = "budget name <org>-<team>-monthly"
PERMISSION_SET_NAME = "Identity Center permission set name <org>-<team>-<persona> (hashed when longer)"
INSTANCE_GROUPS = "clusters/*.hyperpod.instance_groups"
GROUP_INSTANCE_COUNT = "clusters/*.hyperpod.instance_groups[].instance_count"
GROUP_THREADS_PER_CORE = "clusters/*.hyperpod.instance_groups[].threads_per_core"
GROUP_VOLUME_GB = "clusters/*.hyperpod.instance_groups[].volume_size_gb"
TAGS_PER_RESOURCE = "tags per AWS resource (the object's and hypergov's)"
TAG_VALUE = "an AWS tag value (the project, hypergov:cluster and hypergov:org tags)"

LIMITS: dict[str, Limit] = {
    BORROW_LIMIT: Limit(
        "ResourceSharingConfig.BorrowLimit", 1, 500,
        f"AWS docs: SageMaker API Reference, ResourceSharingConfig ('The values can be 1 - 500 percent of "
        f"idle compute that the team is allowed to borrow'), {API}/API_ResourceSharingConfig.html",
        botocore=_bounds("sagemaker", "BorrowLimit")),
    FAIR_SHARE_WEIGHT: _from_botocore("ComputeQuotaTarget.FairShareWeight", "sagemaker", "FairShareWeight",
                                      note=f"AWS docs agree (0-100), {API}/API_ComputeQuotaTarget.html"),
    QUOTA_COUNT: _from_botocore("ComputeQuotaResourceConfig.Count", "sagemaker", "InstanceCount"),
    QUOTA_INSTANCE_TYPES: _from_botocore(
        "ComputeQuotaConfig.ComputeQuotaResources (items)", "sagemaker", "ComputeQuotaResourceConfigList", min_=1,
        note="at least 1: hypergov (a quota without instances guarantees nothing; leave the cluster out instead)"),
    QUOTA_ACCELERATORS: _from_botocore("ComputeQuotaResourceConfig.Accelerators", "sagemaker", "AcceleratorsAmount"),
    QUOTA_VCPU: _from_botocore("ComputeQuotaResourceConfig.VCpu", "sagemaker", "VCpuAmount"),
    QUOTA_MEMORY_GIB: _from_botocore("ComputeQuotaResourceConfig.MemoryInGiB", "sagemaker", "MemoryInGiBAmount"),
    QUOTA_PARTITION_COUNT: _from_botocore("AcceleratorPartitionConfig.Count", "sagemaker",
                                          "AcceleratorPartitionConfigCountInteger"),
    ABSOLUTE_BORROW_LIMITS: _from_botocore("ResourceSharingConfig.AbsoluteBorrowLimits (items)", "sagemaker",
                                           "AbsoluteBorrowLimitResourceList"),
    PRIORITY_WEIGHT: _from_botocore("PriorityClass.Weight", "sagemaker", "PriorityWeight",
                                    note=f"AWS docs agree (0-100), {API}/API_PriorityClass.html"),
    PRIORITY_CLASSES: _from_botocore(
        "SchedulerConfig.PriorityClasses (items)", "sagemaker", "PriorityClassList", min_=1,
        note="at least 1: hypergov (projects and workload classes name the priority classes they may use)"),
    PRIORITY_CLASS_NAME: Limit(
        "PriorityClass.Name", 1, None,
        "botocore model: sagemaker ClusterSchedulerPriorityClassName; a pattern (so at least 1 character) and no "
        "maximum length (AWS docs: the same)"),
    NAMESPACE: Limit("Kubernetes Namespace metadata.name", 1, 63,
                     f"Kubernetes docs: namespace names are RFC 1123 DNS labels of at most 63 characters, {K8S_NAMES}"),
    LABEL_VALUE: Limit("Kubernetes metadata.labels value", 0, 63,
                       f"Kubernetes docs: 'Valid label value: must be 63 characters or less (can be empty)', "
                       f"{K8S_LABELS}"),
    OBJECT_NAME: Limit("Kubernetes metadata.name (DNS subdomain)", 1, 253,
                       f"Kubernetes docs: a DNS subdomain name must 'contain no more than 253 characters', "
                       f"{K8S_SUBDOMAIN}"),
    COMPUTE_QUOTA_NAME: _from_botocore("CreateComputeQuota.Name", "sagemaker", "EntityName"),
    SCHEDULER_CONFIG_NAME: _from_botocore("CreateClusterSchedulerConfig.Name", "sagemaker", "EntityName"),
    ROLE_NAME: _from_botocore("CreateRole.RoleName", "iam", "roleNameType"),
    ROLE_POLICY_NAME: _from_botocore("PutRolePolicy.PolicyName", "iam", "policyNameType"),
    BUDGET_NAME: _from_botocore("Budget.BudgetName", "budgets", "BudgetName"),
    PERMISSION_SET_NAME: _from_botocore("CreatePermissionSet.Name", "sso-admin", "PermissionSetName"),
    INSTANCE_GROUPS: _from_botocore(
        "CreateCluster.InstanceGroups (items)", "sagemaker", "ClusterInstanceGroupSpecifications",
        note=f"AWS docs agree (1-100 instance groups), {API}/API_CreateCluster.html"),
    GROUP_INSTANCE_COUNT: _from_botocore("ClusterInstanceGroupSpecification.InstanceCount", "sagemaker",
                                         "ClusterInstanceCount"),
    GROUP_THREADS_PER_CORE: _from_botocore("ClusterInstanceGroupSpecification.ThreadsPerCore", "sagemaker",
                                           "ClusterThreadsPerCore"),
    GROUP_VOLUME_GB: _from_botocore("ClusterEbsVolumeConfig.VolumeSizeInGB", "sagemaker", "ClusterEbsVolumeSizeInGB"),
    TAGS_PER_RESOURCE: _from_botocore("CreateComputeQuota.Tags (items)", "sagemaker", "TagList"),
    TAG_VALUE: _from_botocore("Tag.Value", "sagemaker", "TagValue"),
}
"""Bounds of model fields not listed here are hypergov's own (a budget, a cluster's capacity,
accelerators per instance, GPUs per job): they are not sent to AWS as such. The bound of a name in
the tree (a team, a priority class, a cluster, the org) is not a row: it follows from the places its
derived names are written (`hypergov.rules.derived_names.input_bound`)."""


def limit_range(key: str) -> Interval:
    """`Annotated[int, limit_range(BORROW_LIMIT)]`: a numeric field bounded as the table says."""
    entry = LIMITS[key]
    return Interval(ge=entry.min, le=entry.max)


def limit_items(key: str) -> Len:
    """`Annotated[list[X], limit_items(PRIORITY_CLASSES)]`: a list or mapping bounded in its number of items."""
    entry = LIMITS[key]
    return Len(min_length=entry.min or 0, max_length=entry.max)


def limit_max(key: str) -> int:
    """The upper bound of a name's length (for the identity rules)."""
    bound = LIMITS[key].max
    assert bound is not None, f"{key} has no documented maximum"
    return bound
