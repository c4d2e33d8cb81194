"""HyperPod task-governance objects of a stack (compute quotas, the cluster scheduler config):
no Terraform provider has them, so the terraform engine plans and applies them through the boto3
driver in `engines.hyperpod.driver` and reports them in the same Plan structure.

`desired_objects` reads them out of a captured graph (pure); `HyperPodExecutor` observes the live
objects, decides with the driver's `plan_change`, and applies with `apply_change`. Objects the
stack no longer declares are planned for deletion when they are still live: those its inventory
names (`HyperPodRef`s: what it owned after its last apply; for a stack that left the tree, all
of them) and the quotas named `<team>-on-<cluster>` on its cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engines.hyperpod import driver
from engines.outcomes import Failure, classify
from engines.plan import Action, AttributeChange, ResourceChange

KINDS: dict[str, driver.Kind] = {k.noun: k for k in (driver.SCHEDULER_CONFIG, driver.COMPUTE_QUOTA)}
COMPUTE_QUOTA_TYPE = "aws-native:sagemaker:ComputeQuota"
SCHEDULER_CONFIG_TYPE = "pulumi-python:dynamic/hyperpod:ClusterSchedulerConfig"
_ACTIONS: dict[str, Action] = {"create": Action.CREATE, "update": Action.UPDATE, "replace": Action.REPLACE,
                               "delete": Action.DELETE, "none": Action.NOOP}


@dataclass(frozen=True)
class HyperPodObject:
    kind: driver.Kind
    name: str
    cluster_arn: str
    request: Mapping[str, Any]
    tags: Mapping[str, str]

    @property
    def region(self) -> str:
        return self.cluster_arn.split(":")[3]

    @property
    def account(self) -> str:
        return self.cluster_arn.split(":")[4]

    @property
    def address(self) -> str:
        return driver.address(self.kind, self.name)


def _pascal(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k[:1].upper() + k[1:]: _pascal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_pascal(v) for v in value]
    return value


def desired_objects(resources: Iterable[Any]) -> list[HyperPodObject]:
    """Compute quotas (pulumi-aws-native inputs, camelCase) and scheduler configs (the dynamic
    resource's request) of a graph, as SageMaker API requests."""
    found: list[HyperPodObject] = []
    for res in resources:
        if res.type == COMPUTE_QUOTA_TYPE:
            inputs = dict(res.inputs)
            tags = {t["key"]: t["value"] for t in inputs.pop("tags", [])}
            request = _pascal(inputs)
            found.append(HyperPodObject(driver.COMPUTE_QUOTA, request["Name"], request["ClusterArn"], request, tags))
        elif res.type == SCHEDULER_CONFIG_TYPE:
            request = dict(res.inputs["request"])
            found.append(HyperPodObject(driver.SCHEDULER_CONFIG, request["Name"], request["ClusterArn"], request,
                                        dict(res.inputs.get("tags") or {})))
    return sorted(found, key=lambda o: o.address)


@dataclass(frozen=True)
class HyperPodRef:
    """The identity of a HyperPod object, as a stack's inventory records it."""

    kind: str  # the driver Kind's noun: ClusterSchedulerConfig | ComputeQuota
    name: str
    cluster_arn: str


@dataclass(frozen=True)
class PlannedObject:
    obj: HyperPodObject | None
    kind: driver.Kind
    name: str
    cluster_arn: str
    observed: driver.Observed | None
    change: driver.Change

    @property
    def ref(self) -> HyperPodRef:
        return HyperPodRef(self.kind.noun, self.name, self.cluster_arn)


ClientFor = Callable[[str, str], driver.SageMakerClient]  # (account, region) -> SageMaker client


@dataclass
class HyperPodExecutor:
    client_for: ClientFor

    def plan(self, desired: Sequence[HyperPodObject], *, owned_suffixes: Mapping[str, str],
             inventoried: Iterable[HyperPodRef] = ()) -> list[PlannedObject]:
        """Decide per object; `owned_suffixes` maps a cluster ARN to the name suffix hypergov
        gives its compute quotas there (`-on-<cluster>`), to find quotas no longer declared;
        every `inventoried` object not declared any more is deleted if it is still live."""
        planned: list[PlannedObject] = []
        listed: dict[tuple[str, str], dict[str, str]] = {}  # (noun, cluster ARN) -> live name -> id
        for obj in desired:
            client = self.client_for(obj.account, obj.region)
            if len(desired) == 1:  # one object: found by name (the list filtered to it)
                observed = driver.observe(client, obj.kind, name=obj.name, cluster_arn=obj.cluster_arn)
            else:  # a cluster's objects: its objects of the kind listed once, not once per object
                key = (obj.kind.noun, obj.cluster_arn)
                if key not in listed:
                    listed[key] = driver.live_ids(client, obj.kind, cluster_arn=obj.cluster_arn)
                found = listed[key].get(obj.name)
                observed = driver.describe(client, obj.kind, found) if found is not None else None
            change = driver.plan_change(obj.kind, desired=obj.request, desired_tags=obj.tags, observed=observed)
            planned.append(PlannedObject(obj, obj.kind, obj.name, obj.cluster_arn, observed, change))
        wanted = {(o.kind.noun, o.name) for o in desired}
        for cluster_arn, suffix in sorted(owned_suffixes.items()):
            _, _, _, region, account, _ = cluster_arn.split(":", 5)
            client = self.client_for(account, region)
            for name in _live_quota_names(client, cluster_arn, suffix):
                if ("ComputeQuota", name) in wanted:
                    continue
                observed = driver.observe(client, driver.COMPUTE_QUOTA, name=name, cluster_arn=cluster_arn)
                if observed is not None:
                    planned.append(PlannedObject(None, driver.COMPUTE_QUOTA, name, cluster_arn, observed,
                                                 driver.Change("delete")))
        seen = {p.ref for p in planned}
        # Quotas before the scheduler config: the reverse of the order they were created in.
        for ref in sorted(set(inventoried) - seen, key=lambda r: (r.kind != "ComputeQuota", r.cluster_arn, r.name)):
            kind = KINDS[ref.kind]
            _, _, _, region, account, _ = ref.cluster_arn.split(":", 5)
            observed = driver.observe(self.client_for(account, region), kind, name=ref.name,
                                      cluster_arn=ref.cluster_arn)
            if observed is not None:  # gone already (deleted or Deleting): nothing to do
                planned.append(PlannedObject(None, kind, ref.name, ref.cluster_arn, observed, driver.Change("delete")))
        return planned

    def apply(self, planned: Sequence[PlannedObject]) -> list[tuple[PlannedObject, Failure | None]]:
        """Carry out each decision; returns (object, its classified failure or None)."""
        results: list[tuple[PlannedObject, Failure | None]] = []
        for item in planned:
            if item.change.action == "none":
                continue
            _, _, _, region, account, _ = item.cluster_arn.split(":", 5)
            try:
                driver.apply_change(self.client_for(account, region), item.kind, change=item.change,
                                    desired=item.obj.request if item.obj else None,
                                    desired_tags=item.obj.tags if item.obj else {}, observed=item.observed)
                results.append((item, None))
            except Exception as exc:  # every failure is reported per object
                results.append((item, classify(exc)))
        return results


def _live_quota_names(client: driver.SageMakerClient, cluster_arn: str, suffix: str) -> list[str]:
    names: list[str] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"ClusterArn": cluster_arn, "NameContains": suffix.strip("-")}
        if token:
            kwargs["NextToken"] = token
        page = client.list_compute_quotas(**kwargs)
        names += [s["Name"] for s in page.get("ComputeQuotaSummaries", [])
                  if s.get("Name", "").endswith(suffix) and s.get("Status") not in ("Deleted", "Deleting")]
        token = page.get("NextToken")
        if not token:
            return sorted(set(names))


def to_change(item: PlannedObject) -> ResourceChange:
    action = _ACTIONS[item.change.action]
    before = item.observed.fields if item.observed else {}
    after = item.obj.request if item.obj else {}
    attributes = tuple(AttributeChange(path=p, before=driver.value_at(before, p), after=driver.value_at(after, p))
                       for p in item.change.changed) if action in (Action.UPDATE, Action.REPLACE) else ()
    if item.change.tags_to_set or item.change.tags_to_remove:
        attributes += (AttributeChange(path="Tags", before=item.observed.tags if item.observed else {},
                                       after=dict(item.obj.tags) if item.obj else {}),)
    return ResourceChange(address=driver.address(item.kind, item.name), type=driver.resource_type(item.kind),
                          name=item.name, action=action, executor="hyperpod", attributes=attributes)
