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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from engines.hyperpod import driver
from engines.outcomes import Failure, classify
from engines.plan import Action, AttributeChange, ResourceChange

KINDS: dict[str, driver.Kind] = {k.noun: k for k in (driver.SCHEDULER_CONFIG, driver.COMPUTE_QUOTA)}
COMPUTE_QUOTA_TYPE = "aws-native:sagemaker:ComputeQuota"
SCHEDULER_CONFIG_TYPE = "pulumi-python:dynamic/hyperpod:ClusterSchedulerConfig"
OBSERVE_CONCURRENCY = 8  # describe calls in flight per stack plan (SageMaker's clients are thread-safe)
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
        every `inventoried` object not declared any more is deleted if it is still live.
        Each cluster's objects of a kind are listed once; the live ones are described side by side."""
        inventoried = list(inventoried)
        wanted_places = {(o.kind.noun, o.cluster_arn) for o in desired} | {
            (driver.COMPUTE_QUOTA.noun, arn) for arn in owned_suffixes} | {(r.kind, r.cluster_arn) for r in inventoried}
        live = {place: driver.live_ids(self._client(place[1]), KINDS[place[0]], cluster_arn=place[1])
                for place in sorted(wanted_places)}
        wanted = {(o.kind.noun, o.name) for o in desired}
        gone: list[tuple[driver.Kind, str, str]] = [  # (kind, name, cluster) of live objects no longer declared
            (driver.COMPUTE_QUOTA, name, arn) for arn, suffix in sorted(owned_suffixes.items())
            for name in sorted(live[(driver.COMPUTE_QUOTA.noun, arn)])
            if name.endswith(suffix) and (driver.COMPUTE_QUOTA.noun, name) not in wanted]
        named = {(k.noun, n, a) for k, n, a in gone} | {(o.kind.noun, o.name, o.cluster_arn) for o in desired}
        # Quotas before the scheduler config: the reverse of the order they were created in.
        gone += [(KINDS[r.kind], r.name, r.cluster_arn) for r in sorted(
            {r for r in inventoried if (r.kind, r.name, r.cluster_arn) not in named},
            key=lambda r: (r.kind != "ComputeQuota", r.cluster_arn, r.name))]

        def observed(kind: driver.Kind, name: str, cluster_arn: str) -> driver.Observed | None:
            object_id = live[(kind.noun, cluster_arn)].get(name)
            return None if object_id is None else driver.describe(self._client(cluster_arn), kind, object_id)

        with ThreadPoolExecutor(max_workers=OBSERVE_CONCURRENCY) as pool:
            declared = list(pool.map(lambda o: observed(o.kind, o.name, o.cluster_arn), desired))
            left = list(pool.map(lambda g: observed(*g), gone))
        planned = [PlannedObject(o, o.kind, o.name, o.cluster_arn, seen,
                                 driver.plan_change(o.kind, desired=o.request, desired_tags=o.tags, observed=seen))
                   for o, seen in zip(desired, declared, strict=True)]
        # A live object no longer declared is deleted; one gone already (deleted or Deleting) needs nothing.
        planned += [PlannedObject(None, kind, name, arn, seen, driver.Change("delete"))
                    for (kind, name, arn), seen in zip(gone, left, strict=True) if seen is not None]
        return planned

    def _client(self, cluster_arn: str) -> driver.SageMakerClient:
        _, _, _, region, account, _ = cluster_arn.split(":", 5)
        return self.client_for(account, region)

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
