"""A small boto3 driver for HyperPod task governance objects: ClusterSchedulerConfig and
ComputeQuota. No Terraform provider has them and pulumi-aws-native has no scheduler config, so
both the Pulumi dynamic provider and the terraform engine run them through this driver.

It works in the decide-then-act style: `observe` reads the live object (by name, on its cluster),
`plan_change` compares it with the desired request without any I/O, and `apply_change` carries
the decision out. The desired state is the API's own request shape (CamelCase keys), so what is
compared is exactly what would be sent. Only keys the desired request sets are compared: SageMaker
fills in others (e.g. vCPU and memory next to an instance count), and those are not drift.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Action = Literal["create", "update", "replace", "delete", "none"]
GONE = frozenset({"Deleted", "Deleting"})


class SageMakerClient(Protocol):
    """The boto3 SageMaker client operations the driver calls (boto3.client("sagemaker") fits)."""

    def list_cluster_scheduler_configs(self, **kwargs: Any) -> dict[str, Any]: ...
    def describe_cluster_scheduler_config(self, **kwargs: Any) -> dict[str, Any]: ...
    def create_cluster_scheduler_config(self, **kwargs: Any) -> dict[str, Any]: ...
    def update_cluster_scheduler_config(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_cluster_scheduler_config(self, **kwargs: Any) -> dict[str, Any]: ...
    def list_compute_quotas(self, **kwargs: Any) -> dict[str, Any]: ...
    def describe_compute_quota(self, **kwargs: Any) -> dict[str, Any]: ...
    def create_compute_quota(self, **kwargs: Any) -> dict[str, Any]: ...
    def update_compute_quota(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_compute_quota(self, **kwargs: Any) -> dict[str, Any]: ...
    def add_tags(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_tags(self, **kwargs: Any) -> dict[str, Any]: ...
    def list_tags(self, **kwargs: Any) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Kind:
    """How one object type maps onto the SageMaker API."""

    noun: str  # ClusterSchedulerConfig | ComputeQuota
    id_key: str
    arn_key: str
    list_op: str
    list_key: str
    updatable: tuple[str, ...]  # request keys UpdateX accepts
    create_only: tuple[str, ...]  # dotted request paths whose change needs a new object
    sorted_lists: Mapping[str, str] = field(default_factory=dict)  # list key -> sort member
    # Dotted paths of lists whose absence means "empty": compared as [] when a side leaves them
    # out, so a list added out of band is drift and a request without one is not.
    empty_when_absent: tuple[str, ...] = ()

    def op(self, verb: str) -> str:
        return f"{verb}_{_snake(self.noun)}"


SCHEDULER_CONFIG = Kind(
    noun="ClusterSchedulerConfig", id_key="ClusterSchedulerConfigId", arn_key="ClusterSchedulerConfigArn",
    list_op="list_cluster_scheduler_configs", list_key="ClusterSchedulerConfigSummaries",
    updatable=("SchedulerConfig", "Description"), create_only=("ClusterArn",),
    sorted_lists={"PriorityClasses": "Name"})
COMPUTE_QUOTA = Kind(
    noun="ComputeQuota", id_key="ComputeQuotaId", arn_key="ComputeQuotaArn",
    list_op="list_compute_quotas", list_key="ComputeQuotaSummaries",
    updatable=("ComputeQuotaConfig", "ComputeQuotaTarget", "ActivationState", "Description"),
    create_only=("ClusterArn", "ComputeQuotaTarget.TeamName"),
    sorted_lists={"ComputeQuotaResources": "InstanceType", "AbsoluteBorrowLimits": "InstanceType"},
    empty_when_absent=("ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits",))


@dataclass(frozen=True)
class Observed:
    """A live object: its id, ARN, version, the request-shaped fields, and its tags."""

    id: str
    arn: str
    version: int | None
    fields: dict[str, Any]
    tags: dict[str, str]


@dataclass(frozen=True)
class Change:
    action: Action
    changed: tuple[str, ...] = ()  # dotted paths of the fields that differ
    tags_to_set: dict[str, str] = field(default_factory=dict)
    tags_to_remove: tuple[str, ...] = ()


def address(kind: Kind, name: str) -> str:
    """How plans and drift reports name a HyperPod object."""
    return f"hyperpod:{kind.noun}:{name}"


def resource_type(kind: Kind) -> str:
    return f"sagemaker:{kind.noun}"


def value_at(value: Any, path: str) -> Any:
    """The value at a dotted path as `differences` spells it (`a.b[0].c`); None where it has none."""
    current = value
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            index = int(part[1:-1])
            current = current[index] if isinstance(current, list) and index < len(current) else None
        else:
            current = current.get(part) if isinstance(current, Mapping) else None
    return current


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def normalize(kind: Kind, value: Any) -> Any:
    """Order-insensitive lists sorted by their key member, so reordering is not a change; lists
    whose absence means empty present as [] (where their parent is)."""
    found = _sorted_lists(kind, value)
    for path in kind.empty_when_absent:
        *parents, last = path.split(".")
        parent = found
        for part in parents:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and parent.get(last) is None:
            parent[last] = []
    return found


def _sorted_lists(kind: Kind, value: Any) -> Any:
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            v = _sorted_lists(kind, v)
            if k in kind.sorted_lists and isinstance(v, list):
                v = sorted(v, key=lambda item: str(item.get(kind.sorted_lists[k], "")))
            out[k] = v
        return out
    if isinstance(value, list):
        return [_sorted_lists(kind, v) for v in value]
    return value


def differences(desired: Any, observed: Any, path: str = "") -> list[str]:
    """Dotted paths where `observed` does not carry what `desired` sets (desired-keys only)."""
    if isinstance(desired, Mapping):
        if not isinstance(observed, Mapping):
            return [path or "."]
        found: list[str] = []
        for key, value in desired.items():
            found += differences(value, observed.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(desired, list):
        if not isinstance(observed, list) or len(desired) != len(observed):
            return [path]
        return [p for i, (d, o) in enumerate(zip(desired, observed, strict=True))
                for p in differences(d, o, f"{path}[{i}]")]
    return [] if desired == observed else [path]


def plan_change(kind: Kind, *, desired: Mapping[str, Any] | None, desired_tags: Mapping[str, str],
                observed: Observed | None) -> Change:
    """What must happen to turn `observed` into `desired` (None: the object must not exist)."""
    if desired is None:
        return Change("delete") if observed is not None else Change("none")
    if observed is None:
        return Change("create", changed=tuple(sorted(desired)))
    want = normalize(kind, _comparable(kind, desired))
    have = normalize(kind, observed.fields)
    changed = tuple(differences(want, have))
    tags_to_set = {k: v for k, v in desired_tags.items() if observed.tags.get(k) != v}
    tags_to_remove = tuple(sorted(k for k in observed.tags if k not in desired_tags and not k.startswith("aws:")))
    if any(p == c or p.startswith((f"{c}.", f"{c}[")) for p in changed for c in kind.create_only):
        return Change("replace", changed=changed)
    if changed or tags_to_set or tags_to_remove:
        return Change("update", changed=changed, tags_to_set=tags_to_set, tags_to_remove=tags_to_remove)
    return Change("none")


def _comparable(kind: Kind, request: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k not in ("Name", "Tags")}


LIST_PAGE = 100  # the most ListComputeQuotas and ListClusterSchedulerConfigs return a page (MaxResults)


def _live_summaries(client: SageMakerClient, kind: Kind, **filters: Any) -> Iterator[Mapping[str, Any]]:
    """The List summaries of `kind` matching `filters`, page after page, deleted ones left out."""
    token: str | None = None
    while True:
        page = getattr(client, kind.list_op)(**filters, **({"NextToken": token} if token else {}))
        yield from (s for s in page.get(kind.list_key, []) if s.get("Status") not in GONE)
        token = page.get("NextToken")
        if not token:
            return


def observe(client: SageMakerClient, kind: Kind, *, name: str, cluster_arn: str) -> Observed | None:
    """The live object named `name` on the cluster, or None (deleted ones count as absent)."""
    for summary in _live_summaries(client, kind, NameContains=name, ClusterArn=cluster_arn):
        if summary.get("Name") == name:
            return describe(client, kind, summary[kind.id_key])
    return None


def live_ids(client: SageMakerClient, kind: Kind, *, cluster_arn: str) -> dict[str, str]:
    """Every live object of `kind` on the cluster, name -> id, in one paginated listing (deleted
    ones left out): what `observe` finds one name at a time, for a whole cluster."""
    found: dict[str, str] = {}
    for summary in _live_summaries(client, kind, ClusterArn=cluster_arn, MaxResults=LIST_PAGE):
        found.setdefault(str(summary.get("Name")), str(summary[kind.id_key]))
    return found


def describe(client: SageMakerClient, kind: Kind, object_id: str) -> Observed:
    found = getattr(client, kind.op("describe"))(**{kind.id_key: object_id})
    fields = {k: found[k] for k in (*kind.updatable, "ClusterArn") if k in found}
    tags = client.list_tags(ResourceArn=found[kind.arn_key]).get("Tags", [])
    version_key = f"{kind.noun}Version"
    return Observed(id=found[kind.id_key], arn=found[kind.arn_key], version=found.get(version_key),
                    fields=fields, tags={t["Key"]: t.get("Value", "") for t in tags})


def apply_change(client: SageMakerClient, kind: Kind, *, change: Change, desired: Mapping[str, Any] | None,
                 desired_tags: Mapping[str, str], observed: Observed | None) -> str | None:
    """Carry out `change`; returns the id of the object that now exists (None after a delete)."""
    if change.action == "none":
        return observed.id if observed else None
    if change.action in ("delete", "replace") and observed is not None:
        getattr(client, kind.op("delete"))(**{kind.id_key: observed.id})
        if change.action == "delete":
            return None
    if change.action in ("create", "replace"):
        assert desired is not None
        request = dict(desired)
        if desired_tags:
            request["Tags"] = [{"Key": k, "Value": v} for k, v in sorted(desired_tags.items())]
        created = getattr(client, kind.op("create"))(**request)
        return str(created[kind.id_key])
    assert observed is not None and desired is not None
    if change.changed:
        request = {k: v for k, v in desired.items() if k in kind.updatable}
        request[kind.id_key] = observed.id
        if observed.version is not None:
            request["TargetVersion"] = observed.version
        getattr(client, kind.op("update"))(**request)
    if change.tags_to_set:
        client.add_tags(ResourceArn=observed.arn,
                        Tags=[{"Key": k, "Value": v} for k, v in sorted(change.tags_to_set.items())])
    if change.tags_to_remove:
        client.delete_tags(ResourceArn=observed.arn, TagKeys=list(change.tags_to_remove))
    return observed.id
